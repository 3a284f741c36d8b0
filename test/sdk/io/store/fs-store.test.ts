import { promises as fsp } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { FsStore } from "../../../../src/sdk/io/store/fs-store.js";
import { MemoryStore } from "../../../../src/sdk/io/store/memory-store.js";
import { fixture } from "../../../fixtures.js";

describe("FsStore", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), "tessera-fs-"));
  });
  afterAll(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it("reads a real v2 store with zarrita", async () => {
    const store = new FsStore(fixture("zarrita-fixtures/v2/data.zarr"));
    const arr = await zarr.open(zarr.root(store).resolve("2d.chunked.i2"), { kind: "array" });
    const chunk = await zarr.get(arr);
    expect(chunk.shape).toEqual([2, 2]);
    expect(Array.from(chunk.data as Int16Array)).toEqual([1, 2, 3, 4]);
    expect(await store.get("/no/such/key")).toBeUndefined();
    // a directory is not a value
    expect(await store.get("/2d.chunked.i2")).toBeUndefined();
    const zarray = (await store.get("/1d.contiguous.raw.i2/.zarray"))!;
    expect(await store.getRange("/1d.contiguous.raw.i2/.zarray", { offset: 0, length: 5 })).toEqual(
      zarray.subarray(0, 5),
    );
    expect(await store.getRange("/1d.contiguous.raw.i2/.zarray", { suffixLength: 3 })).toEqual(
      zarray.subarray(zarray.length - 3),
    );
    expect(await store.getRange("/nope", { suffixLength: 3 })).toBeUndefined();
  });

  it("lists files with their sizes on disk", async () => {
    const store = new FsStore(fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr"));
    const all = await store.list();
    expect(all.find((e) => e.key === "zmetadata")?.size).toBe(
      (await fsp.stat(fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr/zmetadata"))).size,
    );
    const points = await store.list("points/");
    expect(points.length).toBeGreaterThan(0);
    expect(points.every((e) => e.key.startsWith("points/"))).toBe(true);
    expect(points.map((e) => e.key)).toContain("points/blobs_points/.zattrs");
    expect(all.map((e) => e.key)).toEqual([...all.map((e) => e.key)].sort());
  });

  it("writes with mkdir -p, lists what it wrote, and rejects keys escaping the root", async () => {
    const store = new FsStore(path.join(dir, "out.zarr"));
    await store.set("/a/b/c/0", new Uint8Array([1, 2, 3]));
    await store.set("/zarr.json", new TextEncoder().encode("{}"));
    expect(await store.get("/a/b/c/0")).toEqual(new Uint8Array([1, 2, 3]));
    expect(await store.list()).toEqual([
      { key: "a/b/c/0", size: 3 },
      { key: "zarr.json", size: 2 },
    ]);
    expect(await store.list("a/b/")).toEqual([{ key: "a/b/c/0", size: 3 }]);
    await expect(store.get("/../secret")).rejects.toThrow(/invalid store key/);
    await expect(store.set("/a/../../x", new Uint8Array(1))).rejects.toThrow(/invalid store key/);
    await expect(store.get("/a/./b")).rejects.toThrow(/invalid store key/);
  });
});

describe("MemoryStore", () => {
  it("stores, slices and lists", async () => {
    const store = new MemoryStore();
    await store.set("/x/zarr.json", new Uint8Array([9, 8, 7]));
    await store.set("/zarr.json", new Uint8Array([1]));
    expect(await store.get("/x/zarr.json")).toEqual(new Uint8Array([9, 8, 7]));
    expect(await store.getRange("/x/zarr.json", { offset: 1, length: 5 })).toEqual(new Uint8Array([8, 7]));
    expect(await store.getRange("/x/zarr.json", { suffixLength: 1 })).toEqual(new Uint8Array([7]));
    expect(await store.list()).toEqual([
      { key: "x/zarr.json", size: 3 },
      { key: "zarr.json", size: 1 },
    ]);
    expect(await store.get("/nope")).toBeUndefined();
  });

  it("works as a zarrita write target", async () => {
    const store = new MemoryStore();
    const root = await zarr.create(store, { attributes: { hello: "world" } });
    const arr = await zarr.create(root.resolve("values"), { shape: [4], chunkShape: [2], dtype: "int32" });
    await zarr.set(arr, null, { data: new Int32Array([5, 6, 7, 8]), shape: [4], stride: [1] });
    const keys = (await store.list()).map((e) => e.key);
    expect(keys).toEqual(["values/c/0", "values/c/1", "values/zarr.json", "zarr.json"]);
    const back = await zarr.open(zarr.root(store).resolve("values"), { kind: "array" });
    expect(Array.from((await zarr.get(back)).data as Int32Array)).toEqual([5, 6, 7, 8]);
  });
});

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import { afterAll, describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import {
  chooseChunkShape,
  readZarrArray,
  readZarrScalar,
  readZarrStrings,
  toIndexArray,
  writeZarrArray,
} from "../../../../src/sdk/io/zarr/arrays.js";
import { fixture } from "../../../fixtures.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "tessera-zarr-arrays-"));
  dirs.push(d);
  return new FileSystemStore(d);
};
const at = (store: FileSystemStore, p: string) => new zarr.Location(store, `/${p}`);

describe("chooseChunkShape", () => {
  it("keeps trailing axes whole and splits the first", () => {
    expect(chooseChunkShape([10000, 2000], 4, 2 * 1024 * 1024)).toEqual([262, 2000]);
    expect(chooseChunkShape([100], 8)).toEqual([100]);
    expect(chooseChunkShape([0], 4)).toEqual([1]);
    expect(chooseChunkShape([], 4)).toEqual([]);
    // a single row bigger than the target splits the second axis too
    expect(chooseChunkShape([3, 10_000_000], 4, 1024 * 1024)).toEqual([1, 262144]);
  });
});

describe("toIndexArray", () => {
  it("int64 that fits → Int32Array; too big → Float64Array", () => {
    const small = toIndexArray(BigInt64Array.of(0n, 5n, 2147483647n));
    expect(small).toBeInstanceOf(Int32Array);
    expect([...small]).toEqual([0, 5, 2147483647]);
    const big = toIndexArray(BigInt64Array.of(0n, 3000000000n));
    expect(big).toBeInstanceOf(Float64Array);
    expect([...big]).toEqual([0, 3000000000]);
    expect(toIndexArray(Uint32Array.of(1, 2))).toBeInstanceOf(Int32Array);
  });
});

describe("reading fixtures", () => {
  it("v2 fixed-width <U scalars (spatialdata_attrs) and vlen strings", async () => {
    const store = new FileSystemStore(fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr"));
    const region = await zarr.open(at(store, "tables/table/uns/spatialdata_attrs/region"), { kind: "array" });
    expect(region.dtype).toBe("v2:U12");
    expect(await readZarrScalar(region)).toBe("blobs_labels");
    const idx = await zarr.open(at(store, "tables/table/var/_index"), { kind: "array" });
    expect((await readZarrStrings(idx)).length).toBe(3);
  });
  it("v3 numeric into SharedArrayBuffer, with row ranges", async () => {
    const store = new FileSystemStore(fixture("vitessce-anndata-zarr/anndata-0.12/anndata-dense.zarr"));
    const X = await zarr.open(at(store, "X"), { kind: "array" });
    const all = await readZarrArray(X);
    expect(all.kind).toBe("numeric");
    if (all.kind !== "numeric") return;
    expect(all.shape).toEqual([3, 15]);
    expect(all.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    const rows = await readZarrArray(X, { start: 1, stop: 3 });
    expect(rows.shape).toEqual([2, 15]);
    const raw = await zarr.open(at(store, "raw"), { kind: "array" });
    expect(await readZarrScalar(raw)).toBe(false);
  });
});

describe("writeZarrArray", () => {
  it("writes v3 arrays chunk by chunk and reads them back", async () => {
    const store = temp();
    await zarr.create(store, { attributes: {} });
    const n = 10_000;
    const data = Float32Array.from({ length: n * 3 }, (_, i) => i / 7);
    await writeZarrArray(
      at(store, "m"),
      { dtype: "float32", shape: [n, 3], data },
      { chunkShape: [1000, 3] },
    );
    expect(readdirSync(join((store as unknown as { root: string }).root, "m/c")).length).toBe(10);
    const m = await readZarrArray(await zarr.open(at(store, "m"), { kind: "array" }));
    expect(m.kind === "numeric" && [...m.data]).toEqual([...data]);

    await writeZarrArray(
      at(store, "s"),
      { dtype: "string", shape: [5], values: ["a", "bé", null, "", "zz"] },
      { chunkShape: [2] },
    );
    expect(await readZarrStrings(await zarr.open(at(store, "s"), { kind: "array" }))).toEqual([
      "a",
      "bé",
      "",
      "",
      "zz",
    ]);

    await writeZarrArray(at(store, "b"), { dtype: "bool", shape: [3], data: Uint8Array.of(1, 0, 1) });
    const b = await readZarrArray(await zarr.open(at(store, "b"), { kind: "array" }));
    expect(b.kind === "numeric" && b.dtype).toBe("bool");
    expect(b.kind === "numeric" && [...b.data]).toEqual([1, 0, 1]);

    await writeZarrArray(
      at(store, "i"),
      { dtype: "int64", shape: [], data: BigInt64Array.of(-7n) },
      { attributes: { x: 1 } },
    );
    const i = await zarr.open(at(store, "i"), { kind: "array" });
    expect(i.attrs).toEqual({ x: 1 });
    expect(await readZarrScalar(i)).toBe(-7);

    await writeZarrArray(at(store, "e"), { dtype: "int32", shape: [0], data: new Int32Array(0) });
    const e = await readZarrArray(await zarr.open(at(store, "e"), { kind: "array" }));
    expect(e.shape).toEqual([0]);

    await expect(
      writeZarrArray(at(store, "bad"), { dtype: "int32", shape: [4], data: new Int32Array(3) }),
    ).rejects.toThrow(/3 values do not fill shape \[4\]/);
  });
});

import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { FileRangeReader } from "../../../../src/sdk/io/store/file-range-reader.js";
import { FsStore } from "../../../../src/sdk/io/store/fs-store.js";
import { MemoryStore } from "../../../../src/sdk/io/store/memory-store.js";
import type { AbsolutePath, ReadableStore } from "../../../../src/sdk/io/store/types.js";
import { ZipStore } from "../../../../src/sdk/io/store/zip-store.js";
import {
  consolidateV3,
  indexChildren,
  readConsolidated,
  withConsolidated,
} from "../../../../src/sdk/io/zarr/consolidated.js";
import { fixture } from "../../../fixtures.js";

const BLOBS_03 = fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr");
const BLOBS_07 = fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr");
const dec = new TextDecoder();
const enc = new TextEncoder();

/** Wraps a store and records every key read from it. */
function counting(store: ReadableStore): { store: ReadableStore; keys: string[] } {
  const keys: string[] = [];
  return {
    keys,
    store: {
      location: store.location,
      get: (k: AbsolutePath, o) => {
        keys.push(k);
        return store.get(k, o);
      },
      getRange: (k: AbsolutePath, r, o) => {
        keys.push(k);
        return store.getRange!(k, r, o);
      },
    },
  };
}

describe("readConsolidated", () => {
  it("reads spatialdata's dot-less zmetadata (blobs 0.3, zarr v2)", async () => {
    const index = (await readConsolidated(new FsStore(BLOBS_03)))!;
    expect(index.format).toBe(2);
    expect(index.source).toBe("zmetadata");
    expect(index.nodes.size).toBe(31 + 23);
    expect(index.nodes.get("")?.attributes).toEqual({
      spatialdata_attrs: { spatialdata_software_version: "0.3.0", version: "0.1" },
    });
    const img = index.nodes.get("images/blobs_image/0")!;
    expect(img.kind).toBe("array");
    expect(img.zarrFormat).toBe(2);
    expect(img.array).toMatchObject({ shape: [3, 100, 100], dtype: "<f8", dimension_separator: "/" });
    expect(indexChildren(index, "images")).toEqual(["blobs_image", "blobs_multiscale_image"]);
    expect(indexChildren(index, "tables")).toEqual(["table", "table_points"]);
  });

  it("reads zarr v3 inline consolidated metadata (blobs 0.7)", async () => {
    const index = (await readConsolidated(new FsStore(BLOBS_07)))!;
    expect(index.format).toBe(3);
    expect(index.source).toBe("zarr.json");
    expect(index.nodes.size).toBe(54);
    expect([...index.nodes.values()].filter((n) => n.kind === "array").length).toBe(23);
    expect(index.nodes.get("")?.attributes).toEqual({
      spatialdata_attrs: { version: "0.2", spatialdata_software_version: "0.7.3" },
    });
    const s0 = index.nodes.get("images/blobs_image/s0")!;
    expect(s0.array).toMatchObject({ shape: [3, 100, 100], data_type: "float64" });
    expect((index.nodes.get("images/blobs_image")!.attributes.ome as { version: string }).version).toBe(
      "0.5-dev-spatialdata",
    );
    expect(indexChildren(index, "labels")).toEqual(["blobs_labels", "blobs_multiscale_labels"]);
  });

  it("reads .zmetadata (zarrita v2 fixture) and the v3 inline block inside the scanpy zip", async () => {
    const v2 = (await readConsolidated(new FsStore(fixture("zarrita-fixtures/v2/data.zarr"))))!;
    expect(v2.source).toBe(".zmetadata");
    expect(v2.nodes.size).toBe(2 + 32);
    expect(v2.nodes.get("my group with spaces")?.attributes).toEqual({
      description: "A group with spaces in the name",
    });

    const zip = await ZipStore.open(
      new FileRangeReader(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip")),
    );
    const sc = (await readConsolidated(zip))!;
    expect(sc.format).toBe(3);
    expect(sc.nodes.size).toBe(68);
    expect(sc.nodes.get("obs")?.attributes._index).toBe("index");
    expect(sc.nodes.get("X")?.array).toMatchObject({ shape: [700, 765], data_type: "float32" });
  });

  it("returns null for an unconsolidated v3 root, and reads a consolidated subgroup as a root", async () => {
    expect(await readConsolidated(new FsStore(fixture("zarrita-fixtures/v3/data.zarr")))).toBeNull();
    expect(await readConsolidated(new MemoryStore())).toBeNull();
    const sub = (await readConsolidated(new FsStore(fixture("zarrita-fixtures/v3/data.zarr/consolidated"))))!;
    expect(sub.nodes.get("")?.attributes).toEqual({ answer: 42 });
    expect([...sub.nodes.keys()].sort()).toEqual([
      "",
      "1d.chunked.i2",
      "2d.contiguous.i2",
      "nested",
      "nested/1d.i2",
    ]);
  });

  it("throws located errors for malformed consolidated metadata", async () => {
    const bad = new MemoryStore("mem://bad");
    await bad.set("/zmetadata", enc.encode("{not json"));
    await expect(readConsolidated(bad)).rejects.toThrow(/^mem:\/\/bad: zmetadata is not valid JSON/);
    const wrong = new MemoryStore("mem://wrong");
    await wrong.set("/.zmetadata", enc.encode('{"metadata": 3}'));
    await expect(readConsolidated(wrong)).rejects.toThrow(
      "mem://wrong: .zmetadata is not zarr consolidated metadata",
    );
  });
});

describe("withConsolidated", () => {
  it("answers every metadata key from the index: zarrita reads only chunks (v3)", async () => {
    const base = new FsStore(BLOBS_07);
    const index = (await readConsolidated(base))!;
    const { store, keys } = counting(base);
    const wrapped = withConsolidated(store, index);
    const labels = await zarr.open(zarr.root(wrapped).resolve("labels/blobs_labels/s0"), { kind: "array" });
    const lab = await zarr.get(labels, [50, zarr.slice(40, 45)]);
    expect(Array.from(lab.data as Int16Array)).toEqual([0, 0, 0, 1, 1]);
    const img = await zarr.open(zarr.root(wrapped).resolve("images/blobs_image/s0"), { kind: "array" });
    const px = await zarr.get(img, [0, 0, zarr.slice(0, 3)]);
    expect(Array.from(px.data as Float64Array)).toEqual([
      0.9543543938645033, 0.9543691765391226, 0.9543400224799302,
    ]);
    const group = await zarr.open(zarr.root(wrapped).resolve("images/blobs_image"), { kind: "group" });
    expect((group.attrs.ome as { version: string }).version).toBe("0.5-dev-spatialdata");
    // missing nodes are answered without I/O too
    await expect(zarr.open(zarr.root(wrapped).resolve("images/nope"))).rejects.toThrow();
    expect(keys).toEqual(["/labels/blobs_labels/s0/c/0/0", "/images/blobs_image/s0/c/0/0/0"]);
  });

  it("answers v2 metadata (zmetadata) the same way", async () => {
    const base = new FsStore(BLOBS_03);
    const { store, keys } = counting(base);
    const wrapped = withConsolidated(store, (await readConsolidated(base))!);
    const img = await zarr.open(zarr.root(wrapped).resolve("images/blobs_image/0"), { kind: "array" });
    expect(Array.from((await zarr.get(img, [0, 0, zarr.slice(0, 3)])).data as Float64Array)).toEqual([
      0.9543543938645033, 0.9543691765391226, 0.9543400224799302,
    ]);
    expect(keys).toEqual(["/images/blobs_image/0/0/0/0"]);
    const attrs = JSON.parse(dec.decode(await wrapped.get("/labels/blobs_labels/.zattrs")));
    expect(attrs.multiscales[0].datasets[0].path).toBe("0");
    expect(await wrapped.get("/labels/blobs_labels/zarr.json")).toBeUndefined();
    expect(keys.length).toBe(1);
  });

  it("falls through to the store for unknown nodes when not authoritative", async () => {
    const mem = new MemoryStore();
    await mem.set(
      "/zarr.json",
      enc.encode(
        '{"zarr_format":3,"node_type":"group","attributes":{},"consolidated_metadata":{"kind":"inline","must_understand":false,"metadata":{}}}',
      ),
    );
    await mem.set(
      "/late/zarr.json",
      enc.encode('{"zarr_format":3,"node_type":"group","attributes":{"late":true}}'),
    );
    const index = (await readConsolidated(mem))!;
    expect(await withConsolidated(mem, index).get("/late/zarr.json")).toBeUndefined();
    const loose = withConsolidated(mem, index, { authoritative: false });
    expect(JSON.parse(dec.decode(await loose.get("/late/zarr.json"))).attributes).toEqual({ late: true });
  });
});

describe("consolidateV3", () => {
  it("rebuilds exactly the consolidated metadata spatialdata 0.7.3 (zarr-python 3) wrote", async () => {
    const original = JSON.parse(await fsp.readFile(path.join(BLOBS_07, "zarr.json"), "utf8"));
    const mem = new MemoryStore();
    const fsStore = new FsStore(BLOBS_07);
    for (const { key } of await fsStore.list()) {
      if (!key.endsWith("zarr.json")) continue;
      const bytes = (await fsStore.get(`/${key}`))!;
      if (key === "zarr.json") {
        const { consolidated_metadata: _drop, ...root } = JSON.parse(dec.decode(bytes));
        await mem.set("/zarr.json", enc.encode(JSON.stringify(root)));
      } else {
        await mem.set(`/${key}`, bytes);
      }
    }
    const index = await consolidateV3(mem);
    expect(index.nodes.size).toBe(54);
    const first = (await mem.get("/zarr.json"))!;
    const rebuilt = JSON.parse(dec.decode(first));
    expect(rebuilt.consolidated_metadata.kind).toBe("inline");
    expect(rebuilt.consolidated_metadata.must_understand).toBe(false);
    expect(rebuilt.consolidated_metadata.metadata).toEqual(original.consolidated_metadata.metadata);
    expect(rebuilt.attributes).toEqual(original.attributes);
    const keys = Object.keys(rebuilt.consolidated_metadata.metadata);
    expect(keys).toEqual([...keys].sort());
    // idempotent and deterministic
    await consolidateV3(mem);
    expect(dec.decode(await mem.get("/zarr.json"))).toBe(dec.decode(first));
  });

  it("refuses a store without a v3 root group", async () => {
    const mem = new MemoryStore("mem://empty");
    await expect(consolidateV3(mem)).rejects.toThrow("mem://empty: no root zarr.json to consolidate into");
    await mem.set("/zarr.json", enc.encode('{"zarr_format":3,"node_type":"array"}'));
    await expect(consolidateV3(mem)).rejects.toThrow(/not a zarr v3 group/);
  });
});

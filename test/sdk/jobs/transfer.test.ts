import { describe, expect, it } from "vitest";
import { allocArray, type DenseArray, dense, type SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import type { ImageElement, RasterSource } from "../../../src/sdk/data/elements.js";
import { lazyMatrix } from "../../../src/sdk/data/lazy.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import { unsDict } from "../../../src/sdk/data/uns.js";
import { isPackedStrings, type PackedStrings } from "../../../src/sdk/jobs/strings.js";
import {
  isDetachedRaster,
  packResult,
  prepareForWorker,
  restoreInWorker,
  SHARE_THRESHOLD_BYTES,
  unpackResult,
} from "../../../src/sdk/jobs/transfer.js";
import { memoryRasterSource } from "../../../src/sdk/raster/memory-source.js";

const N = 20_000;

function image(name: string, source: RasterSource): ImageElement {
  return {
    kind: "image",
    name,
    transformations: { global: { type: "identity" } },
    axes: ["c", "y", "x"],
    channels: ["DAPI"],
    dtype: "uint16",
    levels: [
      { path: "0", shape: source.shape, chunks: source.chunks, dtype: "uint16", levelTransform: [], source },
    ],
  } as ImageElement;
}

function fixture() {
  let loads = 0;
  const xData = allocArray("float32", N * 4) as Float32Array;
  xData.set([1, 2, 3, 4]);
  const X = lazyMatrix({ format: "dense", dtype: "float32", shape: [N, 4] }, async () => {
    loads++;
    return dense(xData, [N, 4]);
  });
  const privateEmb = new Float64Array(N * 2).map((_, i) => i); // 320 KB, not shared
  const sharedCol = allocArray("float64", N) as Float64Array;
  const smallPrivate = new Float32Array(10);
  const table = makeTable({
    X,
    obs: dataFrame(
      Array.from({ length: N }, (_, i) => `c${i}`),
      { total: dense(sharedCol) },
    ),
    var: dataFrame(["g1", "g2", "g3", "g4"]),
    obsm: { spatial: dense(privateEmb, [N, 2]) },
    uns: unsDict({ small: dense(smallPrivate) }),
  });
  const pixels = dense(Uint16Array.from([7, 8, 9, 10]), [1, 2, 2], "uint16");
  const storeSource: RasterSource = {
    shape: [1, 2, 2],
    dtype: "uint16",
    chunks: [1, 2, 2],
    read: async () => pixels,
  };
  const sd = makeSpatialData({
    tables: { table },
    images: { mem: image("mem", memoryRasterSource(pixels)), store: image("store", storeSource) },
  });
  return { sd, privateEmb, sharedCol, smallPrivate, xData, loads: () => loads, storeSource };
}

describe("prepareForWorker", () => {
  it("loads lazy matrices, shares big private arrays once, keeps shared and small ones, detaches rasters", async () => {
    const f = fixture();
    const p = await prepareForWorker(f.sd);
    const t = p.tables.table!;
    // Lazy X read, same shared memory.
    expect(t.X?.kind).toBe("dense");
    expect((t.X as DenseArray).data).toBe(f.xData);
    // Big private array → a shared copy with the same values.
    const emb = (t.obsm.spatial as DenseArray).data as Float64Array;
    expect(emb).not.toBe(f.privateEmb);
    expect(emb.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(Array.from(emb.subarray(0, 5))).toEqual([0, 1, 2, 3, 4]);
    expect(emb.length).toBe(f.privateEmb.length);
    // Shared arrays and small private ones are passed as they are.
    expect((t.obs.columns.total as DenseArray).data).toBe(f.sharedCol);
    expect((t.uns.entries.small as DenseArray).data).toBe(f.smallPrivate);
    expect(f.smallPrivate.byteLength).toBeLessThan(SHARE_THRESHOLD_BYTES);
    // Unchanged branches are shared, not copied; the 20k obs names cross packed in one shared buffer.
    expect(t.var === f.sd.tables.table!.var).toBe(true);
    expect(t.obs.columns === f.sd.tables.table!.obs.columns).toBe(true);
    const names = t.obs.index as unknown as PackedStrings;
    expect(isPackedStrings(names)).toBe(true);
    expect(names.count).toBe(N);
    expect(names.backing.kind === "packed" && names.backing.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    // Rasters: markers, in-memory pixels kept.
    const memSrc = p.images.mem!.levels[0]!.source as unknown;
    const storeSrc = p.images.store!.levels[0]!.source as unknown;
    expect(isDetachedRaster(memSrc)).toBe(true);
    expect(isDetachedRaster(storeSrc)).toBe(true);
    expect((storeSrc as { array?: unknown }).array).toBeUndefined();
    // And the whole thing clones.
    expect(() => structuredClone(p)).not.toThrow();
  });

  it("never modifies the committed object, and reuses shared copies on the next job", async () => {
    const f = fixture();
    const before = f.sd.tables.table!;
    const p1 = await prepareForWorker(f.sd);
    const p2 = await prepareForWorker(f.sd);
    expect(f.sd.tables.table).toBe(before);
    expect(before.X?.kind).toBe("lazy");
    expect((before.obsm.spatial as DenseArray).data).toBe(f.privateEmb);
    expect(f.sd.images.store!.levels[0]!.source).toBe(f.storeSource);
    expect(f.loads()).toBe(1);
    expect((p2.tables.table!.obsm.spatial as DenseArray).data).toBe(
      (p1.tables.table!.obsm.spatial as DenseArray).data,
    );
    // Preparing a prepared object changes nothing.
    expect(await prepareForWorker(p1)).toBe(p1);
  });

  it("returns the object itself when nothing needs preparing", async () => {
    const sd = makeSpatialData({ attrs: { a: [1, 2, { b: "c" }] } });
    expect(await prepareForWorker(sd)).toBe(sd);
  });

  it("refuses values a worker cannot receive, naming the path", async () => {
    const sd = makeSpatialData({ attrs: { hooks: { onLoad: () => 1 } } });
    await expect(prepareForWorker(sd)).rejects.toThrow(/attrs\.hooks\.onLoad is a function/);
    class Thing {
      x = 1;
    }
    await expect(prepareForWorker(makeSpatialData({ attrs: { t: new Thing() } }))).rejects.toThrow(
      /attrs\.t is a Thing instance/,
    );
  });

  it("restoreInWorker: in-memory rasters are readable, store-backed ones say why not", async () => {
    const f = fixture();
    const cloned = structuredClone(await prepareForWorker(f.sd)) as SpatialData;
    const w = restoreInWorker(cloned);
    const px = await w.images.mem!.levels[0]!.source.read();
    expect(Array.from(px.data as Uint16Array)).toEqual([7, 8, 9, 10]);
    await expect(w.images.store!.levels[0]!.source.read()).rejects.toThrow(/not available in a worker/);
    expect(w.images.store!.levels[0]!.source.shape).toEqual([1, 2, 2]);
  });
});

describe("packResult / unpackResult", () => {
  it("moves big private buffers, leaves shared and small ones, detaches raster sources", async () => {
    const big = new Float32Array(100_000);
    const shared = allocArray("int32", 100_000);
    const small = new Int32Array(4);
    const sparse: SparseMatrix = {
      kind: "csr",
      dtype: "float32",
      shape: [2, 2],
      data: big,
      indices: shared as Int32Array,
      indptr: small,
    };
    const { value, transfer } = await packResult(
      { m: sparse, again: dense(big), img: memoryRasterSource(dense(small, [2, 2], "int32")) },
      "result of test",
    );
    expect(transfer).toEqual([big.buffer]);
    const v = value as { img: unknown };
    expect(isDetachedRaster(v.img)).toBe(true);
    const back = unpackResult(structuredClone(value, { transfer })) as { m: SparseMatrix; img: RasterSource };
    expect(big.byteLength).toBe(0); // moved
    expect(back.m.data.length).toBe(100_000);
    expect(Array.from((await back.img.read()).data as Int32Array)).toEqual([0, 0, 0, 0]);
  });

  it("refuses a function in a result", async () => {
    await expect(packResult({ a: [1, { f: () => 2 }] }, "result of op")).rejects.toThrow(
      /result of op: a\.1\.f is a function/,
    );
  });
});

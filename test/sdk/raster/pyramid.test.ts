import { describe, expect, it } from "vitest";
import { type DenseArray, dense } from "../../../src/sdk/data/arrays.js";
import type { AxisSelection } from "../../../src/sdk/data/elements.js";
import { memoryRasterSource } from "../../../src/sdk/raster/memory-source.js";
import {
  buildPyramid,
  buildPyramidFromSource,
  downsample2x,
  pyramidShapes,
} from "../../../src/sdk/raster/pyramid.js";

/** Values of a dense array as a plain list (number or bigint). */
const vals = (a: DenseArray): unknown[] => Array.from(a.data as Iterable<unknown>);

describe("pyramidShapes", () => {
  it("halves y and x with floor, like spatialdata's to_multiscale (250 → 125 → 62)", () => {
    expect(pyramidShapes([3, 250, 251], ["c", "y", "x"], { targetSize: 50 })).toEqual([
      [3, 250, 251],
      [3, 125, 125],
      [3, 62, 62],
      [3, 31, 31],
    ]);
  });
  it("stops at the target size or the level cap", () => {
    expect(pyramidShapes([2048, 2048], ["y", "x"]).map((s) => s[0])).toEqual([2048, 1024, 512, 256]);
    expect(pyramidShapes([2048, 2048], ["y", "x"], { maxLevels: 2 })).toHaveLength(2);
    expect(pyramidShapes([200, 100], ["y", "x"])).toHaveLength(1);
    expect(pyramidShapes([1, 10000], ["y", "x"], { targetSize: 8 })).toHaveLength(1);
  });
  it("requires axes ending in y,x", () => {
    expect(() => pyramidShapes([10, 10, 3], ["y", "x", "c"])).toThrow(/end with y,x/);
    expect(() => pyramidShapes([10, 10], ["y", "x", "c"])).toThrow(/3 axis names/);
  });
});

describe("downsample2x", () => {
  // 3×5 image: odd sizes → 1×2 output (the last row and column are dropped).
  const img = dense(Uint16Array.from([1, 2, 3, 4, 99, 5, 6, 7, 9, 99, 99, 99, 99, 99, 99]), [3, 5]);

  it("means 2×2 blocks with integer rounding half up, keeping the dtype", () => {
    const d = downsample2x(img, ["y", "x"]);
    expect(d.shape).toEqual([1, 2]);
    expect(d.dtype).toBe("uint16");
    expect(d.data).toBeInstanceOf(Uint16Array);
    // (1+2+5+6)/4 = 3.5 → 4; (3+4+7+9)/4 = 5.75 → 6
    expect(vals(d)).toEqual([4, 6]);
  });

  it("keeps float means exact", () => {
    const f = dense(Float32Array.from([1, 2, 3, 5]), [2, 2]);
    expect(vals(downsample2x(f, ["y", "x"]))).toEqual([2.75]);
    const neg = dense(Int16Array.from([-1, -2, -2, -2]), [2, 2]);
    // -7/4 = -1.75 → -2 (round half up: floor(x + 0.5))
    expect(vals(downsample2x(neg, ["y", "x"]))).toEqual([-2]);
    const big = dense(BigInt64Array.from([-1n, -2n, -2n, -2n, 4n, 4n, 5n, 5n]), [2, 2, 2]);
    expect(vals(downsample2x(big, ["c", "y", "x"]))).toEqual([-2n, 5n]);
  });

  it("never averages labels: nearest takes the top-left, mode the most frequent id", () => {
    const lab = dense(Uint32Array.from([7, 3, 1, 1, 3, 3, 2, 5, 0, 0, 0, 0, 0, 0, 0, 0]), [4, 4]);
    expect(vals(downsample2x(lab, ["y", "x"], "nearest"))).toEqual([7, 1, 0, 0]);
    // Block 1: 7,3,3,3 → 3; block 2: 1,1,2,5 → 1.
    expect(vals(downsample2x(lab, ["y", "x"], "mode"))).toEqual([3, 1, 0, 0]);
    const tie = dense(Uint32Array.from([4, 9, 9, 4]), [2, 2]);
    expect(vals(downsample2x(tie, ["y", "x"], "mode"))).toEqual([4]);
    const allDiff = dense(Uint32Array.from([4, 9, 8, 6]), [2, 2]);
    expect(vals(downsample2x(allDiff, ["y", "x"], "mode"))).toEqual([4]);
  });

  it("works plane by plane for c,y,x", () => {
    const a = dense(Uint8Array.from([0, 0, 0, 4, 10, 10, 10, 10]), [2, 2, 2]);
    const d = downsample2x(a, ["c", "y", "x"]);
    expect(d.shape).toEqual([2, 1, 1]);
    expect(vals(d)).toEqual([1, 10]);
  });
});

describe("buildPyramid", () => {
  function ramp(c: number, h: number, w: number): Uint16Array {
    const d = new Uint16Array(c * h * w);
    for (let i = 0; i < d.length; i++) d[i] = (i * 7919) % 65536;
    return d;
  }

  it("makes RasterLevels with NGFF scale transforms, chunks and readable sources", async () => {
    const base = dense(ramp(2, 40, 33), [2, 40, 33]);
    const levels = buildPyramid(base, ["c", "y", "x"], { targetSize: 8, tileSize: 16 });
    expect(levels.map((l) => l.shape)).toEqual([
      [2, 40, 33],
      [2, 20, 16],
      [2, 10, 8],
      [2, 5, 4],
    ]);
    expect(levels.map((l) => l.path)).toEqual(["0", "1", "2", "3"]);
    expect(levels[2]!.levelTransform).toEqual([{ type: "scale", scale: [1, 4, 4] }]);
    expect(levels[0]!.chunks).toEqual([1, 16, 16]);
    expect(levels[3]!.chunks).toEqual([1, 5, 4]);
    expect(await levels[0]!.source.read()).toBe(base);
    const l1 = await levels[1]!.source.read([1, [3, 4], [5, 6]]);
    const at = (c: number, y: number, x: number) => base.data[c * 40 * 33 + y * 33 + x]!;
    expect(l1.data[0]).toBe(Math.floor((at(1, 6, 10) + at(1, 6, 11) + at(1, 7, 10) + at(1, 7, 11) + 2) / 4));
  });

  it("from a source, reads level 0 band by band and gives the same levels", async () => {
    const base = dense(ramp(3, 37, 29), [3, 37, 29]);
    const mem = memoryRasterSource(base, [1, 8, 8]);
    const reads: AxisSelection[][] = [];
    const spy = {
      shape: mem.shape,
      dtype: mem.dtype,
      chunks: mem.chunks,
      read: (sel?: readonly AxisSelection[]) => {
        reads.push([...(sel ?? [])]);
        return mem.read(sel);
      },
    };
    const fromSource = await buildPyramidFromSource(spy, ["c", "y", "x"], { targetSize: 4, bandRows: 5 });
    const inMemory = buildPyramid(base, ["c", "y", "x"], { targetSize: 4 });
    expect(fromSource.map((l) => l.shape)).toEqual(inMemory.map((l) => l.shape));
    expect(fromSource[0]!.source).toBe(spy);
    for (let k = 1; k < inMemory.length; k++) {
      expect(vals(await fromSource[k]!.source.read())).toEqual(vals(await inMemory[k]!.source.read()));
    }
    // Bands of 6 rows (5 rounded up to even) over the 36 rows that level 1 uses.
    expect(reads.map((r) => r[1])).toEqual([
      [0, 6],
      [6, 12],
      [12, 18],
      [18, 24],
      [24, 30],
      [30, 36],
    ]);
  });

  it("labels pyramids keep only ids that exist", () => {
    const lab = new Uint32Array(64 * 64);
    for (let y = 0; y < 64; y++)
      for (let x = 0; x < 64; x++) lab[y * 64 + x] = ((x >> 3) + 8 * (y >> 3)) * 3 + 1;
    const ids = new Set(lab);
    for (const method of ["nearest", "mode"] as const) {
      const levels = buildPyramid(dense(lab, [64, 64]), ["y", "x"], { targetSize: 4, method });
      expect(levels).toHaveLength(5);
      for (const l of levels.slice(1)) {
        const d = (l.source as unknown as { array: { data: Uint32Array } }).array.data;
        for (const v of d) expect(ids.has(v)).toBe(true);
      }
    }
  });
});

import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateLargeImage, generateLargeTable } from "../../../bench/generate.js";
import type { DenseArray, SparseMatrix } from "../../../src/sdk/data/arrays.js";

function hash(...arrays: ArrayBufferView[]): string {
  const h = createHash("sha256");
  for (const a of arrays) h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return h.digest("hex");
}

describe("generateLargeTable", () => {
  it("makes a well-formed, deterministic raw-count CSR", () => {
    const t = generateLargeTable(3000, 400, 5);
    const X = t.X as SparseMatrix;
    expect(X.shape).toEqual([3000, 400]);
    expect(X.dtype).toBe("float32");
    expect(X.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    const { data, indices, indptr } = X;
    const totals = (t.obs.columns.total_counts as DenseArray).data as Float32Array;
    let bad = 0;
    for (let i = 0; i < 3000; i++) {
      let s = 0;
      for (let k = indptr[i]!; k < indptr[i + 1]!; k++) {
        const v = data[k] as number;
        if (!(v > 0 && Number.isInteger(v))) bad++;
        if (k > indptr[i]! && indices[k]! <= indices[k - 1]!) bad++;
        s += v;
      }
      if (s !== totals[i]) bad++;
    }
    expect(bad).toBe(0);
    expect(indptr[3000]).toBe(data.length);
    const density = data.length / (3000 * 400);
    expect(density).toBeGreaterThan(0.05);
    expect(density).toBeLessThan(0.4);
    const again = generateLargeTable(3000, 400, 5).X as SparseMatrix;
    expect(hash(again.data, again.indices, again.indptr)).toBe(hash(data, indices, indptr));
    const other = generateLargeTable(3000, 400, 6).X as SparseMatrix;
    expect(hash(other.data)).not.toBe(hash(data));
  });

  it("grows its buffers when the estimate is exceeded, with the same result", () => {
    const a = generateLargeTable(500, 100, 2).X as SparseMatrix;
    const b = generateLargeTable(500, 100, 2, { initialCapacity: 10 }).X as SparseMatrix;
    expect(hash(b.data, b.indices, b.indptr)).toBe(hash(a.data, a.indices, a.indptr));
  });

  it("is over-dispersed like real counts (variance > mean for abundant genes)", () => {
    const t = generateLargeTable(4000, 60, 3);
    const X = t.X as SparseMatrix;
    const sum = new Float64Array(60);
    const sum2 = new Float64Array(60);
    for (let k = 0; k < X.data.length; k++) {
      const v = X.data[k] as number;
      sum[X.indices[k]!]! += v;
      sum2[X.indices[k]!]! += v * v;
    }
    let over = 0;
    let abundant = 0;
    for (let g = 0; g < 60; g++) {
      const m = sum[g]! / 4000;
      if (m < 2) continue;
      abundant++;
      if (sum2[g]! / 4000 - m * m > 1.5 * m) over++;
    }
    expect(abundant).toBeGreaterThan(5);
    expect(over).toBe(abundant);
  });
});

describe("generateLargeImage", () => {
  it("makes a textured uint16 c,y,x image with its pyramid, deterministically", async () => {
    const img = generateLargeImage(600, 2, { seed: 1 });
    expect(img.axes).toEqual(["c", "y", "x"]);
    expect(img.levels.map((l) => l.shape)).toEqual([
      [2, 600, 600],
      [2, 300, 300],
      [2, 150, 150],
    ]);
    const base = await img.levels[0]!.source.read();
    expect(base.dtype).toBe("uint16");
    const d = base.data as Uint16Array;
    let min = 65535;
    let max = 0;
    for (const v of d) {
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    expect(max - min).toBeGreaterThan(1000);
    const again = await generateLargeImage(600, 2, { seed: 1 }).levels[0]!.source.read();
    expect(hash(again.data)).toBe(hash(d));
    expect(generateLargeImage(64, 1, { pyramid: false }).levels).toHaveLength(1);
  });
});

import { describe, expect, it } from "vitest";
import type { SparseMatrix } from "../../../src/sdk/data/arrays.js";
import {
  countMask,
  csrColumnMeanVar,
  csrColumnNnz,
  csrColumnSums,
  csrRowMeanVar,
  csrRowNnz,
  csrRowSums,
  csrScaleRows,
  csrSubsetColumns,
  csrSubsetRows,
  mapStored,
  numberData,
} from "../../../src/sdk/math/csr.js";

// [[1, 0, 2, 0],
//  [0, 0, 0, 0],
//  [3, -1, 0, 4],
//  [0, 5, 0, 0]]   (row 1 holds an explicit zero)
function sample(): SparseMatrix {
  return {
    kind: "csr",
    dtype: "float32",
    shape: [4, 4],
    data: Float32Array.from([1, 2, 0, 3, -1, 4, 5]),
    indices: Int32Array.from([0, 2, 1, 0, 1, 3, 1]),
    indptr: Int32Array.from([0, 2, 3, 6, 7]),
  };
}
const DENSE = [
  [1, 0, 2, 0],
  [0, 0, 0, 0],
  [3, -1, 0, 4],
  [0, 5, 0, 0],
];

function snapshot(m: SparseMatrix): string {
  return JSON.stringify([Array.from(numberData(m.data)), Array.from(m.indices), Array.from(m.indptr)]);
}

describe("csr kernels", () => {
  it("row and column sums, with masks", () => {
    const m = sample();
    expect(Array.from(csrRowSums(m))).toEqual([3, 0, 6, 5]);
    expect(Array.from(csrRowSums(m, Uint8Array.from([1, 0, 0, 1])))).toEqual([1, 0, 7, 0]);
    expect(Array.from(csrColumnSums(m))).toEqual([4, 4, 2, 4]);
    expect(Array.from(csrColumnSums(m, { rowMask: Uint8Array.from([0, 0, 1, 1]) }))).toEqual([3, 4, 0, 4]);
  });

  it("counts non-zeros (explicit zeros excluded) and positives", () => {
    const m = sample();
    expect(Array.from(csrRowNnz(m))).toEqual([2, 0, 3, 1]);
    expect(Array.from(csrRowNnz(m, true))).toEqual([2, 0, 2, 1]);
    expect(Array.from(csrColumnNnz(m))).toEqual([2, 2, 1, 1]);
    expect(Array.from(csrColumnNnz(m, true))).toEqual([2, 1, 1, 1]);
  });

  it("means and variances agree with the dense definition", () => {
    const m = sample();
    const cols = csrColumnMeanVar(m, { ddof: 1 });
    for (let j = 0; j < 4; j++) {
      const col = DENSE.map((r) => r[j]!);
      const mu = col.reduce((a, b) => a + b, 0) / 4;
      const v = col.reduce((a, b) => a + (b - mu) ** 2, 0) / 3;
      expect(cols.mean[j]).toBeCloseTo(mu, 12);
      expect(cols.var[j]).toBeCloseTo(v, 12);
    }
    const rows = csrRowMeanVar(m);
    DENSE.forEach((r, i) => {
      const mu = r.reduce((a, b) => a + b, 0) / 4;
      expect(rows.mean[i]).toBeCloseTo(mu, 12);
      expect(rows.var[i]).toBeCloseTo(r.reduce((a, b) => a + (b - mu) ** 2, 0) / 4, 12);
    });
    const masked = csrColumnMeanVar(m, { rowMask: Uint8Array.from([1, 0, 1, 0]), transform: (v) => 2 * v });
    expect(Array.from(masked.mean)).toEqual([4, -1, 2, 4]);
  });

  it("scales rows into a new data array and leaves the input alone", () => {
    const m = sample();
    const before = snapshot(m);
    const s = csrScaleRows(m, [2, 1, 4, 5], { divide: true });
    expect(Array.from(s.data as Float32Array)).toEqual([0.5, 1, 0, 0.75, -0.25, 1, 1]);
    expect(s.dtype).toBe("float32");
    expect(s.indices).toBe(m.indices);
    expect(s.data).not.toBe(m.data);
    const mul = csrScaleRows(m, [1, 1, 1, 0.5], { dtype: "float64" });
    expect(mul.data).toBeInstanceOf(Float64Array);
    expect(mul.data[6]).toBe(2.5);
    expect(snapshot(m)).toBe(before);
    expect(() => csrScaleRows(m, [1, 2])).toThrow(/2 factors for 4 rows/);
  });

  it("maps stored values", () => {
    const m = sample();
    const out = mapStored(m, (v) => v * 10, "float64");
    expect(Array.from(out.data as Float64Array)).toEqual([10, 20, 0, 30, -10, 40, 50]);
    expect(out.kind).toBe("csr");
  });

  it("subsets rows and columns", () => {
    const m = sample();
    const before = snapshot(m);
    const r = csrSubsetRows(m, Uint8Array.from([1, 0, 1, 0]));
    expect(r.shape).toEqual([2, 4]);
    expect(Array.from(r.indptr)).toEqual([0, 2, 5]);
    expect(Array.from(r.data as Float32Array)).toEqual([1, 2, 3, -1, 4]);
    const c = csrSubsetColumns(m, Uint8Array.from([0, 1, 0, 1]));
    expect(c.shape).toEqual([4, 2]);
    expect(Array.from(c.indptr)).toEqual([0, 0, 1, 3, 4]);
    expect(Array.from(c.indices)).toEqual([0, 0, 1, 0]);
    expect(Array.from(c.data as Float32Array)).toEqual([0, -1, 4, 5]);
    expect(snapshot(m)).toBe(before);
    expect(countMask(Uint8Array.from([1, 0, 1]))).toBe(2);
    expect(() => csrSubsetRows(m, new Uint8Array(3))).toThrow(/mask of 3 for 4 rows/);
  });

  it("refuses a CSC matrix", () => {
    expect(() => csrRowSums({ ...sample(), kind: "csc" })).toThrow(/expected a CSR matrix/);
  });
});

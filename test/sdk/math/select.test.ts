/**
 * The one quickselect (`sdk/math/select.ts`): the k-th smallest in place with the partition property,
 * and the top-n sums of calculate_qc_metrics built on it (float values, which skip the integer
 * histogram path), against sorting.
 */
import { describe, expect, it } from "vitest";
import { topSegmentProportions } from "../../../src/plugins/scanpy/pp/qc.js";
import type { SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { selectKth } from "../../../src/sdk/math/select.js";

describe("selectKth", () => {
  it("puts the k-th smallest at k, smaller before and larger after, on any sub-range", () => {
    const rng = new Rng(7);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(rng.nextDouble() * 60);
      // Few distinct values in some trials: ties are the hard case of Hoare's partition.
      const distinct = trial % 3 === 0 ? 3 : 1000;
      const a = Float64Array.from(
        { length: n },
        () => Math.floor(rng.nextDouble() * distinct) - distinct / 2,
      );
      const lo = Math.floor(rng.nextDouble() * n);
      const hi = lo + Math.floor(rng.nextDouble() * (n - lo));
      const k = lo + Math.floor(rng.nextDouble() * (hi - lo + 1));
      const outside = [...a.slice(0, lo), ...a.slice(hi + 1)];
      const sorted = Array.from(a.slice(lo, hi + 1)).sort((x, y) => x - y);
      const v = selectKth(a, lo, hi, k);
      expect(v).toBe(sorted[k - lo]);
      expect(a[k]).toBe(v);
      for (let i = lo; i < k; i++) expect(a[i]).toBeLessThanOrEqual(v);
      for (let i = k + 1; i <= hi; i++) expect(a[i]).toBeGreaterThanOrEqual(v);
      expect([...a.slice(0, lo), ...a.slice(hi + 1)]).toEqual(outside);
      expect(Array.from(a.slice(lo, hi + 1)).sort((x, y) => x - y)).toEqual(sorted);
    }
  });
});

describe("pct_counts_in_top_n on float values", () => {
  it("equals the share of each row's n largest values, found by sorting", () => {
    const rng = new Rng(3);
    const rows = 40;
    const cols = 300;
    const indptr = new Int32Array(rows + 1);
    const indices: number[] = [];
    const values: number[] = [];
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        if (rng.nextDouble() < 0.4) {
          indices.push(j);
          values.push(rng.nextDouble() * 10 + 0.001);
        }
      }
      indptr[i + 1] = indices.length;
    }
    const m: SparseMatrix = {
      kind: "csr",
      dtype: "float64",
      shape: [rows, cols],
      data: Float64Array.from(values),
      indices: Int32Array.from(indices),
      indptr,
    };
    const ns = [5, 20, 50, 500];
    const out = topSegmentProportions(m, ns);
    for (let i = 0; i < rows; i++) {
      const row = values.slice(indptr[i]!, indptr[i + 1]!).sort((x, y) => y - x);
      const total = row.reduce((p, v) => p + v, 0);
      ns.forEach((n, q) => {
        const top = row.slice(0, n).reduce((p, v) => p + v, 0);
        expect(out[q]![i]).toBeCloseTo(top / total, 12);
      });
    }
  });
});

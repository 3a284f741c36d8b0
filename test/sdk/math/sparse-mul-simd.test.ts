/** The SIMD projection kernel gives PCA's projection bit for bit as the JavaScript one does. */
import { describe, expect, it } from "vitest";
import { Rng } from "../../../src/sdk/math/rng.js";
import { sparseMulRows } from "../../../src/sdk/math/sparse-mul.js";
import { mulRowModuleBytes, sparseMulRowsSimd } from "../../../src/sdk/math/sparse-mul-simd.js";

describe("sparseMulRowsSimd", () => {
  it("equals sparseMulRows bit for bit (odd and even widths, masked columns, empty and long rows)", () => {
    const rng = new Rng(4);
    const n = 700;
    const cols = 300;
    const lengths = Array.from({ length: n }, (_, i) => (i % 50 === 3 ? 0 : i === 7 ? cols : rng.int(60)));
    const indptr = new Int32Array(n + 1);
    lengths.forEach((len, i) => {
      indptr[i + 1] = indptr[i]! + len;
    });
    const nnz = indptr[n]!;
    const indices = new Int32Array(nnz);
    const vals = new Float32Array(nnz);
    for (let i = 0; i < n; i++) {
      // Sorted distinct columns per row.
      const chosen = new Set<number>();
      while (chosen.size < lengths[i]!) chosen.add(rng.int(cols));
      [...chosen]
        .sort((a, b) => a - b)
        .forEach((c, j) => {
          indices[indptr[i]! + j] = c;
          vals[indptr[i]! + j] = Math.fround(rng.next() * 5);
        });
    }
    // Two columns in three kept.
    const colMap = new Int32Array(cols);
    let m = 0;
    for (let j = 0; j < cols; j++) colMap[j] = j % 3 === 1 ? -1 : m++;
    const bytes = mulRowModuleBytes();
    for (const l of [1, 2, 7, 50]) {
      const M = Float64Array.from({ length: m * l }, () => rng.next() - 0.5);
      const muM = Float64Array.from({ length: l }, () => rng.next());
      for (const Out of [Float32Array, Float64Array]) {
        const want = new Out(n * l);
        sparseMulRows(indptr, indices, vals, colMap, 0, n, M, l, muM, want);
        const got = new Out(n * l).fill(Number.NaN);
        sparseMulRowsSimd(indptr, indices, vals, colMap, 0, 311, M, l, muM, got, bytes);
        sparseMulRowsSimd(indptr, indices, vals, colMap, 311, n, M, l, muM, got, bytes);
        expect(Array.from(got)).toEqual(Array.from(want));
      }
    }
  });
});

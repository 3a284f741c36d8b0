import { describe, expect, it } from "vitest";
import { allocArray, type SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { sparseGramRows, sparseGramThreads } from "../../../src/sdk/math/gram.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { dataOperator } from "../../../src/sdk/math/svd.js";

/** A random CSR matrix on shared memory (unsorted columns in some rows). */
function randomCsr(n: number, cols: number, density: number, seed: number): SparseMatrix {
  const rng = new Rng(seed);
  const indptr = allocArray("int32", n + 1) as Int32Array;
  const idx: number[] = [];
  const val: number[] = [];
  for (let i = 0; i < n; i++) {
    const row: number[] = [];
    for (let j = 0; j < cols; j++) if (rng.nextDouble() < density) row.push(j);
    if (i % 7 === 0) row.reverse();
    for (const j of row) {
      idx.push(j);
      val.push(Math.round(rng.nextDouble() * 50) / 10);
    }
    indptr[i + 1] = idx.length;
  }
  const indices = allocArray("int32", idx.length) as Int32Array;
  indices.set(idx);
  const data = allocArray("float32", val.length) as Float32Array;
  data.set(val);
  return { kind: "csr", dtype: "float32", shape: [n, cols], indptr, indices, data };
}

/** Dense reference: Σ_i x_i x_iᵀ over the kept columns, upper triangle. */
function reference(x: SparseMatrix, colMap: Int32Array, m: number): Float64Array {
  const g = new Float64Array(m * m);
  const n = x.shape[0]!;
  const row = new Float64Array(m);
  for (let i = 0; i < n; i++) {
    row.fill(0);
    for (let k = Number(x.indptr[i]); k < Number(x.indptr[i + 1]); k++) {
      const c = colMap[x.indices[k]!]!;
      if (c >= 0) row[c] += Number(x.data[k]);
    }
    for (let a = 0; a < m; a++) for (let b = a; b < m; b++) g[a * m + b] += row[a]! * row[b]!;
  }
  return g;
}

describe("sparse Gram", () => {
  const x = randomCsr(9000, 300, 0.08, 3);
  const colMap = new Int32Array(300);
  let m = 0;
  for (let j = 0; j < 300; j++) colMap[j] = j % 3 === 1 ? -1 : m++;
  const want = reference(x, colMap, m);

  it("blocked kernel equals the dense outer-product sum (upper triangle), with unsorted rows", () => {
    const g = new Float64Array(m * m);
    sparseGramRows(x.indptr, x.indices, x.data as Float32Array, colMap, 0, 9000, m, g, 64, 512);
    for (let a = 0; a < m; a++)
      for (let b = a; b < m; b++) expect(g[a * m + b]).toBeCloseTo(want[a * m + b]!, 8);
  });

  it("two threads give the same matrix as one", async () => {
    const g = await sparseGramThreads(x.indptr, x.indices, x.data as Float32Array, colMap, 9000, m, 2);
    expect(g).not.toBeNull();
    let worst = 0;
    for (let a = 0; a < m; a++)
      for (let b = a; b < m; b++)
        worst = Math.max(
          worst,
          Math.abs(g![a * m + b]! - want[a * m + b]!) / Math.max(1, Math.abs(want[a * m + b]!)),
        );
    expect(worst).toBeLessThan(1e-12);
  });

  it("declines (null) when X is not on shared memory, and gramAsync then computes it here", async () => {
    const plain: SparseMatrix = { ...x, indices: Int32Array.from(x.indices as Int32Array) };
    expect(
      await sparseGramThreads(plain.indptr, plain.indices, plain.data as Float32Array, colMap, 9000, m, 2),
    ).toBeNull();
    const op = dataOperator(plain);
    const a = await op.gramAsync(2);
    const b = dataOperator(x).gram();
    expect(Array.from(a.slice(0, 50))).toEqual(Array.from(b.slice(0, 50)));
  });

  it("gramAsync on shared memory matches gram (centred, symmetric)", async () => {
    const op = dataOperator(x, { center: true });
    const a = await op.gramAsync(2);
    const b = op.gram();
    for (let i = 0; i < a.length; i += 97) expect(a[i]).toBeCloseTo(b[i]!, 6);
    expect(a[1 * op.m + 5]).toBe(a[5 * op.m + 1]);
  });

  it("mulAsync (projection shared among threads) equals mul exactly", async () => {
    const op = dataOperator(x, { center: true });
    const l = 7;
    const M = new Float64Array(op.m * l).map((_, i) => Math.sin(i));
    const want = op.mul(M, l, new Float32Array(9000 * l));
    const out = allocArray("float32", 9000 * l) as Float32Array;
    const got = await op.mulAsync(M, l, out, 2);
    expect(got).toBe(out);
    expect(Array.from(got)).toEqual(Array.from(want));
  });
});

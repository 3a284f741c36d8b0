import { describe, expect, it } from "vitest";
import type { SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { qrThin, svdJacobi, symEigenJacobi, tridiagEigen } from "../../../src/sdk/math/linalg.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { switchCompression } from "../../../src/sdk/math/sparse.js";
import { dataOperator, lanczosSvd, project, randomizedSvd } from "../../../src/sdk/math/svd.js";

/** A sparse-ish n × m matrix: rank-6 signal plus noise, ~40% of entries kept. */
function synth(n: number, m: number, seed = 1): { dense: Float64Array; csr: SparseMatrix } {
  const rng = new Rng(seed);
  const basis = Array.from({ length: 6 }, () => Float64Array.from({ length: m }, () => rng.normal()));
  const dense = new Float64Array(n * m);
  const indptr = [0];
  const indices: number[] = [];
  const data: number[] = [];
  for (let i = 0; i < n; i++) {
    const w = Array.from({ length: 6 }, (_, t) => rng.normal() * (6 - t));
    for (let j = 0; j < m; j++) {
      if (rng.next() > 0.4) continue;
      let v = 0.3 * rng.normal() + 2;
      for (let t = 0; t < 6; t++) v += w[t]! * basis[t]![j]!;
      const f = Math.fround(v);
      dense[i * m + j] = f;
      indices.push(j);
      data.push(f);
    }
    indptr.push(indices.length);
  }
  return {
    dense,
    csr: {
      kind: "csr",
      dtype: "float32",
      shape: [n, m],
      data: Float32Array.from(data),
      indices: Int32Array.from(indices),
      indptr: Int32Array.from(indptr),
    },
  };
}

/** Exact reference: explicitly centred dense matrix, one-sided Jacobi SVD. */
function exactSvd(dense: Float64Array, n: number, m: number, mask?: Uint8Array) {
  const cols = Array.from({ length: m }, (_, j) => j).filter((j) => !mask || mask[j]);
  const mm = cols.length;
  const xc = new Float64Array(n * mm);
  for (let c = 0; c < mm; c++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += dense[i * m + cols[c]!]!;
    const mu = s / n;
    for (let i = 0; i < n; i++) xc[i * mm + c] = dense[i * m + cols[c]!]! - mu;
  }
  return { ...svdJacobi(xc, n, mm), xc, mm };
}

describe("linalg kernels", () => {
  it("qrThin gives orthonormal columns and Q·R = A", () => {
    const rng = new Rng(3);
    const n = 50;
    const l = 7;
    const a = Float64Array.from({ length: n * l }, () => rng.normal());
    const q = Float64Array.from(a);
    const r = qrThin(q, n, l);
    for (let x = 0; x < l; x++) {
      for (let y = 0; y < l; y++) {
        let d = 0;
        for (let i = 0; i < n; i++) d += q[i * l + x]! * q[i * l + y]!;
        expect(d).toBeCloseTo(x === y ? 1 : 0, 12);
      }
    }
    for (let i = 0; i < n; i++) {
      for (let c = 0; c < l; c++) {
        let v = 0;
        for (let t = 0; t <= c; t++) v += q[i * l + t]! * r[t * l + c]!;
        expect(v).toBeCloseTo(a[i * l + c]!, 10);
      }
    }
  });

  it("tridiagEigen agrees with Jacobi on the same tridiagonal matrix", () => {
    const diag = [4, 1, -2, 3, 0.5, 2];
    const off = [1, 0.5, 2, -1, 0.25];
    const n = diag.length;
    const dense = new Float64Array(n * n);
    for (let i = 0; i < n; i++) dense[i * n + i] = diag[i]!;
    for (let i = 0; i < n - 1; i++) {
      dense[i * n + i + 1] = off[i]!;
      dense[(i + 1) * n + i] = off[i]!;
    }
    const a = tridiagEigen(diag, off);
    const b = symEigenJacobi(dense, n);
    for (let i = 0; i < n; i++) expect(a.values[i]).toBeCloseTo(b.values[i]!, 12);
    for (let c = 0; c < n; c++) {
      let dot = 0;
      for (let i = 0; i < n; i++) dot += a.vectors[i * n + c]! * b.vectors[i * n + c]!;
      expect(Math.abs(dot)).toBeCloseTo(1, 10);
    }
  });
});

describe("truncated SVD with implicit centring", () => {
  const n = 300;
  const m = 40;
  const k = 8;
  const { dense, csr } = synth(n, m);
  const ref = exactSvd(dense, n, m);

  it("lanczos (arpack) on CSR, CSC and dense input matches the exact SVD of the centred matrix", () => {
    for (const x of [
      csr,
      switchCompression(csr),
      { kind: "dense" as const, dtype: "float64" as const, shape: [n, m], data: dense },
    ]) {
      const op = dataOperator(x);
      const r = lanczosSvd(op, k, { rng: new Rng(0) });
      for (let c = 0; c < k; c++) expect(r.s[c]! / ref.s[c]!).toBeCloseTo(1, 10);
      // Same vectors up to sign, and the sign convention: largest |loading| positive.
      for (let c = 0; c < k; c++) {
        let dot = 0;
        let best = 0;
        for (let j = 0; j < m; j++) {
          dot += r.v[j * k + c]! * ref.v[j * m + c]!;
          if (Math.abs(r.v[j * k + c]!) > Math.abs(best)) best = r.v[j * k + c]!;
        }
        expect(Math.abs(dot)).toBeCloseTo(1, 8);
        expect(best).toBeGreaterThan(0);
      }
      // X_pca = X_c V equals U S.
      const xp = project(op, r.v, k);
      for (let c = 0; c < 3; c++) {
        let dot = 0;
        for (let j = 0; j < m; j++) dot += r.v[j * k + c]! * ref.v[j * m + c]!;
        const sign = Math.sign(dot);
        for (let i = 0; i < n; i += 37) {
          expect(xp[i * k + c]).toBeCloseTo(sign * ref.u[i * m + c]! * ref.s[c]!, 3);
        }
      }
    }
  });

  it("exact (full) and randomized solvers agree on the leading singular values", () => {
    const op = dataOperator(csr);
    const full = lanczosSvd(op, k, { rng: new Rng(0), exact: true });
    const rnd = randomizedSvd(op, k, { rng: new Rng(0) });
    for (let c = 0; c < 6; c++) {
      expect(full.s[c]! / ref.s[c]!).toBeCloseTo(1, 12);
      expect(rnd.s[c]! / ref.s[c]!).toBeCloseTo(1, 4);
    }
  });

  it("a column mask restricts the SVD to the kept columns without copying X", () => {
    const mask = Uint8Array.from({ length: m }, (_, j) => (j % 3 === 0 ? 0 : 1));
    const refM = exactSvd(dense, n, m, mask);
    const op = dataOperator(csr, { mask });
    expect(op.m).toBe(refM.mm);
    const r = lanczosSvd(op, k, { rng: new Rng(0) });
    for (let c = 0; c < k; c++) expect(r.s[c]! / refM.s[c]!).toBeCloseTo(1, 10);
    // Column variances (ddof 1) of the kept columns.
    let total = 0;
    for (let t = 0; t < refM.xc.length; t++) total += refM.xc[t]! ** 2;
    let ours = 0;
    for (let j = 0; j < op.m; j++) ours += op.colVar[j]!;
    expect(ours).toBeCloseTo(total / (n - 1), 8);
  });

  it("the Gram matrix of the centred operator equals X_cᵀX_c", () => {
    const op = dataOperator(csr);
    const g = op.gram();
    for (const [a, b] of [
      [0, 0],
      [3, 17],
      [39, 2],
    ] as const) {
      let v = 0;
      for (let i = 0; i < n; i++) v += ref.xc[i * m + a]! * ref.xc[i * m + b]!;
      expect(g[a * m + b]).toBeCloseTo(v, 8);
    }
  });
});

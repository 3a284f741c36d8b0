/**
 * A few extreme eigenpairs of a large symmetric operator: thick-restart Lanczos with full
 * reorthogonalisation (what ARPACK's `eigsh` gives scanpy's diffusion maps, in plain typed arrays).
 *
 * The operator is only ever applied (`matvec`), so a sparse matrix is never densified. Every Krylov
 * vector is kept and orthogonalised twice against all earlier ones ("twice is enough"), which makes
 * the method robust to the clustered eigenvalues near 1 of a transition matrix; restarts keep the
 * wanted Ritz vectors so memory stays at `ncv` vectors of length n.
 */
import type { SparseMatrix } from "../data/arrays.js";
import { symEigenJacobi } from "./linalg.js";
import { Rng } from "./rng.js";

/** y = A x for a symmetric n×n operator A (write into `y`, never into `x`). */
export type SymmetricMatvec = (x: Float64Array, y: Float64Array) => void;

/** Which end of the spectrum to compute. */
export type EigenWhich = "LM" | "LA";

/** Options of `lanczosTopEigen`. */
export interface LanczosEigenOptions {
  /** `LM`: largest magnitude (eigsh's default, scanpy's diffmap); `LA`: largest algebraic. Default `LM`. */
  readonly which?: EigenWhich;
  /** Krylov subspace size; default `max(2k + 1, 20)` as ARPACK, capped at n. */
  readonly ncv?: number;
  /** Relative tolerance on Ritz residuals; default 1e-10. */
  readonly tol?: number;
  /** Maximal number of restarts; default 300. */
  readonly maxRestarts?: number;
  /** Seed of the random start vector (standard normal); default 0. */
  readonly seed?: number;
  /** Checked between matvecs. */
  readonly signal?: AbortSignal;
}

/** Eigenpairs: values sorted in decreasing algebraic order, vectors column j of an n×k row-major array. */
export interface EigenResult {
  readonly values: Float64Array;
  /** n×k, row-major: `vectors[i * k + j]` is component i of eigenvector j. */
  readonly vectors: Float64Array;
  /** Number of operator applications. */
  readonly matvecs: number;
  /** Whether all k residuals met the tolerance. */
  readonly converged: boolean;
}

function dot(a: Float64Array, aOff: number, b: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += a[aOff + i]! * b[i]!;
  return s;
}

/**
 * The `k` extreme eigenpairs of a symmetric n×n operator given by `matvec`. Values come back in
 * decreasing algebraic order (as scanpy stores diffusion-map eigenvalues); eigenvector signs are
 * arbitrary, as ARPACK's.
 */
export function lanczosTopEigen(
  matvec: SymmetricMatvec,
  n: number,
  k: number,
  opts: LanczosEigenOptions = {},
): EigenResult {
  if (!(k >= 1 && k <= n)) throw new Error(`lanczosTopEigen: k must be in [1, ${n}], got ${k}`);
  const which = opts.which ?? "LM";
  const ncv = Math.min(n, Math.max(opts.ncv ?? Math.max(2 * k + 1, 20), k + 1));
  const tol = opts.tol ?? 1e-10;
  const maxRestarts = opts.maxRestarts ?? 300;
  // Krylov basis: ncv vectors of length n, plus the residual (next) vector.
  const basis = new Float64Array((ncv + 1) * n);
  const h = new Float64Array(ncv * ncv); // projected matrix V^T A V
  const w = new Float64Array(n);
  const rng = new Rng(opts.seed ?? 0);
  for (let i = 0; i < n; i++) basis[i] = rng.normal();
  let nrm = Math.sqrt(dot(basis, 0, basis, n));
  for (let i = 0; i < n; i++) basis[i] = basis[i]! / nrm;
  let kept = 0; // Ritz vectors kept at the front after a restart
  let matvecs = 0;
  let ritzVals: Float64Array = new Float64Array(0);
  let ritzVecs: Float64Array = new Float64Array(0);
  let order: number[] = [];
  let converged = false;
  const col = new Float64Array(ncv + 1);
  for (let restart = 0; restart <= maxRestarts; restart++) {
    // Extend the basis from column `kept` to ncv.
    let m = ncv;
    let beta = 0;
    for (let j = kept; j < ncv; j++) {
      opts.signal?.throwIfAborted();
      const vj = basis.subarray(j * n, (j + 1) * n);
      matvec(vj, w);
      matvecs++;
      col.fill(0);
      // Classical Gram-Schmidt against every basis vector, twice.
      for (let pass = 0; pass < 2; pass++) {
        for (let i = 0; i <= j; i++) {
          const c = dot(basis, i * n, w, n);
          col[i] = col[i]! + c;
          const off = i * n;
          for (let t = 0; t < n; t++) w[t] = w[t]! - c * basis[off + t]!;
        }
      }
      for (let i = 0; i <= j; i++) {
        // Keep H symmetric: the kept Ritz block is diagonal by construction.
        if (i < kept && j < kept) continue;
        h[i * ncv + j] = col[i]!;
        h[j * ncv + i] = col[i]!;
      }
      beta = Math.sqrt(dot(w, 0, w, n));
      const next = basis.subarray((j + 1) * n, (j + 2) * n);
      if (beta < 1e-14) {
        // Invariant subspace: restart the next direction randomly, orthogonal to the basis.
        for (let t = 0; t < n; t++) w[t] = rng.normal();
        for (let pass = 0; pass < 2; pass++) {
          for (let i = 0; i <= j; i++) {
            const c = dot(basis, i * n, w, n);
            const off = i * n;
            for (let t = 0; t < n; t++) w[t] = w[t]! - c * basis[off + t]!;
          }
        }
        const r = Math.sqrt(dot(w, 0, w, n));
        if (j + 1 >= n || r < 1e-14) {
          m = j + 1;
          beta = 0;
          break;
        }
        for (let t = 0; t < n; t++) next[t] = w[t]! / r;
        beta = 0;
        // The coupling to the new direction is zero: A v_j lies in the span already.
        continue;
      }
      for (let t = 0; t < n; t++) next[t] = w[t]! / beta;
    }
    // Ritz pairs of the projected matrix.
    const hm = new Float64Array(m * m);
    for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) hm[i * m + j] = h[i * ncv + j]!;
    const eig = symEigenJacobi(hm, m);
    ritzVals = eig.values;
    ritzVecs = eig.vectors;
    order = Array.from({ length: m }, (_, i) => i).sort((a, b) =>
      which === "LM" ? Math.abs(ritzVals[b]!) - Math.abs(ritzVals[a]!) : ritzVals[b]! - ritzVals[a]!,
    );
    const want = Math.min(k, m);
    // Residual of Ritz pair (θ, V s) is |β · s_last|, the coupling to the next vector.
    let ok = true;
    const scale = Math.max(Math.abs(ritzVals[order[0]!]!), 1e-300);
    for (let r = 0; r < want; r++) {
      const res = Math.abs(beta * ritzVecs[(m - 1) * m + order[r]!]!);
      if (res > tol * scale) ok = false;
    }
    if (ok || m < ncv || restart === maxRestarts) {
      converged = ok;
      const values = new Float64Array(k);
      const vectors = new Float64Array(n * k);
      const idx = order.slice(0, want).sort((a, b) => ritzVals[b]! - ritzVals[a]!);
      for (let r = 0; r < want; r++) {
        values[r] = ritzVals[idx[r]!]!;
        for (let j = 0; j < m; j++) {
          const s = ritzVecs[j * m + idx[r]!]!;
          if (s === 0) continue;
          const off = j * n;
          for (let t = 0; t < n; t++) vectors[t * k + r] = vectors[t * k + r]! + s * basis[off + t]!;
        }
      }
      return { values, vectors, matvecs, converged };
    }
    // Thick restart: keep the best `p` Ritz vectors plus the residual direction.
    const p = Math.min(m - 1, Math.max(want + Math.floor((m - want) / 2), want));
    const fresh = new Float64Array((p + 1) * n);
    for (let r = 0; r < p; r++) {
      const c = order[r]!;
      for (let j = 0; j < m; j++) {
        const s = ritzVecs[j * m + c]!;
        if (s === 0) continue;
        const off = j * n;
        const dst = r * n;
        for (let t = 0; t < n; t++) fresh[dst + t] = fresh[dst + t]! + s * basis[off + t]!;
      }
    }
    fresh.set(basis.subarray(m * n, (m + 1) * n), p * n);
    basis.fill(0);
    basis.set(fresh);
    h.fill(0);
    for (let r = 0; r < p; r++) h[r * ncv + r] = ritzVals[order[r]!]!;
    // The coupling of each kept Ritz vector to the residual direction is β s_last; it is recomputed
    // exactly by the orthogonalisation of A v_p below, so H needs nothing more here.
    kept = p;
    nrm = Math.sqrt(dot(basis, p * n, basis.subarray(p * n, (p + 1) * n), n));
    if (Math.abs(nrm - 1) > 1e-8) for (let t = 0; t < n; t++) basis[p * n + t] = basis[p * n + t]! / nrm;
  }
  throw new Error("lanczosTopEigen: unreachable");
}

/** A symmetric CSR matrix as a `matvec` (float64 accumulation). */
export function csrMatvec(m: SparseMatrix): SymmetricMatvec {
  if (m.kind !== "csr") throw new Error("csrMatvec: expected a CSR matrix");
  const { data, indices, indptr } = m;
  const rows = m.shape[0];
  return (x, y) => {
    for (let i = 0; i < rows; i++) {
      let s = 0;
      const end = indptr[i + 1]!;
      for (let p = indptr[i]!; p < end; p++) s += (data[p] as number) * x[indices[p]!]!;
      y[i] = s;
    }
  };
}

/**
 * Truncated SVD / PCA of a data matrix without densifying it.
 *
 * A `DataOperator` wraps X (CSR, CSC or dense; optionally a subset of its columns) as the centred
 * matrix X_c = X − 1μᵀ, applied implicitly: (X − 1μᵀ)M = XM − 1(μᵀM) and (X − 1μᵀ)ᵀM = XᵀM − μ(1ᵀM).
 * Three solvers work on it:
 *
 * - `lanczos` (what `svd_solver="arpack"` maps to): symmetric Lanczos with full reorthogonalisation
 *   on the Gram operator X_cᵀX_c, as scipy's `svds(solver="arpack")` does through ARPACK's eigsh.
 *   When the Gram matrix is small (few columns) it is formed once (one pass over X) and Lanczos then
 *   runs on the m × m matrix at almost no cost; otherwise each step applies X and Xᵀ.
 * - `randomized`: Halko–Martinsson–Tropp with power iterations, QR-normalised at each step.
 * - `full`: the exact eigen-decomposition of the formed Gram matrix (Lanczos run to convergence at
 *   machine precision), for small column counts.
 *
 * Signs follow scikit-learn's `svd_flip(u_based_decision=False)`: in each right singular vector
 * (PCA component) the entry of largest magnitude is positive.
 */
import type { DenseArray, Matrix, SparseMatrix } from "../data/arrays.js";
import { centreGram, sparseGramRows, sparseGramThreads } from "./gram.js";
import { gramMatvecSimd, gramOnWasm } from "./gram-matvec-simd.js";
import { matmul, qrThin, svdJacobi, tridiagEigen } from "./linalg.js";
import type { Rng } from "./rng.js";
import { switchCompression } from "./sparse.js";
import { sparseMulThreads } from "./sparse-mul.js";

/** Numeric values of a matrix as a plain indexable array (int64 converted once). */
type Values = ArrayLike<number>;

function valuesOf(m: Matrix): Values {
  const d = m.data;
  if (d instanceof BigInt64Array || d instanceof BigUint64Array)
    return Float64Array.from(d, (x) => Number(x));
  return d as Values;
}

/** The centred (or not) data matrix X[:, mask] as an implicit linear operator. */
export interface DataOperator {
  /** Rows (observations). */
  readonly n: number;
  /** Columns kept by the mask. */
  readonly m: number;
  /** Column means (zeros when not centring). */
  readonly mean: Float64Array;
  /** Whether the operator subtracts the column means. */
  readonly centered: boolean;
  /** Per-column variance of X (ddof = 1 when centring, as sklearn's PCA; ddof = 0 otherwise). */
  readonly colVar: Float64Array;
  /** Stored entries in the kept columns (n·m for dense X). */
  readonly nnz: number;
  /** out (n × l) = X_c · M, with M m × l (row-major); rows accumulate in float64 whatever `out` holds. */
  mul<T extends Float64Array | Float32Array = Float64Array>(M: Float64Array, l: number, out?: T): T;
  /**
   * `mul` with the rows shared among `threads` threads (sparse X and `out` on shared memory); other
   * inputs compute it here as `mul` does.
   */
  mulAsync<T extends Float64Array | Float32Array>(
    M: Float64Array,
    l: number,
    out: T,
    threads: number,
    signal?: AbortSignal,
  ): Promise<T>;
  /** out (m × l) = X_cᵀ · M, with M n × l (row-major). */
  mulT(M: Float64Array, l: number, out?: Float64Array): Float64Array;
  /** The m × m Gram matrix X_cᵀX_c (float64, row-major, symmetric). */
  gram(): Float64Array;
  /**
   * The same Gram matrix with the rows shared among `threads` threads (sparse X on shared memory);
   * other inputs, or one thread, compute it here as `gram` does.
   */
  gramAsync(threads: number, signal?: AbortSignal): Promise<Float64Array>;
}

/** Options of `dataOperator`. */
export interface DataOperatorOptions {
  /** Keep only columns with mask[j] ≠ 0 (length = columns of X). */
  readonly mask?: ArrayLike<number | boolean> | null;
  /** Subtract column means (default true). */
  readonly center?: boolean;
  /**
   * Column sums and sums of squares of X over all its columns, when already known (PCA sums a big
   * sparse X on the job's threads with `csrColumnSumsAsync`); the operator then skips its own pass.
   */
  readonly columnSums?: { readonly sum: Float64Array; readonly sumSq: Float64Array };
}

/**
 * Wrap X as an implicit (centred) operator. A CSC input is switched to CSR once (row-major access is
 * what every product here wants); CSR and dense inputs are used in place, never copied or densified.
 */
export function dataOperator(x: Matrix, opts: DataOperatorOptions = {}): DataOperator {
  if (x.kind === "dense" && x.shape.length !== 2) throw new Error("dataOperator: dense X must be 2-d");
  const src: SparseMatrix | DenseArray = x.kind === "csc" ? switchCompression(x) : x;
  const n = src.shape[0] as number;
  const cols = src.shape[1] as number;
  const center = opts.center ?? true;
  // colMap: original column → kept column index, or -1.
  const colMap = new Int32Array(cols);
  let m = 0;
  for (let j = 0; j < cols; j++) colMap[j] = !opts.mask || opts.mask[j] ? m++ : -1;
  const kept = new Int32Array(m);
  for (let j = 0; j < cols; j++) if (colMap[j] >= 0) kept[colMap[j]] = j;
  const vals = valuesOf(src);
  const sparse = src.kind === "csr" ? src : null;
  const indptr = sparse?.indptr;
  const indices = sparse?.indices;

  // Column sums and sums of squares (float64) in one pass.
  const sum = new Float64Array(m);
  const sumSq = new Float64Array(m);
  let keptNnz = n * m;
  const given = opts.columnSums;
  if (given) {
    if (given.sum.length !== cols || given.sumSq.length !== cols)
      throw new Error(`dataOperator: columnSums has ${given.sum.length} columns, X has ${cols}`);
    for (let c = 0; c < m; c++) {
      sum[c] = given.sum[kept[c]];
      sumSq[c] = given.sumSq[kept[c]];
    }
    if (sparse) {
      const total = Number(indptr![n]);
      keptNnz = 0;
      // Branch-free: a third of the entries kept at random would mispredict a branch every other one.
      for (let k = 0; k < total; k++) keptNnz += (colMap[indices![k]] >>> 31) ^ 1;
    }
  } else if (sparse) {
    const total = Number(indptr![n]);
    keptNnz = 0;
    for (let k = 0; k < total; k++) {
      const c = colMap[indices![k]];
      if (c < 0) continue;
      keptNnz++;
      const v = vals[k];
      sum[c] += v;
      sumSq[c] += v * v;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const row = i * cols;
      for (let c = 0; c < m; c++) {
        const v = vals[row + kept[c]];
        sum[c] += v;
        sumSq[c] += v * v;
      }
    }
  }
  const mean = new Float64Array(m);
  const colVar = new Float64Array(m);
  const ddof = center ? 1 : 0;
  for (let c = 0; c < m; c++) {
    const mu = sum[c] / n;
    if (center) mean[c] = mu;
    colVar[c] = n > ddof ? Math.max(0, sumSq[c] - n * mu * mu) / (n - ddof) : 0;
  }

  const mul = (
    M: Float64Array,
    l: number,
    out: Float64Array | Float32Array = new Float64Array(n * l),
  ): Float64Array | Float32Array => {
    // 1 (μᵀ M), subtracted from every row when centring.
    const muM = new Float64Array(l);
    if (center) {
      for (let c = 0; c < m; c++) {
        const mu = mean[c];
        if (mu === 0) continue;
        const rm = c * l;
        for (let t = 0; t < l; t++) muM[t] += mu * M[rm + t];
      }
    }
    if (l === 1) {
      // Matrix–vector product (the implicit Lanczos step): no inner loop over columns of M.
      const mu0 = muM[0];
      for (let i = 0; i < n; i++) {
        let s = -mu0;
        if (sparse) {
          const end = Number(indptr![i + 1]);
          for (let k = Number(indptr![i]); k < end; k++) {
            const c = colMap[indices![k]];
            if (c >= 0) s += vals[k] * M[c];
          }
        } else if (m === cols) {
          const rx = i * cols;
          for (let c = 0; c < m; c++) s += vals[rx + c] * M[c];
        } else {
          const rx = i * cols;
          for (let c = 0; c < m; c++) s += vals[rx + kept[c]] * M[c];
        }
        out[i] = s;
      }
      return out;
    }
    // Accumulate each row in float64 and write it once (the output may be float32).
    const acc = new Float64Array(l);
    for (let i = 0; i < n; i++) {
      for (let t = 0; t < l; t++) acc[t] = -muM[t];
      if (sparse) {
        const end = Number(indptr![i + 1]);
        for (let k = Number(indptr![i]); k < end; k++) {
          const c = colMap[indices![k]];
          if (c < 0) continue;
          const v = vals[k];
          const rm = c * l;
          for (let t = 0; t < l; t++) acc[t] += v * M[rm + t];
        }
      } else {
        const rx = i * cols;
        for (let c = 0; c < m; c++) {
          const v = vals[rx + kept[c]];
          if (v === 0) continue;
          const rm = c * l;
          for (let t = 0; t < l; t++) acc[t] += v * M[rm + t];
        }
      }
      const ro = i * l;
      for (let t = 0; t < l; t++) out[ro + t] = acc[t];
    }
    return out;
  };

  const mulT = (M: Float64Array, l: number, out = new Float64Array(m * l)): Float64Array => {
    out.fill(0);
    if (l === 1) {
      for (let i = 0; i < n; i++) {
        const x = M[i];
        if (x === 0) continue;
        if (sparse) {
          const end = Number(indptr![i + 1]);
          for (let k = Number(indptr![i]); k < end; k++) {
            const c = colMap[indices![k]];
            if (c >= 0) out[c] += vals[k] * x;
          }
        } else {
          const rx = i * cols;
          for (let c = 0; c < m; c++) out[c] += vals[rx + kept[c]] * x;
        }
      }
    } else if (sparse) {
      for (let i = 0; i < n; i++) {
        const rm = i * l;
        const end = Number(indptr![i + 1]);
        for (let k = Number(indptr![i]); k < end; k++) {
          const c = colMap[indices![k]];
          if (c < 0) continue;
          const v = vals[k];
          const ro = c * l;
          for (let t = 0; t < l; t++) out[ro + t] += v * M[rm + t];
        }
      }
    } else {
      for (let i = 0; i < n; i++) {
        const rm = i * l;
        const rx = i * cols;
        for (let c = 0; c < m; c++) {
          const v = vals[rx + kept[c]];
          if (v === 0) continue;
          const ro = c * l;
          for (let t = 0; t < l; t++) out[ro + t] += v * M[rm + t];
        }
      }
    }
    if (center) {
      // Subtract μ (1ᵀ M).
      const colSum = new Float64Array(l);
      for (let i = 0; i < n; i++) {
        const rm = i * l;
        for (let t = 0; t < l; t++) colSum[t] += M[rm + t];
      }
      for (let c = 0; c < m; c++) {
        const mu = mean[c];
        if (mu === 0) continue;
        const ro = c * l;
        for (let t = 0; t < l; t++) out[ro + t] -= mu * colSum[t];
      }
    }
    return out;
  };

  const gram = (): Float64Array => {
    const g = gramOnWasm(m);
    if (sparse) sparseGramRows(indptr!, indices!, vals, colMap, 0, n, m, g);
    else {
      // Blocks of rows transposed into column panels, then dot products of panel rows.
      const B = 128;
      const panel = new Float64Array(m * B);
      for (let i0 = 0; i0 < n; i0 += B) {
        const rows = Math.min(B, n - i0);
        for (let r = 0; r < rows; r++) {
          const rx = (i0 + r) * cols;
          for (let c = 0; c < m; c++) panel[c * B + r] = vals[rx + kept[c]];
        }
        gramPanel(panel, B, rows, m, g);
      }
    }
    centreGram(g, m, n, mean);
    return g;
  };

  const mulAsync = async <T extends Float64Array | Float32Array>(
    M: Float64Array,
    l: number,
    out: T,
    threads: number,
    signal?: AbortSignal,
  ): Promise<T> => {
    if (sparse && threads > 1) {
      const muM = new Float64Array(l);
      if (center) for (let c = 0; c < m; c++) for (let t = 0; t < l; t++) muM[t] += mean[c] * M[c * l + t];
      if (await sparseMulThreads(indptr!, indices!, vals, colMap, n, M, l, muM, out, threads, signal))
        return out;
    }
    return mul(M, l, out) as T;
  };

  const gramAsync = async (threads: number, signal?: AbortSignal): Promise<Float64Array> => {
    if (!sparse || threads < 2) return gram();
    const g = await sparseGramThreads(indptr!, indices!, vals, colMap, n, m, threads, signal);
    if (!g) return gram();
    centreGram(g, m, n, mean);
    return g;
  };

  return {
    n,
    m,
    nnz: keptNnz,
    mean,
    centered: center,
    colVar,
    mul: mul as DataOperator["mul"],
    mulT,
    mulAsync,
    gram,
    gramAsync,
  };
}

/**
 * g[a, b] += Σ_r panel[a, r] · panel[b, r] for b ≥ a (panel m × B row-major, first `rows` used), in
 * 4 × 4 tiles so that each loaded value feeds four products (a plain dot loop is load-bound in JS).
 */
function gramPanel(panel: Float64Array, B: number, rows: number, m: number, g: Float64Array): void {
  const m4 = m - (m % 4);
  for (let a = 0; a < m4; a += 4) {
    const p0 = a * B;
    const p1 = p0 + B;
    const p2 = p1 + B;
    const p3 = p2 + B;
    for (let b = a; b < m4; b += 4) {
      const q0 = b * B;
      const q1 = q0 + B;
      const q2 = q1 + B;
      const q3 = q2 + B;
      let s00 = 0,
        s01 = 0,
        s02 = 0,
        s03 = 0,
        s10 = 0,
        s11 = 0,
        s12 = 0,
        s13 = 0;
      let s20 = 0,
        s21 = 0,
        s22 = 0,
        s23 = 0,
        s30 = 0,
        s31 = 0,
        s32 = 0,
        s33 = 0;
      for (let r = 0; r < rows; r++) {
        const x0 = panel[p0 + r];
        const x1 = panel[p1 + r];
        const x2 = panel[p2 + r];
        const x3 = panel[p3 + r];
        const y0 = panel[q0 + r];
        const y1 = panel[q1 + r];
        const y2 = panel[q2 + r];
        const y3 = panel[q3 + r];
        s00 += x0 * y0;
        s01 += x0 * y1;
        s02 += x0 * y2;
        s03 += x0 * y3;
        s10 += x1 * y0;
        s11 += x1 * y1;
        s12 += x1 * y2;
        s13 += x1 * y3;
        s20 += x2 * y0;
        s21 += x2 * y1;
        s22 += x2 * y2;
        s23 += x2 * y3;
        s30 += x3 * y0;
        s31 += x3 * y1;
        s32 += x3 * y2;
        s33 += x3 * y3;
      }
      // Lower-triangle entries of diagonal tiles are written too; the caller mirrors the upper one.
      const r0 = a * m + b;
      g[r0] += s00;
      g[r0 + 1] += s01;
      g[r0 + 2] += s02;
      g[r0 + 3] += s03;
      g[r0 + m] += s10;
      g[r0 + m + 1] += s11;
      g[r0 + m + 2] += s12;
      g[r0 + m + 3] += s13;
      g[r0 + 2 * m] += s20;
      g[r0 + 2 * m + 1] += s21;
      g[r0 + 2 * m + 2] += s22;
      g[r0 + 2 * m + 3] += s23;
      g[r0 + 3 * m] += s30;
      g[r0 + 3 * m + 1] += s31;
      g[r0 + 3 * m + 2] += s32;
      g[r0 + 3 * m + 3] += s33;
    }
  }
  // Remainder rows/columns (m not a multiple of 4): plain dots, upper triangle.
  for (let a = 0; a < m; a++) {
    const pa = a * B;
    for (let b = Math.max(a, m4); b < m; b++) {
      const pb = b * B;
      let s = 0;
      for (let r = 0; r < rows; r++) s += panel[pa + r] * panel[pb + r];
      g[a * m + b] += s;
    }
  }
}

/** A truncated SVD of the operator: X_c ≈ U diag(s) Vᵀ, with only V and s kept. */
export interface TruncatedSvd {
  /** Singular values, descending (length k). */
  readonly s: Float64Array;
  /** Right singular vectors (m × k, row-major), sign-fixed (largest |entry| positive per column). */
  readonly v: Float64Array;
  readonly k: number;
  /** Lanczos steps or power iterations used, for logs. */
  readonly iterations: number;
}

/** Options of the SVD solvers. */
export interface SvdOptions {
  /** Random stream for the starting vector / test matrix. */
  readonly rng: Rng;
  /** Abort check, called between iterations. */
  readonly signal?: AbortSignal;
  /** Progress in [0, 1]. */
  readonly progress?: (f: number) => void;
}

/** Flip each column of V (m × k) so that its largest-magnitude entry is positive (sklearn's svd_flip on Vᵀ). */
export function flipSigns(v: Float64Array, m: number, k: number): void {
  for (let c = 0; c < k; c++) {
    let best = 0;
    let at = 0;
    for (let j = 0; j < m; j++) {
      const a = Math.abs(v[j * k + c]);
      if (a > best) {
        best = a;
        at = j;
      }
    }
    if (v[at * k + c] < 0) for (let j = 0; j < m; j++) v[j * k + c] = -v[j * k + c];
  }
}

/** Options of `lanczosEigsh`. */
export interface LanczosOptions extends SvdOptions {
  /** Relative residual at which a Ritz pair counts as converged (default 1e-10). */
  readonly tol?: number;
  /** Largest Krylov dimension (default the operator size). */
  readonly maxSteps?: number;
}

/**
 * The k largest eigenpairs of a symmetric positive semi-definite operator of size m, by Lanczos
 * with full (twice-applied) reorthogonalisation and no restarts: the basis grows until the top k
 * Ritz pairs have residual ‖A y − θ y‖ = |β_j · e_jᵀ s| ≤ tol · θ_1. Returns values (descending) and
 * vectors (m × k).
 */
export function lanczosEigsh(
  matvec: (x: Float64Array, out: Float64Array) => void,
  m: number,
  k: number,
  opts: LanczosOptions,
): { values: Float64Array; vectors: Float64Array; steps: number } {
  if (k < 1 || k > m) throw new Error(`lanczosEigsh: k must be in [1, ${m}], got ${k}`);
  const tol = opts.tol ?? 1e-10;
  const maxSteps = Math.min(m, opts.maxSteps ?? m);
  const basis: Float64Array[] = [];
  const alpha: number[] = [];
  const beta: number[] = [];
  const w = new Float64Array(m);
  const start = (): Float64Array => {
    const q = new Float64Array(m);
    for (let i = 0; i < m; i++) q[i] = opts.rng.uniform(-1, 1);
    return q;
  };
  const orthogonalise = (x: Float64Array): void => {
    for (let pass = 0; pass < 2; pass++) {
      for (const q of basis) {
        // Two partial sums: a single running sum waits on each addition.
        let d0 = 0;
        let d1 = 0;
        let i = 0;
        for (; i + 1 < m; i += 2) {
          d0 += q[i] * x[i];
          d1 += q[i + 1] * x[i + 1];
        }
        if (i < m) d0 += q[i] * x[i];
        const d = d0 + d1;
        for (let i = 0; i < m; i++) x[i] -= d * q[i];
      }
    }
  };
  const normalise = (x: Float64Array): number => {
    let s = 0;
    for (let i = 0; i < m; i++) s += x[i] * x[i];
    const nrm = Math.sqrt(s);
    if (nrm > 0) for (let i = 0; i < m; i++) x[i] /= nrm;
    return nrm;
  };
  let q = start();
  normalise(q);
  let result: { values: Float64Array; vectors: Float64Array } | null = null;
  let nextCheck = Math.min(maxSteps, Math.max(2 * k + 1, k + 20));
  for (let j = 0; j < maxSteps; j++) {
    opts.signal?.throwIfAborted();
    basis.push(q);
    matvec(q, w);
    let a = 0;
    for (let i = 0; i < m; i++) a += q[i] * w[i];
    alpha.push(a);
    orthogonalise(w);
    let b = normalise(w);
    if (j + 1 < maxSteps && !(b > 1e-12 * Math.abs(alpha[0] || 1))) {
      // Invariant subspace found: continue from a fresh direction orthogonal to the basis (β = 0).
      const r = start();
      orthogonalise(r);
      normalise(r);
      b = 0;
      w.set(r);
    }
    beta.push(b);
    const steps = j + 1;
    if (steps >= nextCheck || steps === maxSteps) {
      const check = tridiagEigen(alpha, beta.slice(0, steps - 1), true);
      const theta1 = Math.abs(check.values[0]) || 1;
      let converged = steps === maxSteps;
      if (!converged && steps >= k) {
        converged = true;
        for (let c = 0; c < k; c++) {
          const res = Math.abs(b * check.vectors[c]);
          if (res > tol * theta1) {
            converged = false;
            break;
          }
        }
      }
      opts.progress?.(Math.min(0.95, steps / Math.max(nextCheck, 1)));
      if (converged) {
        result = ritzVectors(basis, tridiagEigen(alpha, beta.slice(0, steps - 1)), m, k, steps);
        break;
      }
      nextCheck = Math.min(maxSteps, steps + Math.max(10, Math.ceil(steps * 0.25)));
    }
    q = Float64Array.from(w);
  }
  if (!result) throw new Error("lanczosEigsh: did not converge");
  return { ...result, steps: basis.length };
}

/** V (m × k) = Q (the Lanczos basis, m × steps) · S[:, :k]. */
function ritzVectors(
  basis: Float64Array[],
  eig: { values: Float64Array; vectors: Float64Array },
  m: number,
  k: number,
  steps: number,
): { values: Float64Array; vectors: Float64Array } {
  const vectors = new Float64Array(m * k);
  for (let t = 0; t < steps; t++) {
    const qt = basis[t]!;
    for (let c = 0; c < k; c++) {
      const s = eig.vectors[t * steps + c];
      if (s === 0) continue;
      for (let i = 0; i < m; i++) vectors[i * k + c] += s * qt[i];
    }
  }
  return { values: eig.values.slice(0, k), vectors };
}

/**
 * Whether forming the m × m Gram matrix (one pass over X) is cheaper than ~`steps` applications of
 * X and Xᵀ (and the matrix fits: m ≤ 6000). For sparse data with m up to a few thousand it nearly
 * always is, which makes the exact Lanczos path cheaper than randomized power iterations too.
 */
export function preferGram(op: DataOperator, nnz: number, steps: number): boolean {
  if (op.m > 6000) return false;
  // Dense data: the tiled Gram (n·m²/2 flops at ~4 flops per load) beats ≥ 2·n·m per Lanczos step
  // once the spectrum is flat enough to need a few hundred steps, which scaled data often does.
  if (nnz === op.n * op.m) return op.m <= 4096;
  const perRow = nnz / Math.max(1, op.n);
  const gramCost = op.n * perRow * perRow * 0.5 + op.m * op.m * steps;
  const implicitCost = steps * 2 * nnz;
  return gramCost < implicitCost;
}

/** Whether `lanczosSvd(op, k, {exact})` forms the Gram matrix (so a caller may form it first, in parallel). */
export function lanczosUsesGram(op: DataOperator, k: number, exact?: boolean): boolean {
  return Boolean(exact) || preferGram(op, op.nnz, Math.max(2 * k + 1, 3 * k));
}

/**
 * Truncated SVD by Lanczos on the Gram operator (`svd_solver="arpack"`). The Gram matrix is formed
 * when that is cheaper than applying X repeatedly; `exact` forces it and runs to machine precision (`svd_solver="full"`).
 */
export function lanczosSvd(
  op: DataOperator,
  k: number,
  opts: SvdOptions & { exact?: boolean; tol?: number; gram?: Float64Array },
): TruncatedSvd {
  const { m, n } = op;
  let matvec: (x: Float64Array, out: Float64Array) => void;
  if (opts.gram || lanczosUsesGram(op, k, opts.exact)) {
    const g = opts.gram ?? op.gram();
    opts.progress?.(0.5);
    matvec = (x, out) => gramMatvec(g, m, x, out);
  } else {
    const tmp = new Float64Array(n);
    matvec = (x, out) => {
      op.mul(x, 1, tmp);
      op.mulT(tmp, 1, out);
    };
  }
  const eig = lanczosEigsh(matvec, m, k, { ...opts, tol: opts.exact ? 1e-13 : (opts.tol ?? 1e-9) });
  const s = new Float64Array(k);
  for (let c = 0; c < k; c++) s[c] = Math.sqrt(Math.max(0, eig.values[c]));
  flipSigns(eig.vectors, m, k);
  return { s, v: eig.vectors, k, iterations: eig.steps };
}

/**
 * out = g · x for a dense symmetric m × m g, two rows at a time with two partial sums each: one
 * running sum per row made every step wait on the previous addition (the processor's add latency,
 * not its throughput, set the pace). ~2× faster; the sums differ from a single running sum only by
 * rounding.
 */
export function gramMatvec(g: Float64Array, m: number, x: Float64Array, out: Float64Array): void {
  // A Gram matrix made on a WebAssembly memory: the SIMD product, the same sums (~3× faster).
  if (gramMatvecSimd(g, x, out)) return;
  const even = m - (m & 1);
  let a = 0;
  for (; a + 1 < m; a += 2) {
    const r0 = a * m;
    const r1 = r0 + m;
    let s0 = 0;
    let t0 = 0;
    let s1 = 0;
    let t1 = 0;
    for (let b = 0; b < even; b += 2) {
      const x0 = x[b];
      const x1 = x[b + 1];
      s0 += g[r0 + b] * x0;
      t0 += g[r0 + b + 1] * x1;
      s1 += g[r1 + b] * x0;
      t1 += g[r1 + b + 1] * x1;
    }
    if (even < m) {
      s0 += g[r0 + even] * x[even];
      s1 += g[r1 + even] * x[even];
    }
    out[a] = s0 + t0;
    out[a + 1] = s1 + t1;
  }
  for (; a < m; a++) {
    const r0 = a * m;
    let s0 = 0;
    for (let b = 0; b < m; b++) s0 += g[r0 + b] * x[b];
    out[a] = s0;
  }
}

/** Options of `randomizedSvd`. */
export interface RandomizedSvdOptions extends SvdOptions {
  /** Extra random directions beyond k (default 10, as scikit-learn). */
  readonly oversamples?: number;
  /** Power iterations (default 7 when k < 0.1·min(n, m), else 4: scikit-learn's "auto"). */
  readonly powerIterations?: number;
}

/**
 * Truncated SVD by the randomized range finder (Halko et al. 2011, algorithms 4.4/5.1): q power
 * (subspace) iterations from a Gaussian m × l start, Householder re-orthonormalisation, then the exact
 * SVD of the small projected matrix B = QᵀX_c (via QR of Bᵀ and one-sided Jacobi).
 */
export function randomizedSvd(op: DataOperator, k: number, opts: RandomizedSvdOptions): TruncatedSvd {
  const { n, m } = op;
  const l = Math.min(m, n, k + (opts.oversamples ?? 10));
  const q = opts.powerIterations ?? (k < 0.1 * Math.min(n, m) ? 7 : 4);
  // Subspace iteration on X_cᵀX_c, re-orthonormalised on the short (m) side only: the n × l products
  // in between have condition ≤ σ1/σl, harmless in float64, and n-side QRs would dominate the cost.
  let z: Float64Array = new Float64Array(m * l);
  for (let i = 0; i < z.length; i++) z[i] = opts.rng.normal();
  let y: Float64Array = new Float64Array(n * l);
  for (let it = 0; it < q; it++) {
    opts.signal?.throwIfAborted();
    y = op.mul(z, l, y);
    z = op.mulT(y, l, z);
    qrThin(z, m, l);
    opts.progress?.((it + 1) / (q + 1));
  }
  y = op.mul(z, l, y);
  qrThin(y, n, l);
  // Bᵀ = X_cᵀ Q (m × l); Bᵀ = Q2 R; R = Ur S Vrᵀ ⇒ B = Vr S (Q2 Ur)ᵀ, right singular vectors Q2 Ur.
  const bt = op.mulT(y, l);
  const r = qrThin(bt, m, l);
  // R is l × l upper triangular; its SVD is R = Ur S Vrᵀ (Jacobi needs rows ≥ cols: square is fine).
  const svd = svdJacobi(r, l, l);
  const vFull = matmul(bt, svd.u, m, l, l); // m × l
  const v = new Float64Array(m * k);
  for (let j = 0; j < m; j++) for (let c = 0; c < k; c++) v[j * k + c] = vFull[j * l + c];
  const s = svd.s.slice(0, k);
  flipSigns(v, m, k);
  return { s, v, k, iterations: q };
}

/** X_pca (n × k, float32 row-major) = X_c · V. */
export function project(op: DataOperator, v: Float64Array, k: number, out?: Float32Array): Float32Array {
  return op.mul(v, k, out ?? new Float32Array(op.n * k));
}

/** `project` with the cells shared among `threads` threads (see `DataOperator.mulAsync`). */
export function projectAsync(
  op: DataOperator,
  v: Float64Array,
  k: number,
  out: Float32Array,
  threads: number,
  signal?: AbortSignal,
): Promise<Float32Array> {
  return op.mulAsync(v, k, out, threads, signal);
}

/**
 * Ordinary least squares for many responses that share one design matrix: the kernel behind
 * `sc.pp.regress_out` and the location/scale fit of `sc.pp.combat`.
 *
 * With a design D (n × p, p small) and responses Y (n × m, one column per gene), the coefficients are
 * B = (DᵀD)⁻¹ DᵀY. DᵀD is formed once (p × p) and factored by Cholesky; when it is singular the
 * Moore–Penrose pseudo-inverse (from a Jacobi eigen-decomposition) gives the minimum-norm solution, as
 * a GLM fit with `pinv` would. DᵀY is accumulated straight from the stored non-zeros of a sparse Y, so
 * the fit never densifies Y; only the residuals, which are dense by nature, are.
 */
import { allocArray, type Matrix, type SparseMatrix, type TypedArray } from "../data/arrays.js";
import { symEigenJacobi } from "./linalg.js";
import { switchCompression } from "./sparse.js";

/** A row-major design matrix: `data[i * cols + k]` is regressor `k` of observation `i`. */
export interface DesignMatrix {
  readonly data: Float64Array;
  readonly rows: number;
  readonly cols: number;
}

/** Row access to a response matrix: CSR or dense (CSC is switched to CSR once). */
export type RowMatrix =
  | {
      readonly kind: "csr";
      readonly rows: number;
      readonly cols: number;
      readonly indptr: ArrayLike<number>;
      readonly indices: ArrayLike<number>;
      readonly data: ArrayLike<number>;
    }
  | {
      readonly kind: "dense";
      readonly rows: number;
      readonly cols: number;
      readonly data: ArrayLike<number>;
    };

/** Numbers of a typed array (int64 data converted to float64; everything else used as is). */
function numeric(a: TypedArray): ArrayLike<number> {
  if (a instanceof BigInt64Array || a instanceof BigUint64Array)
    return Float64Array.from(a, (v) => Number(v));
  return a as ArrayLike<number>;
}

/** View a dense or sparse 2-d matrix row by row (a CSC matrix is switched to CSR, one O(nnz) copy). */
export function rowMatrix(m: Matrix): RowMatrix {
  if (m.kind === "dense") {
    if (m.shape.length !== 2) throw new Error(`regression: expected a 2-d matrix, got shape [${m.shape}]`);
    return { kind: "dense", rows: m.shape[0]!, cols: m.shape[1]!, data: numeric(m.data) };
  }
  const csr: SparseMatrix = m.kind === "csc" ? switchCompression(m) : m;
  return {
    kind: "csr",
    rows: csr.shape[0],
    cols: csr.shape[1],
    indptr: csr.indptr,
    indices: csr.indices,
    data: numeric(csr.data),
  };
}

/** DᵀD (p × p, row-major, symmetric). */
export function gramMatrix(d: DesignMatrix): Float64Array {
  const { data, rows: n, cols: p } = d;
  const g = new Float64Array(p * p);
  for (let i = 0; i < n; i++) {
    const o = i * p;
    for (let a = 0; a < p; a++) {
      const va = data[o + a]!;
      if (va === 0) continue;
      for (let b = a; b < p; b++) g[a * p + b]! += va * data[o + b]!;
    }
  }
  for (let a = 0; a < p; a++) for (let b = 0; b < a; b++) g[a * p + b] = g[b * p + a]!;
  return g;
}

/**
 * Lower Cholesky factor L of a symmetric positive-definite `a` (p × p), or null when a pivot is not
 * clearly positive (the matrix is singular or numerically so, relative to its largest diagonal entry).
 */
export function cholesky(a: Float64Array, p: number): Float64Array | null {
  let maxDiag = 0;
  for (let i = 0; i < p; i++) maxDiag = Math.max(maxDiag, Math.abs(a[i * p + i]!));
  const tol = maxDiag * 1e-13;
  const l = new Float64Array(p * p);
  for (let j = 0; j < p; j++) {
    let s = a[j * p + j]!;
    for (let k = 0; k < j; k++) s -= l[j * p + k]! * l[j * p + k]!;
    if (!(s > tol)) return null;
    const djj = Math.sqrt(s);
    l[j * p + j] = djj;
    for (let i = j + 1; i < p; i++) {
      let t = a[i * p + j]!;
      for (let k = 0; k < j; k++) t -= l[i * p + k]! * l[j * p + k]!;
      l[i * p + j] = t / djj;
    }
  }
  return l;
}

/**
 * The inverse of a symmetric positive semi-definite matrix (p × p): by Cholesky when it is regular,
 * else its pseudo-inverse (eigenvalues below 1e-12 of the largest are dropped) with `singular: true`.
 */
export function invertSymmetric(a: Float64Array, p: number): { inverse: Float64Array; singular: boolean } {
  const l = cholesky(a, p);
  const inv = new Float64Array(p * p);
  if (l) {
    // Solve L Lᵀ X = I column by column.
    const y = new Float64Array(p);
    for (let c = 0; c < p; c++) {
      for (let i = 0; i < p; i++) {
        let s = i === c ? 1 : 0;
        for (let k = 0; k < i; k++) s -= l[i * p + k]! * y[k]!;
        y[i] = s / l[i * p + i]!;
      }
      for (let i = p - 1; i >= 0; i--) {
        let s = y[i]!;
        for (let k = i + 1; k < p; k++) s -= l[k * p + i]! * inv[k * p + c]!;
        inv[i * p + c] = s / l[i * p + i]!;
      }
    }
    return { inverse: inv, singular: false };
  }
  const { values, vectors } = symEigenJacobi(a, p);
  let maxEig = 0;
  for (const e of values) maxEig = Math.max(maxEig, Math.abs(e));
  const cut = maxEig * 1e-12;
  for (let k = 0; k < p; k++) {
    const e = values[k]!;
    if (!(Math.abs(e) > cut)) continue;
    for (let i = 0; i < p; i++) {
      const vik = vectors[i * p + k]! / e;
      if (vik === 0) continue;
      for (let j = 0; j < p; j++) inv[i * p + j]! += vik * vectors[j * p + k]!;
    }
  }
  return { inverse: inv, singular: true };
}

/** DᵀY (p × m, row-major), accumulated from the stored entries of Y (sparse rows cost their non-zeros). */
export function designTransposeTimes(d: DesignMatrix, y: RowMatrix, signal?: AbortSignal): Float64Array {
  const { rows: n, cols: p } = d;
  if (y.rows !== n) throw new Error(`regression: design has ${n} rows, the responses ${y.rows}`);
  const m = y.cols;
  const out = new Float64Array(p * m);
  const dd = d.data;
  if (y.kind === "csr") {
    const { indptr, indices, data } = y;
    for (let i = 0; i < n; i++) {
      if (signal && (i & 4095) === 0) signal.throwIfAborted();
      const end = indptr[i + 1]!;
      for (let k = 0; k < p; k++) {
        const dik = dd[i * p + k]!;
        if (dik === 0) continue;
        const o = k * m;
        for (let t = indptr[i]!; t < end; t++) out[o + indices[t]!]! += dik * data[t]!;
      }
    }
  } else {
    const data = y.data;
    for (let i = 0; i < n; i++) {
      if (signal && (i & 1023) === 0) signal.throwIfAborted();
      const r = i * m;
      for (let k = 0; k < p; k++) {
        const dik = dd[i * p + k]!;
        if (dik === 0) continue;
        const o = k * m;
        for (let j = 0; j < m; j++) out[o + j]! += dik * data[r + j]!;
      }
    }
  }
  return out;
}

/** Result of `leastSquares`. */
export interface LeastSquaresFit {
  /** Coefficients B (p × m, row-major): regressor k, response j at `k * m + j`. */
  readonly coef: Float64Array;
  /** Whether DᵀD was singular, so that B is the minimum-norm solution. */
  readonly singular: boolean;
}

/** Least-squares coefficients of every column of Y on the shared design D: B = (DᵀD)⁻¹ DᵀY. */
export function leastSquares(d: DesignMatrix, y: RowMatrix, signal?: AbortSignal): LeastSquaresFit {
  const p = d.cols;
  const m = y.cols;
  const { inverse, singular } = invertSymmetric(gramMatrix(d), p);
  const dty = designTransposeTimes(d, y, signal);
  const coef = new Float64Array(p * m);
  for (let a = 0; a < p; a++) {
    for (let b = 0; b < p; b++) {
      const w = inverse[a * p + b]!;
      if (w === 0) continue;
      const oa = a * m;
      const ob = b * m;
      for (let j = 0; j < m; j++) coef[oa + j]! += w * dty[ob + j]!;
    }
  }
  return { coef, singular };
}

/** Columns of Y whose values are all equal (implicit zeros of a sparse column count as values). */
export function constantColumns(y: RowMatrix): Uint8Array {
  const { rows: n, cols: m } = y;
  const lo = new Float64Array(m).fill(Infinity);
  const hi = new Float64Array(m).fill(-Infinity);
  if (y.kind === "csr") {
    const seen = new Float64Array(m);
    const { indptr, indices, data } = y;
    for (let t = 0; t < indptr[n]!; t++) {
      const j = indices[t]!;
      const v = data[t]!;
      seen[j]!++;
      if (v < lo[j]!) lo[j] = v;
      if (v > hi[j]!) hi[j] = v;
    }
    for (let j = 0; j < m; j++) {
      if (seen[j]! < n) {
        if (0 < lo[j]!) lo[j] = 0;
        if (0 > hi[j]!) hi[j] = 0;
      }
    }
  } else {
    const data = y.data;
    for (let i = 0; i < n; i++) {
      const r = i * m;
      for (let j = 0; j < m; j++) {
        const v = data[r + j]!;
        if (v < lo[j]!) lo[j] = v;
        if (v > hi[j]!) hi[j] = v;
      }
    }
  }
  const out = new Uint8Array(m);
  for (let j = 0; j < m; j++) out[j] = n === 0 || lo[j] === hi[j] ? 1 : 0;
  return out;
}

/** Float output of the residual kernels. */
export type FloatArray = Float32Array | Float64Array;

/**
 * Write the residuals Y − D·B into `out` (n × m, row-major, dense), computed in float64 and rounded
 * once to `out`'s type. Columns flagged in `keep` are copied unchanged instead.
 */
export function residualsInto(
  d: DesignMatrix,
  y: RowMatrix,
  coef: Float64Array,
  out: FloatArray,
  keep?: Uint8Array,
  signal?: AbortSignal,
): FloatArray {
  const { rows: n, cols: p } = d;
  const m = y.cols;
  if (out.length !== n * m) throw new Error(`regression: output has ${out.length} values, expected ${n * m}`);
  const row = new Float64Array(m);
  const dd = d.data;
  for (let i = 0; i < n; i++) {
    if (signal && (i & 1023) === 0) signal.throwIfAborted();
    row.fill(0);
    for (let k = 0; k < p; k++) {
      const dik = dd[i * p + k]!;
      if (dik === 0) continue;
      const o = k * m;
      for (let j = 0; j < m; j++) row[j]! -= dik * coef[o + j]!;
    }
    if (keep) for (let j = 0; j < m; j++) if (keep[j]) row[j] = 0;
    if (y.kind === "csr") {
      const { indptr, indices, data } = y;
      for (let t = indptr[i]!; t < indptr[i + 1]!; t++) row[indices[t]!]! += data[t];
    } else {
      const data = y.data;
      const r = i * m;
      for (let j = 0; j < m; j++) row[j]! += data[r + j];
    }
    out.set(row, i * m);
  }
  return out;
}

/**
 * Regress every column j of Y on its own two-column design [1, μ_j], where μ_j holds, per row, the
 * mean of column j within the row's category (`codes[i]`, -1 = missing: regressor 0). This is
 * scanpy's `regress_out` on one categorical key. Without missing codes the fit is exact (slope 1,
 * intercept 0) and the residual is the value minus its category mean. Constant columns are copied
 * unchanged (scanpy skips them). The category means are rounded to float32, as scanpy stores them.
 */
export function categoricalResidualsInto(
  y: RowMatrix,
  codes: Int32Array,
  nCategories: number,
  out: FloatArray,
  signal?: AbortSignal,
): FloatArray {
  const { rows: n, cols: m } = y;
  if (codes.length !== n) throw new Error(`regression: ${codes.length} category codes for ${n} rows`);
  if (out.length !== n * m) throw new Error(`regression: output has ${out.length} values, expected ${n * m}`);
  const sums = new Float64Array(nCategories * m);
  const counts = new Float64Array(nCategories);
  for (let i = 0; i < n; i++) if (codes[i]! >= 0) counts[codes[i]!]!++;
  if (y.kind === "csr") {
    const { indptr, indices, data } = y;
    for (let i = 0; i < n; i++) {
      const c = codes[i]!;
      if (c < 0) continue;
      const o = c * m;
      for (let t = indptr[i]!; t < indptr[i + 1]!; t++) sums[o + indices[t]!]! += data[t];
    }
  } else {
    const data = y.data;
    for (let i = 0; i < n; i++) {
      const c = codes[i]!;
      if (c < 0) continue;
      const o = c * m;
      const r = i * m;
      for (let j = 0; j < m; j++) sums[o + j]! += data[r + j];
    }
  }
  // An empty category has a NaN mean in numpy; no row uses it, so 0 does the same here.
  const means = new Float64Array(nCategories * m);
  for (let c = 0; c < nCategories; c++) {
    const cnt = counts[c]!;
    for (let j = 0; j < m; j++) means[c * m + j] = cnt > 0 ? Math.fround(sums[c * m + j]! / cnt) : 0;
  }
  // Per column: OLS of y on [1, μ] from the sufficient statistics Σμ, Σμ², Σy, Σμy.
  const sumMu = new Float64Array(m);
  const sumMu2 = new Float64Array(m);
  const sumY = new Float64Array(m);
  const sumMuY = new Float64Array(m);
  for (let c = 0; c < nCategories; c++) {
    const cnt = counts[c]!;
    for (let j = 0; j < m; j++) {
      const mu = means[c * m + j]!;
      sumMu[j]! += cnt * mu;
      sumMu2[j]! += cnt * mu * mu;
      sumY[j]! += sums[c * m + j];
      sumMuY[j]! += mu * sums[c * m + j]!;
    }
  }
  // Rows with a missing code contribute y to Σy but μ = 0 to the other sums.
  if (counts.reduce((a, b) => a + b, 0) < n) {
    if (y.kind === "csr") {
      const { indptr, indices, data } = y;
      for (let i = 0; i < n; i++) {
        if (codes[i]! >= 0) continue;
        for (let t = indptr[i]!; t < indptr[i + 1]!; t++) sumY[indices[t]!]! += data[t];
      }
    } else {
      for (let i = 0; i < n; i++) {
        if (codes[i]! >= 0) continue;
        for (let j = 0; j < m; j++) sumY[j]! += y.data[i * m + j];
      }
    }
  }
  const intercept = new Float64Array(m);
  const slope = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    const muBar = sumMu[j]! / n;
    const yBar = sumY[j]! / n;
    const sxx = sumMu2[j]! - n * muBar * muBar;
    const sxy = sumMuY[j]! - n * muBar * yBar;
    if (sxx > 1e-12 * Math.max(sumMu2[j]!, Number.MIN_VALUE)) {
      slope[j] = sxy / sxx;
      intercept[j] = yBar - slope[j]! * muBar;
    } else {
      // A constant regressor: the minimum-norm fit is the column mean.
      slope[j] = 0;
      intercept[j] = yBar;
    }
  }
  const keep = constantColumns(y);
  const row = new Float64Array(m);
  for (let i = 0; i < n; i++) {
    if (signal && (i & 1023) === 0) signal.throwIfAborted();
    const c = codes[i]!;
    for (let j = 0; j < m; j++) {
      row[j] = keep[j] ? 0 : -(intercept[j]! + slope[j]! * (c >= 0 ? means[c * m + j]! : 0));
    }
    if (y.kind === "csr") {
      const { indptr, indices, data } = y;
      for (let t = indptr[i]!; t < indptr[i + 1]!; t++) row[indices[t]!]! += data[t];
    } else {
      const r = i * m;
      for (let j = 0; j < m; j++) row[j]! += y.data[r + j];
    }
    out.set(row, i * m);
  }
  return out;
}

/** A dense output buffer on shared memory for an n × m float result. */
export function allocFloat(dtype: "float32" | "float64", length: number): FloatArray {
  return allocArray(dtype, length) as FloatArray;
}

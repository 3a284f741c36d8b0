/**
 * CSR kernels shared by the preprocessing operations: row and column sums, non-zero counts, means and
 * variances, row scaling and element-wise maps into new arrays, and row/column subsetting. Every
 * output is a new array (on SharedArrayBuffer where it is a matrix part); inputs are never written.
 * Index arrays a result does not change (indices and indptr of a row scaling) are shared with the
 * input rather than copied: values are immutable, so sharing is safe and halves the memory.
 */
import {
  allocArray,
  type DType,
  type IndexArray,
  type SparseMatrix,
  type TypedArray,
} from "../data/arrays.js";
import { allocIndex } from "./sparse.js";

const CACHE_BITS = 12;
const CACHE_MASK = (1 << CACHE_BITS) - 1;

/** A typed array whose elements read as JS numbers (every numeric dtype except int64/uint64). */
export type NumberArray = Exclude<TypedArray, BigInt64Array | BigUint64Array>;

/** The data of a matrix as numbers: int64/uint64 data is converted to float64 (a copy), others returned as is. */
export function numberData(a: TypedArray): NumberArray {
  if (a instanceof BigInt64Array || a instanceof BigUint64Array) {
    const out = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) out[i] = Number(a[i]);
    return out;
  }
  return a;
}

/** Throw unless `m` is CSR (`what` names the caller in the message). */
export function assertCsr(m: SparseMatrix, what: string): void {
  if (m.kind !== "csr") throw new Error(`${what}: expected a CSR matrix, got ${m.kind}`);
}

/** Number of rows of a CSR matrix. */
function rowsOf(m: SparseMatrix): number {
  return m.shape[0];
}

/**
 * Sum of each row, accumulated in float64. With `columnMask`, only columns whose mask byte is 1
 * count (a subset such as mitochondrial genes).
 */
export function csrRowSums(m: SparseMatrix, columnMask?: Uint8Array): Float64Array {
  assertCsr(m, "csrRowSums");
  const n = rowsOf(m);
  const data = numberData(m.data);
  const { indptr, indices } = m;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    const end = indptr[i + 1]!;
    if (columnMask) {
      for (let k = indptr[i]!; k < end; k++) if (columnMask[indices[k]!]) s += data[k]!;
    } else {
      for (let k = indptr[i]!; k < end; k++) s += data[k]!;
    }
    out[i] = s;
  }
  return out;
}

/** Stored values per row that are non-zero (`positiveOnly`: greater than zero, as `X > 0` counts). */
export function csrRowNnz(m: SparseMatrix, positiveOnly = false): Int32Array {
  assertCsr(m, "csrRowNnz");
  const n = rowsOf(m);
  const data = numberData(m.data);
  const { indptr } = m;
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let c = 0;
    const end = indptr[i + 1]!;
    if (positiveOnly) {
      for (let k = indptr[i]!; k < end; k++) if (data[k]! > 0) c++;
    } else {
      for (let k = indptr[i]!; k < end; k++) if (data[k] !== 0) c++;
    }
    out[i] = c;
  }
  return out;
}

/** Options of the column reductions. */
export interface ColumnReduceOptions {
  /** Only rows whose mask byte is 1 take part. */
  readonly rowMask?: Uint8Array;
}

/** Sum of each column, accumulated in float64. */
export function csrColumnSums(m: SparseMatrix, opts: ColumnReduceOptions = {}): Float64Array {
  assertCsr(m, "csrColumnSums");
  const data = numberData(m.data);
  const { indptr, indices } = m;
  const out = new Float64Array(m.shape[1]);
  const mask = opts.rowMask;
  const n = rowsOf(m);
  for (let i = 0; i < n; i++) {
    if (mask && !mask[i]) continue;
    const end = indptr[i + 1]!;
    for (let k = indptr[i]!; k < end; k++) out[indices[k]!]! += data[k];
  }
  return out;
}

/** Non-zero stored values per column (`positiveOnly`: greater than zero). */
export function csrColumnNnz(
  m: SparseMatrix,
  positiveOnly = false,
  opts: ColumnReduceOptions = {},
): Int32Array {
  assertCsr(m, "csrColumnNnz");
  const data = numberData(m.data);
  const { indptr, indices } = m;
  const out = new Int32Array(m.shape[1]);
  const mask = opts.rowMask;
  const n = rowsOf(m);
  for (let i = 0; i < n; i++) {
    if (mask && !mask[i]) continue;
    const end = indptr[i + 1]!;
    if (positiveOnly) {
      for (let k = indptr[i]!; k < end; k++) if (data[k]! > 0) out[indices[k]!]!++;
    } else {
      for (let k = indptr[i]!; k < end; k++) if (data[k] !== 0) out[indices[k]!]!++;
    }
  }
  return out;
}

/** Means and variances along an axis. */
export interface MeanVar {
  readonly mean: Float64Array;
  readonly var: Float64Array;
}

/** Options of `csrColumnMeanVar`. */
export interface ColumnMeanVarOptions extends ColumnReduceOptions {
  /** Delta degrees of freedom of the variance (1: unbiased, as scanpy's `correction=1`). Default 0. */
  readonly ddof?: number;
  /**
   * Square float32 values in float32 before adding them to the float64 sum, as scanpy's numba kernel
   * does (`value * value` of two float32). Reproduces its variances to the last bits. Default false.
   */
  readonly float32Squares?: boolean;
  /** Transform applied to each stored value before it is summed (for example `expm1`); zero must map to zero. */
  readonly transform?: (v: number) => number;
}

/**
 * Mean and variance of each column (variance as E[x²] − E[x]², like scanpy's sparse kernel), over
 * all rows or the rows of `rowMask`.
 */
export function csrColumnMeanVar(m: SparseMatrix, opts: ColumnMeanVarOptions = {}): MeanVar {
  assertCsr(m, "csrColumnMeanVar");
  const data = numberData(m.data);
  const { indptr, indices } = m;
  const cols = m.shape[1];
  const sums = new Float64Array(cols);
  const sq = new Float64Array(cols);
  const mask = opts.rowMask;
  const f32 = opts.float32Squares === true;
  const tf = opts.transform;
  const n = rowsOf(m);
  let used = 0;
  if (tf && data instanceof Float32Array) {
    // Transformed float32 values through a bit-keyed cache (see mapFloat32Cached): v and v² at once.
    const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
    const keys = new Uint32Array(CACHE_MASK + 1);
    const v0 = tf(0);
    const vals = new Float64Array(CACHE_MASK + 1).fill(v0);
    const sqs = new Float64Array(CACHE_MASK + 1).fill(f32 ? Math.fround(v0 * v0) : v0 * v0);
    for (let i = 0; i < n; i++) {
      if (mask && !mask[i]) continue;
      used++;
      const end = indptr[i + 1]!;
      for (let k = indptr[i]!; k < end; k++) {
        const b = bits[k]!;
        const h = (b ^ (b >>> CACHE_BITS) ^ (b >>> 24)) & CACHE_MASK;
        if (keys[h] !== b) {
          const v = tf(data[k]!);
          keys[h] = b;
          vals[h] = v;
          sqs[h] = f32 ? Math.fround(v * v) : v * v;
        }
        const j = indices[k]!;
        sums[j]! += vals[h];
        sq[j]! += sqs[h];
      }
    }
    return finishMeanVar(sums, sq, used, opts.ddof ?? 0);
  }
  for (let i = 0; i < n; i++) {
    if (mask && !mask[i]) continue;
    used++;
    const end = indptr[i + 1]!;
    if (tf) {
      for (let k = indptr[i]!; k < end; k++) {
        const v = tf(data[k]!);
        const j = indices[k]!;
        sums[j]! += v;
        sq[j]! += f32 ? Math.fround(v * v) : v * v;
      }
    } else if (f32) {
      for (let k = indptr[i]!; k < end; k++) {
        const v = data[k]!;
        const j = indices[k]!;
        sums[j]! += v;
        sq[j]! += Math.fround(v * v);
      }
    } else {
      for (let k = indptr[i]!; k < end; k++) {
        const v = data[k]!;
        const j = indices[k]!;
        sums[j]! += v;
        sq[j]! += v * v;
      }
    }
  }
  return finishMeanVar(sums, sq, used, opts.ddof ?? 0);
}

/** Turn sums and sums of squares over `n` values into means and variances. */
export function finishMeanVar(sums: Float64Array, sq: Float64Array, n: number, ddof: number): MeanVar {
  const mean = new Float64Array(sums.length);
  const variance = new Float64Array(sums.length);
  const corr = ddof && n !== ddof ? n / (n - ddof) : 1;
  for (let j = 0; j < sums.length; j++) {
    const mu = sums[j]! / n;
    mean[j] = mu;
    variance[j] = (sq[j]! / n - mu * mu) * corr;
  }
  return { mean, var: variance };
}

/** Mean and variance of each row (E[x²] − E[x]² over all columns, zeros included). */
export function csrRowMeanVar(m: SparseMatrix, ddof = 0): MeanVar {
  assertCsr(m, "csrRowMeanVar");
  const data = numberData(m.data);
  const { indptr } = m;
  const n = rowsOf(m);
  const cols = m.shape[1];
  const mean = new Float64Array(n);
  const variance = new Float64Array(n);
  const corr = ddof && cols !== ddof ? cols / (cols - ddof) : 1;
  for (let i = 0; i < n; i++) {
    let s = 0;
    let q = 0;
    const end = indptr[i + 1]!;
    for (let k = indptr[i]!; k < end; k++) {
      const v = data[k]!;
      s += v;
      q += v * v;
    }
    const mu = s / cols;
    mean[i] = mu;
    variance[i] = (q / cols - mu * mu) * corr;
  }
  return { mean, var: variance };
}

/** Options of `csrScaleRows`. */
export interface ScaleRowsOptions {
  /** dtype of the new data array (float32 or float64). Default: float32 for float32/integer input, else float64. */
  readonly dtype?: "float32" | "float64";
  /** Divide by the factor instead of multiplying. Default false. */
  readonly divide?: boolean;
}

/** The float dtype an element-wise result takes for input data of `dtype` (scanpy casts integers to float32). */
export function floatDtypeFor(dtype: DType): "float32" | "float64" {
  return dtype === "float64" ? "float64" : "float32";
}

/**
 * A new CSR matrix whose row `i` is row `i` of `m` multiplied (or divided) by `factors[i]`. The data
 * array is new; indices and indptr are shared with `m`. In float32 the product is rounded once, as
 * numpy's float32 arithmetic rounds it. (`csrScaleRowsAsync` in `csr-threads.ts` shares the rows
 * among threads.)
 */
export function csrScaleRows(
  m: SparseMatrix,
  factors: ArrayLike<number>,
  opts: ScaleRowsOptions = {},
  signal?: AbortSignal,
): SparseMatrix {
  const { n, out } = scaleRowsTarget(m, factors, opts);
  const src = numberData(m.data);
  const divide = opts.divide === true ? 1 : 0;
  const step = 0x10000;
  for (let r0 = 0; r0 < n; r0 += step) {
    signal?.throwIfAborted();
    scaleRowsRange(m.indptr, src, out, factors, r0, Math.min(n, r0 + step), divide);
  }
  return scaledRows(m, out);
}

/** Check a row scaling's arguments and allocate its new data array. */
export function scaleRowsTarget(
  m: SparseMatrix,
  factors: ArrayLike<number>,
  opts: ScaleRowsOptions,
): { n: number; out: Float32Array | Float64Array } {
  assertCsr(m, "csrScaleRows");
  const n = rowsOf(m);
  if (factors.length !== n) throw new Error(`csrScaleRows: ${factors.length} factors for ${n} rows`);
  const dtype = opts.dtype ?? floatDtypeFor(m.dtype);
  return { n, out: allocArray(dtype, Number(m.indptr[n])) as Float32Array | Float64Array };
}

/** The CSR matrix of `m`'s layout with the scaled values `out`. */
export function scaledRows(m: SparseMatrix, out: Float32Array | Float64Array): SparseMatrix {
  const dtype = out instanceof Float32Array ? "float32" : "float64";
  return { kind: "csr", dtype, shape: m.shape, data: out, indices: m.indices, indptr: m.indptr };
}

/**
 * out[k] = src[k] / factors[i] (or × when `divide` is 0) for the stored values of rows r0…r1−1.
 * Self-contained, so its source also runs in a worker as is.
 */
export function scaleRowsRange(
  indptr: ArrayLike<number | bigint>,
  src: ArrayLike<number>,
  out: Float32Array | Float64Array,
  factors: ArrayLike<number>,
  r0: number,
  r1: number,
  divide: number,
): void {
  for (let i = r0; i < r1; i++) {
    const f = factors[i] as number;
    const end = Number(indptr[i + 1]);
    if (divide) for (let k = Number(indptr[i]); k < end; k++) out[k] = (src[k] as number) / f;
    else for (let k = Number(indptr[i]); k < end; k++) out[k] = (src[k] as number) * f;
  }
}

/**
 * `out[k] = f(src[k])` over float32 input, with a small direct-mapped cache keyed by each value's
 * bits: normalised counts repeat (every count of 1 in a cell maps to the same value), so most
 * elements skip the transcendental call. `f` must be a pure function of the value.
 */
export function mapFloat32Cached(
  src: Float32Array,
  out: Float32Array | Float64Array,
  f: (v: number) => number,
  signal?: AbortSignal,
): void {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  const keys = new Uint32Array(CACHE_MASK + 1);
  const vals = new Float64Array(CACHE_MASK + 1);
  // Key 0 is +0.0: seed it so an empty slot never matches another value wrongly.
  for (let h = 0; h <= CACHE_MASK; h++) vals[h] = f(0);
  const n = src.length;
  for (let k = 0; k < n; k++) {
    if (signal && (k & 0xfffff) === 0) signal.throwIfAborted();
    const b = bits[k]!;
    const h = (b ^ (b >>> CACHE_BITS) ^ (b >>> 24)) & CACHE_MASK;
    if (keys[h] === b) out[k] = vals[h]!;
    else {
      const v = f(src[k]!);
      keys[h] = b;
      vals[h] = v;
      out[k] = v;
    }
  }
}

/**
 * A new sparse matrix (same layout as `m`, CSR or CSC) with `f` applied to every stored value.
 * `f(0)` should be 0 so that the implicit zeros stay right. Indices and indptr are shared.
 */
export function mapStored(
  m: SparseMatrix,
  f: (v: number) => number,
  dtype: "float32" | "float64" = floatDtypeFor(m.dtype),
  signal?: AbortSignal,
): SparseMatrix {
  const src = numberData(m.data);
  const nnz = src.length;
  const out = allocArray(dtype, nnz) as Float32Array | Float64Array;
  if (src instanceof Float32Array) mapFloat32Cached(src, out, f, signal);
  else {
    for (let k = 0; k < nnz; k++) {
      if (signal && (k & 0xfffff) === 0) signal.throwIfAborted();
      out[k] = f(src[k]!);
    }
  }
  return { kind: m.kind, dtype, shape: m.shape, data: out, indices: m.indices, indptr: m.indptr };
}

/** Count of mask bytes equal to 1. */
export function countMask(mask: Uint8Array): number {
  let c = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) c++;
  return c;
}

/** Copy `src[from..to)` into `dst` at `at` (typed-array `set` on a subarray; bigint-safe). */
function copyRange(dst: TypedArray, at: number, src: TypedArray, from: number, to: number): void {
  (dst as unknown as { set(a: ArrayLike<unknown>, o: number): void }).set(
    src.subarray(from, to) as unknown as ArrayLike<unknown>,
    at,
  );
}

/** Whether every mask byte is 1. */
function allKept(mask: Uint8Array): boolean {
  for (let i = 0; i < mask.length; i++) if (!mask[i]) return false;
  return true;
}

/**
 * The rows of a CSR matrix whose mask byte is 1, in order. Runs of consecutive kept rows are copied
 * with one block copy each. When every row is kept the input itself is returned (values are immutable).
 */
export function csrSubsetRows(m: SparseMatrix, keep: Uint8Array): SparseMatrix {
  assertCsr(m, "csrSubsetRows");
  const n = rowsOf(m);
  if (keep.length !== n) throw new Error(`csrSubsetRows: mask of ${keep.length} for ${n} rows`);
  if (allKept(keep)) return m;
  const { indptr } = m;
  let nnz = 0;
  let rows = 0;
  for (let i = 0; i < n; i++) {
    if (!keep[i]) continue;
    rows++;
    nnz += indptr[i + 1]! - indptr[i]!;
  }
  const outPtr = allocIndex(rows + 1, nnz);
  const outIdx = allocIndex(nnz, m.shape[1]);
  const outData = allocArray(m.dtype, nnz);
  let r = 0;
  let at = 0;
  let i = 0;
  while (i < n) {
    if (!keep[i]) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && keep[i]) {
      outPtr[++r] = at + indptr[i + 1]! - indptr[start]!;
      i++;
    }
    const a = indptr[start]!;
    const b = indptr[i]!;
    copyRange(outIdx, at, m.indices, a, b);
    copyRange(outData, at, m.data, a, b);
    at += b - a;
  }
  return {
    kind: "csr",
    dtype: m.dtype,
    shape: [rows, m.shape[1]],
    data: outData,
    indices: outIdx,
    indptr: outPtr,
  };
}

/** The columns of a CSR matrix whose mask byte is 1, renumbered in order (a new matrix). */
export function csrSubsetColumns(m: SparseMatrix, keep: Uint8Array): SparseMatrix {
  assertCsr(m, "csrSubsetColumns");
  const cols = m.shape[1];
  if (keep.length !== cols) throw new Error(`csrSubsetColumns: mask of ${keep.length} for ${cols} columns`);
  if (allKept(keep)) return m;
  const remap = new Int32Array(cols).fill(-1);
  let kept = 0;
  for (let j = 0; j < cols; j++) if (keep[j]) remap[j] = kept++;
  const n = rowsOf(m);
  const { indptr, indices } = m;
  const total = indptr[n]!;
  let nnz = 0;
  for (let k = 0; k < total; k++) if (remap[indices[k]!]! >= 0) nnz++;
  const outPtr = allocIndex(n + 1, nnz);
  const outIdx = allocIndex(nnz, kept);
  const outData = allocArray(m.dtype, nnz);
  if (m.data instanceof BigInt64Array || m.data instanceof BigUint64Array) {
    const src = m.data as unknown as { [i: number]: bigint };
    const dst = outData as unknown as { [i: number]: bigint };
    gatherColumns(indptr, indices, remap, n, outIdx, outPtr, (to, from) => {
      dst[to] = src[from]!;
    });
  } else {
    const src = m.data as NumberArray;
    const dst = outData as NumberArray;
    let at = 0;
    for (let i = 0; i < n; i++) {
      const end = indptr[i + 1]!;
      for (let k = indptr[i]!; k < end; k++) {
        const j = remap[indices[k]!]!;
        if (j < 0) continue;
        outIdx[at] = j;
        dst[at] = src[k]!;
        at++;
      }
      outPtr[i + 1] = at;
    }
  }
  return { kind: "csr", dtype: m.dtype, shape: [n, kept], data: outData, indices: outIdx, indptr: outPtr };
}

/** The generic (bigint) path of `csrSubsetColumns`: indices and indptr here, values through `move`. */
function gatherColumns(
  indptr: IndexArray,
  indices: IndexArray,
  remap: Int32Array,
  n: number,
  outIdx: IndexArray,
  outPtr: IndexArray,
  move: (to: number, from: number) => void,
): void {
  let at = 0;
  for (let i = 0; i < n; i++) {
    const end = indptr[i + 1]!;
    for (let k = indptr[i]!; k < end; k++) {
      const j = remap[indices[k]!]!;
      if (j < 0) continue;
      outIdx[at] = j;
      move(at, k);
      at++;
    }
    outPtr[i + 1] = at;
  }
}

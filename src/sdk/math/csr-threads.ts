/**
 * Passes over a sparse matrix's stored values shared among threads (normalize_total's row scaling,
 * log1p, highly_variable_genes' column means and variances): each thread writes its own range of a
 * new shared output array (or its own blocks' sums), so the result does not depend on the threads. Small inputs (where starting a worker costs more than it saves) and
 * arrays off shared memory are done on this thread.
 */
import { allocArray, type SparseMatrix } from "../data/arrays.js";
import type { DeferredMarker } from "../data/deferred.js";
import {
  csrRowSums,
  csrScaleRows,
  finishMeanVar,
  type MeanVar,
  type ScaleRowsOptions,
  scaledRows,
  scaleRowsRange,
  scaleRowsTarget,
} from "./csr.js";
import { meanVarChainBlocks } from "./deferred-values.js";
import { log1pModuleBytes, log1pSimdRange } from "./log1p-simd.js";
import { onSharedMemory, rowShares, runKernelThreads, runRowKernel } from "./row-threads.js";

/** Fewer stored values than this and a worker's start (~30 ms) costs more than it saves. */
const MIN_VALUES = 4_000_000;

/** Values per step between abort checks when working on this thread. */
const STEP = 1 << 20;

/** `csrScaleRows` with the rows shared among `threads` threads when the matrix is large. */
export async function csrScaleRowsAsync(
  m: SparseMatrix,
  factors: Float64Array,
  opts: ScaleRowsOptions,
  threads: number,
  signal?: AbortSignal,
): Promise<SparseMatrix> {
  const src = m.data as ArrayLike<number>;
  if (threads < 2 || m.data.length < MIN_VALUES || !onSharedMemory(m.indptr, m.data)) {
    return csrScaleRows(m, factors, opts, signal);
  }
  const { n, out } = scaleRowsTarget(m, factors, opts);
  const bounds = rowShares(m.indptr, n, threads);
  const divide = opts.divide === true ? 1 : 0;
  await runRowKernel(
    scaleRowsRange,
    bounds,
    (p) => [m.indptr, src, out, factors, bounds[p], bounds[p + 1], divide],
    signal,
  );
  return scaledRows(m, out);
}

/**
 * out[k] = log1p(src[k]) for k in k0…k1−1, through a direct-mapped cache on the float32 value's bits
 * (normalised counts repeat within a cell). `lb` is ln(base), or 0 for the natural log; `f32` says the
 * output is float32, whose base-b value scanpy computes in float32 (`fround` after each step).
 * `negative[slot]` (when given) is set to 1 if a value's sign bit is set (a negative value, or a NaN
 * with its sign bit), so a caller can refuse negative input without a pass of its own. Self-contained, so its source runs in a worker as is (which is why it repeats the cache of
 * `mapFloat32Cached` in `csr.ts` rather than taking a function).
 */
export function log1pRange(
  src: Float32Array,
  out: Float32Array | Float64Array,
  k0: number,
  k1: number,
  lb: number,
  f32: number,
  negative: Int32Array | null = null,
  slot = 0,
): void {
  const f = (v: number): number => {
    if (lb === 0) return Math.log1p(v);
    return f32 ? Math.fround(Math.fround(Math.log1p(v)) / lb) : Math.log1p(v) / lb;
  };
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  const mask = 4095;
  const keys = new Uint32Array(mask + 1);
  const vals = new Float64Array(mask + 1);
  // Key 0 is +0.0: seed every slot with f(0) so an empty slot never answers for another value.
  vals.fill(f(0));
  let seen = 0;
  for (let k = k0; k < k1; k++) {
    const b = bits[k] as number;
    // Sign bit set and not −0: a negative value (NaN's bits may have it too; a NaN is not < 0, but a
    // false alarm only costs the caller's exact check).
    if (b > 0x80000000) seen = 1;
    const h = (b ^ (b >>> 12) ^ (b >>> 24)) & mask;
    if (keys[h] === b) out[k] = vals[h] as number;
    else {
      const v = f(src[k] as number);
      keys[h] = b;
      vals[h] = v;
      out[k] = v;
    }
  }
  if (negative && seen) negative[slot] = 1;
}

/**
 * log1p of every float32 value into a new array of `dtype` (see `log1pRange` for `lb`), shared among
 * `threads` threads when there are many values. Float32 results come from the SIMD kernel
 * (`log1pSimdRange`, within one ulp of the correctly rounded value) whatever the size or the number
 * of threads, so a result does not depend on them; float64 results from `Math.log1p`. `seen.negative`
 * (when given) says whether a value had its sign bit set (see `log1pRange`).
 */
export async function log1pValues(
  src: Float32Array,
  dtype: "float32" | "float64",
  lb: number,
  threads: number,
  signal?: AbortSignal,
  seen?: { negative: boolean },
): Promise<Float32Array | Float64Array> {
  const out = allocArray(dtype, src.length) as Float32Array | Float64Array;
  // Float32 through the SIMD kernel; float64 through `Math.log1p` (`log1pRange`).
  const bytes = dtype === "float32" ? log1pModuleBytes() : null;
  const kernel = (bytes ? log1pSimdRange : log1pRange) as (...a: unknown[]) => void;
  const args = (k0: number, k1: number, flags: Int32Array, slot: number) =>
    bytes ? [src, out, k0, k1, bytes, lb, flags, slot] : [src, out, k0, k1, lb, 0, flags, slot];
  if (threads < 2 || src.length < MIN_VALUES || !onSharedMemory(src, out)) {
    const flag = new Int32Array(1);
    for (let k0 = 0; k0 < src.length; k0 += STEP) {
      signal?.throwIfAborted();
      kernel(...args(k0, Math.min(src.length, k0 + STEP), flag, 0));
    }
    if (seen) seen.negative = flag[0] === 1;
    return out;
  }
  const bounds = Array.from({ length: threads + 1 }, (_, p) => Math.floor((src.length * p) / threads));
  const flags = new Int32Array(new SharedArrayBuffer(4 * threads));
  await runRowKernel(kernel, bounds, (p) => args(bounds[p]!, bounds[p + 1]!, flags, p), signal);
  if (seen) seen.negative = flags.some((v) => v === 1);
  return out;
}

/** The transform `csrColumnMeanVarAsync` applies before summing (a tag: functions cannot cross threads). */
export type StoredTransform =
  /** The stored value itself. */
  | { readonly kind: "none" }
  /**
   * expm1 (highly_variable_genes' seurat flavour undoing log1p), of v · ln(base) when `logBase` is set;
   * on float32 data in float32 as scanpy (`fround` after each step).
   */
  | { readonly kind: "expm1"; readonly logBase: number | null };

/**
 * Column sums and sums of squares of rows r ∈ [bounds[q], bounds[q+1]) for each block q0 ≤ q < q1 into
 * that block's `cols`-long slice of `sums`/`sq` (rows whose `rowMask` byte is 0 skipped; `used[q]`
 * counts the others). `tf` 1 applies expm1 (of v · lb when `hasBase`), through a cache on the float32
 * value's bits as `mapFloat32Cached`; `f32` squares in float32. Self-contained (it runs in workers as is).
 */
export function meanVarBlocks(
  indptr: ArrayLike<number>,
  indices: ArrayLike<number>,
  data: Float32Array | Float64Array,
  rowMask: Uint8Array | null,
  bounds: Int32Array,
  q0: number,
  q1: number,
  cols: number,
  sums: Float64Array,
  sq: Float64Array,
  used: Int32Array,
  tf: number,
  lb: number,
  hasBase: number,
  f32: number,
): void {
  const isF32 = data instanceof Float32Array;
  const f = (v: number): number => {
    if (!tf) return v;
    if (isF32) return Math.fround(Math.expm1(hasBase ? Math.fround(v * lb) : v));
    return Math.expm1(hasBase ? v * lb : v);
  };
  const square = (v: number): number => (f32 ? Math.fround(v * v) : v * v);
  const cached = tf !== 0 && isF32;
  const mask = 4095;
  const bits = cached ? new Uint32Array(data.buffer, data.byteOffset, data.length) : null;
  const keys = new Uint32Array(mask + 1);
  const v0 = f(0);
  const vals = new Float64Array(mask + 1).fill(v0);
  const sqs = new Float64Array(mask + 1).fill(square(v0));
  for (let q = q0; q < q1; q++) {
    const base = q * cols;
    let n = 0;
    for (let i = bounds[q] as number; i < (bounds[q + 1] as number); i++) {
      if (rowMask && !rowMask[i]) continue;
      n++;
      const end = indptr[i + 1] as number;
      if (bits) {
        for (let k = indptr[i] as number; k < end; k++) {
          const b = bits[k] as number;
          const h = (b ^ (b >>> 12) ^ (b >>> 24)) & mask;
          if (keys[h] !== b) {
            const v = f(data[k] as number);
            keys[h] = b;
            vals[h] = v;
            sqs[h] = square(v);
          }
          const j = base + (indices[k] as number);
          sums[j] = (sums[j] as number) + (vals[h] as number);
          sq[j] = (sq[j] as number) + (sqs[h] as number);
        }
      } else {
        for (let k = indptr[i] as number; k < end; k++) {
          const v = f(data[k] as number);
          const j = base + (indices[k] as number);
          sums[j] = (sums[j] as number) + v;
          sq[j] = (sq[j] as number) + square(v);
        }
      }
    }
    used[q] = n;
  }
}

/** Row blocks of `csrColumnMeanVarAsync`: fixed, so the sums do not depend on the thread count. */
const MEAN_VAR_BLOCKS = 4;

/** Options of the column passes: which rows, what transform, squares in float32 or not. */
export interface ColumnPassOptions {
  readonly float32Squares?: boolean;
  readonly rowMask?: Uint8Array;
  readonly transform?: StoredTransform;
  /**
   * Sum the values of this deferred chain (row division then log1p; its base is the matrix passed)
   * computed on the fly, instead of the matrix's stored values: the same sums as over the chain
   * written out, without writing it (`meanVarChainBlocks`).
   */
  readonly chain?: DeferredMarker;
}

/**
 * Column means and variances (`ddof`) of a CSR matrix's stored values after `transform`, as
 * `csrColumnMeanVar`, from `csrColumnSumsAsync`'s sums (the same on any number of threads).
 */
export async function csrColumnMeanVarAsync(
  m: SparseMatrix,
  opts: ColumnPassOptions & { readonly ddof?: number },
  threads: number,
  signal?: AbortSignal,
): Promise<MeanVar> {
  const { sum, sumSq, rows } = await csrColumnSumsAsync(m, opts, threads, signal);
  return finishMeanVar(sum, sumSq, rows, opts.ddof ?? 0);
}

/**
 * Column sums and sums of squares (float64) of a CSR matrix's stored values after `transform`, and
 * the rows counted: the rows in four fixed blocks of like stored entries summed separately and then
 * added in block order (the same sums on any number of threads); the blocks are shared among
 * `threads` threads when the matrix is large and on shared memory.
 */
export async function csrColumnSumsAsync(
  m: SparseMatrix,
  opts: ColumnPassOptions,
  threads: number,
  signal?: AbortSignal,
): Promise<{ sum: Float64Array; sumSq: Float64Array; rows: number }> {
  if (m.kind !== "csr") throw new Error("csrColumnSumsAsync: expected a CSR matrix");
  const n = m.shape[0];
  const cols = m.shape[1];
  const { indptr, indices } = m;
  if (indptr instanceof BigInt64Array || indices instanceof BigInt64Array)
    throw new Error("csrColumnSumsAsync: int64 indices are not supported here");
  const data = m.data instanceof Float32Array || m.data instanceof Float64Array ? m.data : null;
  if (!data) throw new Error("csrColumnSumsAsync: expected float32 or float64 values");
  const blocks = Math.max(1, Math.min(MEAN_VAR_BLOCKS, n));
  const bounds = Int32Array.from(rowShares(indptr, n, blocks));
  const shared = threads > 1 && data.length >= MIN_VALUES && onSharedMemory(indptr, indices, data);
  const alloc = (len: number) =>
    shared ? new Float64Array(new SharedArrayBuffer(len * 8)) : new Float64Array(len);
  const sums = alloc(blocks * cols);
  const sq = alloc(blocks * cols);
  const used = shared ? new Int32Array(new SharedArrayBuffer(blocks * 4)) : new Int32Array(blocks);
  const mask = opts.rowMask ?? null;
  const rowMask =
    mask && shared && !onSharedMemory(mask)
      ? (() => {
          const c = new Uint8Array(new SharedArrayBuffer(mask.length));
          c.set(mask);
          return c;
        })()
      : mask;
  const tf = opts.transform?.kind === "expm1" ? opts.transform : null;
  const lb = tf && tf.logBase !== null ? Math.log(tf.logBase) : 0;
  const hasBase = tf && tf.logBase !== null ? 1 : 0;
  const chain = opts.chain;
  if (chain && (chain.base !== m || !chain.log1p || !(data instanceof Float32Array)))
    throw new Error("csrColumnSumsAsync: a chain's sums take its float32 base and a log1p step");
  const chainArgs = chain ? [chain.rowDivisors, chain.log1p!.lb, log1pModuleBytes()] : [];
  const kernel = (chain ? meanVarChainBlocks : meanVarBlocks) as (...a: unknown[]) => void;
  const args = (q0: number, q1: number) => [
    indptr,
    indices,
    data,
    rowMask,
    bounds,
    q0,
    q1,
    cols,
    sums,
    sq,
    used,
    tf ? 1 : 0,
    lb,
    hasBase,
    opts.float32Squares ? 1 : 0,
    ...chainArgs,
  ];
  if (!shared) {
    for (let q = 0; q < blocks; q++) {
      signal?.throwIfAborted();
      kernel(...args(q, q + 1));
    }
  } else {
    const parts = Math.min(threads, blocks);
    const cut = (p: number) => Math.floor((blocks * p) / parts);
    await runKernelThreads(kernel, parts, (p) => args(cut(p), cut(p + 1)), signal);
  }
  // Blocks added in order.
  const total = new Float64Array(cols);
  const totalSq = new Float64Array(cols);
  let rows = 0;
  for (let q = 0; q < blocks; q++) {
    rows += used[q] as number;
    for (let j = 0; j < cols; j++) {
      total[j] = (total[j] as number) + (sums[q * cols + j] as number);
      totalSq[j] = (totalSq[j] as number) + (sq[q * cols + j] as number);
    }
  }
  return { sum: total, sumSq: totalSq, rows };
}

/**
 * out[i] = the sum of row i's stored values for rows r0…r1−1, in the row's order (the sums of
 * `csrRowSums`, bit for bit); `negative[slot]` (when given) is set to 1 if a value is below zero.
 * Self-contained (it runs in workers as is).
 */
export function rowSumsRange(
  indptr: ArrayLike<number>,
  data: ArrayLike<number>,
  out: Float64Array,
  r0: number,
  r1: number,
  negative: Int32Array | null = null,
  slot = 0,
): void {
  let seen = 0;
  for (let i = r0; i < r1; i++) {
    let s = 0;
    const end = indptr[i + 1] as number;
    for (let k = indptr[i] as number; k < end; k++) {
      const v = data[k] as number;
      if (v < 0) seen = 1;
      s += v;
    }
    out[i] = s;
  }
  if (negative && seen) negative[slot] = 1;
}

/**
 * `csrRowSums` (no column mask) with the rows shared among `threads` threads when the matrix is large
 * and on shared memory; each row's sum is the one-thread sum exactly. `seen.negative` (when given)
 * says whether a value is below zero (found by the same pass).
 */
export async function csrRowSumsAsync(
  m: SparseMatrix,
  threads: number,
  signal?: AbortSignal,
  seen?: { negative: boolean },
): Promise<Float64Array> {
  const n = m.shape[0];
  const float = m.data instanceof Float32Array || m.data instanceof Float64Array;
  if (m.kind !== "csr" || m.indptr instanceof BigInt64Array || !float) {
    // Other layouts and value types: the plain sums, and the exact check when asked.
    const sums = csrRowSums(m);
    if (seen) seen.negative = (m.data as ArrayLike<number | bigint>).length > 0 && hasNegative(m);
    return sums;
  }
  if (threads < 2 || m.data.length < MIN_VALUES || !onSharedMemory(m.indptr, m.data)) {
    const out = new Float64Array(n);
    const flag = new Int32Array(1);
    rowSumsRange(m.indptr as ArrayLike<number>, m.data as ArrayLike<number>, out, 0, n, flag, 0);
    if (seen) seen.negative = flag[0] === 1;
    return out;
  }
  const out = new Float64Array(new SharedArrayBuffer(n * 8));
  const bounds = rowShares(m.indptr, n, threads);
  const flags = new Int32Array(new SharedArrayBuffer(4 * threads));
  await runRowKernel(
    rowSumsRange,
    bounds,
    (p) => [m.indptr, m.data, out, bounds[p], bounds[p + 1], flags, p],
    signal,
  );
  if (seen) seen.negative = flags.some((v) => v === 1);
  return out;
}

/** Whether any stored value of `m` is below zero. */
function hasNegative(m: SparseMatrix): boolean {
  const d = m.data as ArrayLike<number | bigint>;
  for (let k = 0; k < d.length; k++) if ((d[k] as number) < 0) return true;
  return false;
}

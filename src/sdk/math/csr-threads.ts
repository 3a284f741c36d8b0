/**
 * Element-wise passes over a sparse matrix's stored values shared among threads (normalize_total's
 * row scaling, log1p): each thread writes its own range of a new shared output array, so the result is
 * the one-thread result exactly. Small inputs (where starting a worker costs more than it saves) and
 * arrays off shared memory are done on this thread.
 */
import { allocArray, type SparseMatrix } from "../data/arrays.js";
import { csrScaleRows, type ScaleRowsOptions, scaledRows, scaleRowsRange, scaleRowsTarget } from "./csr.js";
import { onSharedMemory, rowShares, runRowKernel } from "./row-threads.js";

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
 * Self-contained, so its source runs in a worker as is (which is why it repeats the cache of
 * `mapFloat32Cached` in `csr.ts` rather than taking a function).
 */
export function log1pRange(
  src: Float32Array,
  out: Float32Array | Float64Array,
  k0: number,
  k1: number,
  lb: number,
  f32: number,
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
  for (let k = k0; k < k1; k++) {
    const b = bits[k] as number;
    const h = (b ^ (b >>> 12) ^ (b >>> 24)) & mask;
    if (keys[h] === b) out[k] = vals[h] as number;
    else {
      const v = f(src[k] as number);
      keys[h] = b;
      vals[h] = v;
      out[k] = v;
    }
  }
}

/**
 * log1p of every float32 value into a new array of `dtype` (see `log1pRange` for `lb`), shared among
 * `threads` threads when there are many values.
 */
export async function log1pValues(
  src: Float32Array,
  dtype: "float32" | "float64",
  lb: number,
  threads: number,
  signal?: AbortSignal,
): Promise<Float32Array | Float64Array> {
  const out = allocArray(dtype, src.length) as Float32Array | Float64Array;
  const f32 = dtype === "float32" ? 1 : 0;
  if (threads < 2 || src.length < MIN_VALUES || !onSharedMemory(src, out)) {
    for (let k0 = 0; k0 < src.length; k0 += STEP) {
      signal?.throwIfAborted();
      log1pRange(src, out, k0, Math.min(src.length, k0 + STEP), lb, f32);
    }
    return out;
  }
  const bounds = Array.from({ length: threads + 1 }, (_, p) => Math.floor((src.length * p) / threads));
  await runRowKernel(log1pRange, bounds, (p) => [src, out, bounds[p], bounds[p + 1], lb, f32], signal);
  return out;
}

/**
 * Element-wise passes over a sparse matrix's stored values shared among threads (normalize_total's
 * row scaling, log1p): each thread writes its own range of a new shared output array, so the result is
 * the one-thread result exactly. Each function answers false (nothing done) when the work is too small
 * to pay for starting a worker or the arrays are not on shared memory; the caller then does it itself.
 */
import { onSharedMemory, rowShares, runRowKernel } from "./row-threads.js";

/** Fewer stored values than this and a worker's start (~30 ms) costs more than it saves. */
const MIN_VALUES = 4_000_000;

/**
 * out[k] = src[k] / factors[i] (or × when `divide` is 0) for the stored values of rows r0…r1−1.
 * Self-contained, so its source runs in a worker as is.
 */
export function scaleRowsRange(
  indptr: ArrayLike<number | bigint>,
  src: ArrayLike<number>,
  out: Float32Array | Float64Array,
  factors: Float64Array,
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

/** `scaleRowsRange` over all n rows among `threads` threads; false when not worth it. */
export async function scaleRowsThreads(
  indptr: ArrayLike<number | bigint>,
  src: ArrayLike<number>,
  out: Float32Array | Float64Array,
  factors: Float64Array,
  n: number,
  divide: boolean,
  threads: number,
  signal?: AbortSignal,
): Promise<boolean> {
  if (threads < 2 || out.length < MIN_VALUES || !onSharedMemory(indptr, src, out)) return false;
  const bounds = rowShares(indptr, n, threads);
  await runRowKernel(
    scaleRowsRange,
    bounds,
    (p) => [indptr, src, out, factors, bounds[p], bounds[p + 1], divide ? 1 : 0],
    signal,
  );
  return true;
}

/**
 * out[k] = log1p(src[k]) for k in k0…k1−1, through a direct-mapped cache on the float32 value's bits
 * (normalised counts repeat within a cell). `lb` is ln(base), or 0 for the natural log; `f32` says the
 * output is float32, whose base-b value scanpy computes in float32 (`fround` after each step).
 * Self-contained, so its source runs in a worker as is.
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

/** `log1pRange` over all values among `threads` threads; false when not worth it. */
export async function log1pThreads(
  src: Float32Array,
  out: Float32Array | Float64Array,
  lb: number,
  threads: number,
  signal?: AbortSignal,
): Promise<boolean> {
  if (threads < 2 || src.length < MIN_VALUES || !onSharedMemory(src, out)) return false;
  const bounds = Array.from({ length: threads + 1 }, (_, p) => Math.floor((src.length * p) / threads));
  const f32 = out instanceof Float32Array ? 1 : 0;
  await runRowKernel(log1pRange, bounds, (p) => [src, out, bounds[p], bounds[p + 1], lb, f32], signal);
  return true;
}

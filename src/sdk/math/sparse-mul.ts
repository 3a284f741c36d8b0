/**
 * out = X_c · M for a CSR X over a subset of its columns (PCA's projection of the cells onto the
 * components), one thread or several: rows are independent, so each thread writes its own rows of
 * `out` (on shared memory).
 */
import { onSharedMemory, rowShares, runRowKernel } from "./row-threads.js";
import { mulRowModuleBytes, sparseMulRowsSimd } from "./sparse-mul-simd.js";

/**
 * Rows r0…r1−1 of out (n × l, row-major) = X[:, kept] · M − 1·muM, with M m × l row-major and
 * `colMap[j]` column j's kept index or −1; each row accumulates in float64. Self-contained, so its
 * source runs in a worker as is.
 */
export function sparseMulRows(
  indptr: ArrayLike<number | bigint>,
  indices: ArrayLike<number>,
  vals: ArrayLike<number>,
  colMap: ArrayLike<number>,
  r0: number,
  r1: number,
  M: Float64Array,
  l: number,
  muM: Float64Array,
  out: Float32Array | Float64Array,
): void {
  const acc = new Float64Array(l);
  // The row's kept entries (offset of their row of M, value), then taken four at a time: one pass
  // over acc per four entries instead of one per entry (acc's loads and stores were half the work),
  // each acc[t] still adding its terms in the row's order, so the sums are the one-at-a-time sums.
  let cap = 256;
  let offs = new Int32Array(cap);
  let vs = new Float64Array(cap);
  for (let i = r0; i < r1; i++) {
    for (let t = 0; t < l; t++) acc[t] = -(muM[t] as number);
    const start = Number(indptr[i]);
    const end = Number(indptr[i + 1]);
    if (end - start > cap) {
      cap = 2 * (end - start);
      offs = new Int32Array(cap);
      vs = new Float64Array(cap);
    }
    let len = 0;
    for (let k = start; k < end; k++) {
      const c = colMap[indices[k] as number] as number;
      if (c < 0) continue;
      offs[len] = c * l;
      vs[len++] = vals[k] as number;
    }
    let e = 0;
    for (; e + 4 <= len; e += 4) {
      const o0 = offs[e] as number;
      const o1 = offs[e + 1] as number;
      const o2 = offs[e + 2] as number;
      const o3 = offs[e + 3] as number;
      const v0 = vs[e] as number;
      const v1 = vs[e + 1] as number;
      const v2 = vs[e + 2] as number;
      const v3 = vs[e + 3] as number;
      for (let t = 0; t < l; t++) {
        acc[t] =
          (acc[t] as number) +
          v0 * (M[o0 + t] as number) +
          v1 * (M[o1 + t] as number) +
          v2 * (M[o2 + t] as number) +
          v3 * (M[o3 + t] as number);
      }
    }
    for (; e < len; e++) {
      const o = offs[e] as number;
      const v = vs[e] as number;
      for (let t = 0; t < l; t++) acc[t] = (acc[t] as number) + v * (M[o + t] as number);
    }
    const ro = i * l;
    for (let t = 0; t < l; t++) out[ro + t] = acc[t] as number;
  }
}

/**
 * `sparseMulRows` over all n rows shared among `threads` threads (through its SIMD twin,
 * `sparseMulRowsSimd`: the same values). False (nothing done) when the
 * arrays are not on shared memory or the work is too small to share; the caller then does it itself.
 */
export async function sparseMulThreads(
  indptr: ArrayLike<number | bigint>,
  indices: ArrayLike<number>,
  vals: ArrayLike<number>,
  colMap: Int32Array,
  n: number,
  M: Float64Array,
  l: number,
  muM: Float64Array,
  out: Float32Array | Float64Array,
  threads: number,
  signal?: AbortSignal,
): Promise<boolean> {
  if (threads < 2 || n < 8192 || !onSharedMemory(indptr, indices, vals, out)) return false;
  const bounds = rowShares(indptr, n, threads);
  // The SIMD kernel: the same sums as `sparseMulRows`, ~4× faster.
  const bytes = mulRowModuleBytes();
  await runRowKernel(
    sparseMulRowsSimd,
    bounds,
    (p) => [indptr, indices, vals, colMap, bounds[p], bounds[p + 1], M, l, muM, out, bytes],
    signal,
  );
  return true;
}

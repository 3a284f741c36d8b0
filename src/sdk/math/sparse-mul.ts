/**
 * out = X_c · M for a CSR X over a subset of its columns (PCA's projection of the cells onto the
 * components), one thread or several: rows are independent, so each thread writes its own rows of
 * `out` (on shared memory).
 */
import { onSharedMemory, rowShares, runRowKernel } from "./row-threads.js";

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
  for (let i = r0; i < r1; i++) {
    for (let t = 0; t < l; t++) acc[t] = -(muM[t] as number);
    const end = Number(indptr[i + 1]);
    for (let k = Number(indptr[i]); k < end; k++) {
      const c = colMap[indices[k] as number] as number;
      if (c < 0) continue;
      const v = vals[k] as number;
      const rm = c * l;
      for (let t = 0; t < l; t++) acc[t] += v * (M[rm + t] as number);
    }
    const ro = i * l;
    for (let t = 0; t < l; t++) out[ro + t] = acc[t] as number;
  }
}

/**
 * `sparseMulRows` over all n rows shared among `threads` threads. False (nothing done) when the
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
  await runRowKernel(
    sparseMulRows,
    bounds,
    (p) => [indptr, indices, vals, colMap, bounds[p], bounds[p + 1], M, l, muM, out],
    signal,
  );
  return true;
}

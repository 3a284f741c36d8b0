/**
 * The Gram matrix XᵀX of a sparse CSR matrix over a subset of its columns (what PCA's exact Lanczos
 * path diagonalises), on one thread or shared among several.
 *
 * Row by row, the outer products scatter over all of g (8 MB at m = 1000), so nearly every update
 * missed the cache (19 s at 100k cells). Here rows are taken in batches, their kept entries gathered
 * in column order with the offsets where each column block starts, and the block pairs (I ≤ J) of g
 * are filled one at a time from every row of the batch: the 128 × 128 block being written stays in
 * cache. Each g entry adds its rows in row order. Four entries of a row go through the other block's
 * entries together (each column and value loaded once for four updates): ~1.8× faster than one.
 *
 * With several threads, each takes a contiguous range of rows into its own g and the results are
 * summed. The kernel runs in plain worker threads started from its own source text (it is one
 * self-contained function), so no build step or module resolution is involved; X must live on
 * shared memory (Tessera's large arrays do), else the work stays on the calling thread.
 */
import { gramOnWasm } from "./gram-matvec-simd.js";
import { onSharedMemory, rowShares, runRowKernel } from "./row-threads.js";

/** Columns per block of g (a 128 × 128 float64 block is 128 KB: it stays in L2). */
const GRAM_BLOCK = 128;
/** Rows gathered per batch. */
const GRAM_ROWS = 2048;

/**
 * g[a, b] += Σ_{r0 ≤ i < r1} x[i, a] · x[i, b] over the kept columns (`colMap[j]` is column j's kept
 * index or −1), upper triangle only (b ≥ a). Self-contained (no outside references) so that its
 * source can run in a worker as is.
 */
export function sparseGramRows(
  indptr: ArrayLike<number | bigint>,
  indices: ArrayLike<number>,
  vals: ArrayLike<number>,
  colMap: ArrayLike<number>,
  r0: number,
  r1: number,
  m: number,
  g: Float64Array,
  block = 128,
  batch = 2048,
): void {
  const nb = Math.ceil(m / block);
  const rowStart = new Int32Array(batch + 1);
  const blockOff = new Int32Array(batch * (nb + 1));
  let cap = 1024;
  let cBuf = new Int32Array(cap);
  let vBuf = new Float64Array(cap);
  for (let i0 = r0; i0 < r1; i0 += batch) {
    const rows = Math.min(batch, r1 - i0);
    let len = 0;
    for (let r = 0; r < rows; r++) {
      const start = len;
      rowStart[r] = start;
      const begin = Number(indptr[i0 + r]);
      const end = Number(indptr[i0 + r + 1]);
      // Room for the whole row, then a branch-free gather: every entry is written, and the next one
      // overwrites it unless its column is kept (a third of the entries kept at random would
      // mispredict a branch every other entry).
      if (len + (end - begin) > cap) {
        while (len + (end - begin) > cap) cap *= 2;
        const c2 = new Int32Array(cap);
        c2.set(cBuf);
        cBuf = c2;
        const v2 = new Float64Array(cap);
        v2.set(vBuf);
        vBuf = v2;
      }
      for (let k = begin; k < end; k++) {
        const c = colMap[indices[k] as number] as number;
        cBuf[len] = c;
        vBuf[len] = vals[k] as number;
        len += (c >>> 31) ^ 1;
      }
      // Insertion sort by column (CSR rows are nearly always sorted already).
      for (let i = start + 1; i < len; i++) {
        const ci = cBuf[i] as number;
        if (ci >= (cBuf[i - 1] as number)) continue;
        const vi = vBuf[i] as number;
        let j = i - 1;
        while (j >= start && (cBuf[j] as number) > ci) {
          cBuf[j + 1] = cBuf[j] as number;
          vBuf[j + 1] = vBuf[j] as number;
          j--;
        }
        cBuf[j + 1] = ci;
        vBuf[j + 1] = vi;
      }
      // blockOff[r, I] = the row's first entry in column block I.
      let at = start;
      const bo = r * (nb + 1);
      for (let I = 0; I <= nb; I++) {
        const lo = I * block;
        while (at < len && (cBuf[at] as number) < lo) at++;
        blockOff[bo + I] = at;
      }
    }
    rowStart[rows] = len;
    for (let I = 0; I < nb; I++) {
      for (let J = I; J < nb; J++) {
        for (let r = 0; r < rows; r++) {
          const bo = r * (nb + 1);
          const aEnd = blockOff[bo + I + 1] as number;
          const bEnd = blockOff[bo + J + 1] as number;
          let a = blockOff[bo + I] as number;
          const bStart = blockOff[bo + J] as number;
          // Four rows of g per pass over the b entries: each (column, value) loaded once for all four.
          for (; a + 3 < aEnd; a += 4) {
            const ro1 = (cBuf[a] as number) * m;
            const ro2 = (cBuf[a + 1] as number) * m;
            const ro3 = (cBuf[a + 2] as number) * m;
            const ro4 = (cBuf[a + 3] as number) * m;
            const va1 = vBuf[a] as number;
            const va2 = vBuf[a + 1] as number;
            const va3 = vBuf[a + 2] as number;
            const va4 = vBuf[a + 3] as number;
            let b = bStart;
            if (I === J) {
              // The triangle among the four themselves.
              for (let p = a; p < a + 4; p++) {
                const rp = (cBuf[p] as number) * m;
                const vp = vBuf[p] as number;
                for (let q = p; q < a + 4; q++) g[rp + (cBuf[q] as number)] += vp * (vBuf[q] as number);
              }
              b = a + 4;
            }
            for (; b < bEnd; b++) {
              const cb = cBuf[b] as number;
              const vb = vBuf[b] as number;
              g[ro1 + cb] += va1 * vb;
              g[ro2 + cb] += va2 * vb;
              g[ro3 + cb] += va3 * vb;
              g[ro4 + cb] += va4 * vb;
            }
          }
          for (; a < aEnd; a++) {
            const ro = (cBuf[a] as number) * m;
            const va = vBuf[a] as number;
            for (let b = I === J ? a : bStart; b < bEnd; b++)
              g[ro + (cBuf[b] as number)] += va * (vBuf[b] as number);
          }
        }
      }
    }
  }
}

/** Centre an upper-triangle Gram matrix (XᵀX − n μμᵀ) and mirror it into a full symmetric one. */
export function centreGram(g: Float64Array, m: number, n: number, mean: Float64Array): void {
  for (let a = 0; a < m; a++) {
    for (let b = a; b < m; b++) {
      const v = (g[a * m + b] as number) - n * (mean[a] as number) * (mean[b] as number);
      g[a * m + b] = v;
      g[b * m + a] = v;
    }
  }
}

/**
 * The upper-triangle Gram matrix of rows 0…n−1 with the rows split among `threads` threads (the
 * calling thread takes the first share). Null when X is not on shared memory (the caller then
 * computes it on one thread). Rows are split by stored entries, so each thread gets a like amount of
 * work; the extra threads' g matrices are added into the first one.
 */
export async function sparseGramThreads(
  indptr: ArrayLike<number | bigint>,
  indices: ArrayLike<number>,
  vals: ArrayLike<number>,
  colMap: Int32Array,
  n: number,
  m: number,
  threads: number,
  signal?: AbortSignal,
): Promise<Float64Array | null> {
  if (!onSharedMemory(indptr, indices, vals) || threads < 2 || n < 2 * GRAM_ROWS) return null;
  const bounds = rowShares(indptr, n, Math.min(threads, Math.floor(n / GRAM_ROWS)));
  const outs = bounds.slice(2).map(() => new Float64Array(new SharedArrayBuffer(m * m * 8)));
  // On a WebAssembly memory: the Lanczos products read it in place (`gram-matvec-simd.ts`).
  const g = gramOnWasm(m);
  await runRowKernel(
    sparseGramRows,
    bounds,
    (p) => [
      indptr,
      indices,
      vals,
      colMap,
      bounds[p],
      bounds[p + 1],
      m,
      p === 0 ? g : outs[p - 1],
      GRAM_BLOCK,
      GRAM_ROWS,
    ],
    signal,
  );
  for (const o of outs) for (let i = 0; i < g.length; i++) g[i] += o[i] as number;
  return g;
}

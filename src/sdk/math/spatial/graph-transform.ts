/**
 * squidpy's adjacency transforms of a spatial graph (`transform="spectral"` / `"cosine"`), in float32
 * as squidpy computes them.
 */
import { allocArray } from "../../data/arrays.js";
import type { CsrGraph } from "./graph.js";

/**
 * D^{-1/2} A D^{-1/2} with D the column sums of A (squidpy's `symmetric_normalize_csr`). On a
 * directed graph a row whose point no edge points to gets an infinite degree factor, as in squidpy.
 */
export function spectralTransform(a: CsrGraph<Float32Array>): CsrGraph<Float32Array> {
  const { n, indptr, indices, data } = a;
  const colSum = new Float64Array(n);
  for (let p = 0; p < indices.length; p++) colSum[indices[p] as number] += data[p] as number;
  const deg = new Float32Array(n);
  for (let j = 0; j < n; j++)
    deg[j] = Math.fround(Math.sqrt(Math.fround(1 / Math.fround(colSum[j] as number))));
  const out = allocArray("float32", data.length) as Float32Array;
  for (let i = 0; i < n; i++) {
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      out[p] = Math.fround((deg[i] as number) * (deg[indices[p] as number] as number)) * (data[p] as number);
    }
  }
  return { n, indptr, indices, data: out };
}

/**
 * Cosine similarity between rows (scikit-learn's `cosine_similarity(A, dense_output=False)`): entry
 * (i, j) is non-zero when rows i and j share a column; the diagonal is 1 for non-empty rows.
 */
export function cosineTransform(a: CsrGraph<Float32Array>): CsrGraph<Float32Array> {
  const { n, indptr, indices, data } = a;
  const norm = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) s += (data[p] as number) ** 2;
    norm[i] = s > 0 ? 1 / Math.sqrt(s) : 0;
  }
  // Column lists (the transpose), to find the rows sharing a column with row i.
  const tPtr = new Int32Array(n + 1);
  for (let p = 0; p < indices.length; p++) tPtr[(indices[p] as number) + 1]++;
  for (let j = 0; j < n; j++) tPtr[j + 1] = (tPtr[j + 1] as number) + (tPtr[j] as number);
  const tRow = new Int32Array(indices.length);
  const tVal = new Float64Array(indices.length);
  const fill = tPtr.slice(0, n);
  for (let i = 0; i < n; i++) {
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      const q = fill[indices[p] as number]++;
      tRow[q] = i;
      tVal[q] = (data[p] as number) * (norm[i] as number);
    }
  }
  const acc = new Float64Array(n);
  const mark = new Uint8Array(n);
  const outPtr = allocArray("int32", n + 1) as Int32Array;
  const cols: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    const touched: number[] = [];
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      const v = (data[p] as number) * (norm[i] as number);
      const c = indices[p] as number;
      for (let q = tPtr[c] as number; q < (tPtr[c + 1] as number); q++) {
        const r = tRow[q] as number;
        if (!mark[r]) {
          mark[r] = 1;
          touched.push(r);
        }
        acc[r] += v * (tVal[q] as number);
      }
    }
    touched.sort((x, y) => x - y);
    for (const r of touched) {
      if (acc[r] !== 0) {
        cols.push(r);
        vals.push(acc[r] as number);
      }
      acc[r] = 0;
      mark[r] = 0;
    }
    outPtr[i + 1] = cols.length;
  }
  const outIdx = allocArray("int32", cols.length) as Int32Array;
  outIdx.set(cols);
  const outData = allocArray("float32", vals.length) as Float32Array;
  outData.set(vals);
  return { n, indptr: outPtr, indices: outIdx, data: outData };
}

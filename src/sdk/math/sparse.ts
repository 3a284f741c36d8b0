/**
 * Sparse-matrix layout conversions (CSR ↔ CSC, dense → CSC). Outputs go on SharedArrayBuffer.
 * Used by the checkpoint's column-major mirror of X and, later, by operations that need gene-major access.
 */
import {
  allocArray,
  type DenseArray,
  type IndexArray,
  type SparseMatrix,
  type TypedArray,
} from "../data/arrays.js";

/** An index array able to hold values up to `max` (Int32 while it fits, else Float64). */
export function allocIndex(length: number, max: number): IndexArray {
  return max <= 0x7fffffff
    ? (allocArray("int32", length) as Int32Array)
    : (allocArray("float64", length) as Float64Array);
}

/**
 * Switch a compressed matrix between CSR and CSC (same matrix, other compressed axis), in O(nnz)
 * with one counting pass. Indices come out sorted within each compressed slice.
 */
export function switchCompression(m: SparseMatrix): SparseMatrix {
  const [rows, cols] = m.shape;
  const major = m.kind === "csr" ? rows : cols;
  const minor = m.kind === "csr" ? cols : rows;
  const nnz = Number(m.indptr[major] ?? 0);
  const counts = new Float64Array(minor + 1);
  for (let k = 0; k < nnz; k++) counts[(m.indices[k] as number) + 1]! += 1;
  const indptr = allocIndex(minor + 1, nnz);
  for (let j = 0; j < minor; j++) indptr[j + 1] = indptr[j]! + counts[j + 1]!;
  const next = Float64Array.from(indptr.subarray(0, minor) as ArrayLike<number>);
  const indices = allocIndex(nnz, major);
  const data = allocArray(m.dtype, nnz);
  const src = m.data as unknown as { [i: number]: number | bigint };
  const dst = data as unknown as { [i: number]: number | bigint };
  for (let i = 0; i < major; i++) {
    const end = Number(m.indptr[i + 1]);
    for (let k = Number(m.indptr[i]); k < end; k++) {
      const j = m.indices[k] as number;
      const at = next[j]!++;
      indices[at] = i;
      dst[at] = src[k]!;
    }
  }
  return { kind: m.kind === "csr" ? "csc" : "csr", dtype: m.dtype, shape: m.shape, data, indices, indptr };
}

/** A 2-d dense array as CSC (columns compressed), keeping only non-zeros. */
export function denseToCsc(a: DenseArray): SparseMatrix {
  const [rows, cols] = a.shape as [number, number];
  const src = a.data as unknown as { [i: number]: number | bigint };
  let nnz = 0;
  const colCounts = new Float64Array(cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = src[i * cols + j]!;
      if (v !== 0 && v !== 0n) {
        nnz++;
        colCounts[j]!++;
      }
    }
  }
  const indptr = allocIndex(cols + 1, nnz);
  for (let j = 0; j < cols; j++) indptr[j + 1] = indptr[j]! + colCounts[j]!;
  const next = Float64Array.from(indptr.subarray(0, cols) as ArrayLike<number>);
  const indices = allocIndex(nnz, rows);
  const data: TypedArray = allocArray(a.dtype, nnz);
  const dst = data as unknown as { [i: number]: number | bigint };
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = src[i * cols + j]!;
      if (v !== 0 && v !== 0n) {
        const at = next[j]!++;
        indices[at] = i;
        dst[at] = v;
      }
    }
  }
  return { kind: "csc", dtype: a.dtype, shape: [rows, cols], data, indices, indptr };
}

/** Any matrix as CSC (a CSC input is returned as is). */
export function toCsc(m: SparseMatrix | DenseArray): SparseMatrix {
  if (m.kind === "dense") return denseToCsc(m);
  return m.kind === "csc" ? m : switchCompression(m);
}

/** Dense values of column `j` of a CSC matrix (length = rows), as float32. */
export function cscColumn(m: SparseMatrix, j: number): Float32Array {
  if (m.kind !== "csc") throw new Error("cscColumn: matrix is not CSC");
  const out = new Float32Array(m.shape[0]);
  const end = Number(m.indptr[j + 1]);
  for (let k = Number(m.indptr[j]); k < end; k++) out[m.indices[k] as number] = Number(m.data[k]);
  return out;
}

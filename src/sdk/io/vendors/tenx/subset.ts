/** Keeping some features (columns) of a CSR count table, as scanpy's `gex_only` does. */
import type { SparseMatrix } from "../../../data/arrays.js";
import { frameRows } from "../../../data/subset.js";
import { makeTable, type Table } from "../../../data/table.js";

/** A table with only the features at positions `keep` (ascending), X's column indices remapped. */
export function keepFeatures(table: Table, keep: readonly number[]): Table {
  const X = table.X as SparseMatrix;
  const nVar = X.shape[1];
  const map = new Int32Array(nVar).fill(-1);
  keep.forEach((j, k) => {
    map[j] = k;
  });
  const nObs = X.shape[0];
  const indptr = new Int32Array(nObs + 1);
  let nnz = 0;
  for (let i = 0; i < X.indices.length; i++) if (map[X.indices[i]!]! >= 0) nnz++;
  const indices = new Int32Array(nnz);
  const data = new Float32Array(nnz);
  let at = 0;
  for (let r = 0; r < nObs; r++) {
    for (let p = X.indptr[r]!; p < X.indptr[r + 1]!; p++) {
      const k = map[X.indices[p]!]!;
      if (k < 0) continue;
      indices[at] = k;
      data[at++] = Number(X.data[p]!);
    }
    indptr[r + 1] = at;
  }
  const { df } = frameRows(table.var, Int32Array.from(keep));
  return makeTable({
    X: { kind: "csr", dtype: "float32", shape: [nObs, keep.length], data, indices, indptr },
    obs: table.obs,
    var: df,
  });
}

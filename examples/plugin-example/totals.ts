/** Per-cell totals and per-gene means of a table's X, dense or sparse (a helper, not an operation). */
import { loadMatrix, type Matrix, type Table } from "tessera-omics/plugin";

/** The X of `table`, read if it is lazy; an error naming the table when it has none. */
export async function matrixOf(table: Table, name: string): Promise<Matrix> {
  if (!table.X) throw new Error(`table "${name}" has no X`);
  return loadMatrix(table.X);
}

/** Sum of each row (cell) of `m`. */
export function rowSums(m: Matrix): Float64Array {
  const [rows, cols] = [m.shape[0]!, m.shape[1] ?? 1];
  const out = new Float64Array(rows);
  if (m.kind === "dense") {
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[r]! += Number(m.data[r * cols + c]);
  } else if (m.kind === "csr") {
    for (let r = 0; r < rows; r++)
      for (let k = Number(m.indptr[r]); k < Number(m.indptr[r + 1]); k++) out[r]! += Number(m.data[k]);
  } else {
    for (let k = 0; k < m.data.length; k++) out[Number(m.indices[k])]! += Number(m.data[k]);
  }
  return out;
}

/** Mean of each column (gene) of `m`. */
export function columnMeans(m: Matrix): Float64Array {
  const [rows, cols] = [m.shape[0]!, m.shape[1] ?? 1];
  const out = new Float64Array(cols);
  if (m.kind === "dense") {
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c]! += Number(m.data[r * cols + c]);
  } else if (m.kind === "csr") {
    for (let k = 0; k < m.data.length; k++) out[Number(m.indices[k])]! += Number(m.data[k]);
  } else {
    for (let c = 0; c < cols; c++)
      for (let k = Number(m.indptr[c]); k < Number(m.indptr[c + 1]); k++) out[c]! += Number(m.data[k]);
  }
  for (let c = 0; c < cols; c++) out[c]! /= rows || 1;
  return out;
}

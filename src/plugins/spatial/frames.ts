/**
 * Building the uns frames the spatial operations write: a labelled matrix as a DataFrame (index = row
 * labels, one float64 column per column label), as pandas crosstabs and squidpy's tables arrive in
 * AnnData. Not an operations module.
 */
import { allocArray, type DenseArray, dense } from "../../sdk/data/arrays.js";
import { type DataFrame, dataFrame } from "../../sdk/data/dataframe.js";

/** A float64 column on shared memory holding `values`. */
export function float64Column(values: ArrayLike<number>): DenseArray<Float64Array> {
  const a = allocArray("float64", values.length) as Float64Array;
  a.set(values);
  return dense(a);
}

/** An int64-free integer column (int32) holding `values`. */
export function int32Column(values: ArrayLike<number>): DenseArray<Int32Array> {
  const a = allocArray("int32", values.length) as Int32Array;
  a.set(values);
  return dense(a);
}

/**
 * A rows × cols row-major matrix as a frame: index `rowNames`, one column per `colNames` entry.
 * Column names must be unique (they are category labels, which are).
 */
export function matrixFrame(
  m: ArrayLike<number>,
  rowNames: readonly string[],
  colNames: readonly string[],
  integer = false,
): DataFrame {
  const rows = rowNames.length;
  const cols = colNames.length;
  const columns: Record<string, DenseArray> = {};
  for (let j = 0; j < cols; j++) {
    const v = new Float64Array(rows);
    for (let i = 0; i < rows; i++) v[i] = m[i * cols + j]!;
    columns[colNames[j]!] = integer ? int32Column(v) : float64Column(v);
  }
  return dataFrame([...rowNames], columns, "_index", [...colNames]);
}

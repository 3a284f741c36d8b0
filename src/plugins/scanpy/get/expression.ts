/**
 * The small accessors the `sc.tl` operations and the plots share, as scanpy's `get` module holds them
 * (`_get_obs_rep`): the expression matrix a call reads (X, a layer or raw), a categorical grouping of the
 * cells, and the columns or rows of a matrix as dense vectors.
 */
import type { Matrix, SparseMatrix, StringArray } from "../../../sdk/data/arrays.js";
import { columnValue, type DataFrame, nRows } from "../../../sdk/data/dataframe.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { Table } from "../../../sdk/data/table.js";

/** The matrix an operation reads, with the gene names and var frame that go with it. */
export interface ExpressionSource {
  readonly matrix: Matrix;
  readonly varNames: readonly string[];
  readonly varFrame: DataFrame;
  /** Whether `raw` was used. */
  readonly useRaw: boolean;
}

/**
 * scanpy's `_get_obs_rep`: `layers[layer]`, `raw.X` (with raw's var) or X. `useRaw` undefined means
 * "raw when it exists and no layer is asked for" (scanpy's `use_raw=None`). Lazy matrices are read.
 */
export async function expressionSource(
  t: Table,
  useRaw: boolean | undefined,
  layer: string | null | undefined,
  op: string,
): Promise<ExpressionSource> {
  const raw = useRaw ?? (t.raw !== null && !layer);
  if (layer) {
    if (raw) throw new Error(`${op}: cannot specify \`layer\` and have \`use_raw=True\``);
    const slot = t.layers[layer];
    if (!slot)
      throw new Error(`${op}: no layer "${layer}" (layers: ${Object.keys(t.layers).join(", ") || "none"})`);
    return { matrix: await loadMatrix(slot), varNames: names(t.var.index), varFrame: t.var, useRaw: false };
  }
  if (raw) {
    if (!t.raw) throw new Error(`${op}: received \`use_raw=True\`, but \`adata.raw\` is empty`);
    return {
      matrix: await loadMatrix(t.raw.X),
      varNames: names(t.raw.var.index),
      varFrame: t.raw.var,
      useRaw: true,
    };
  }
  if (!t.X) throw new Error(`${op}: the table has no X`);
  return { matrix: await loadMatrix(t.X), varNames: names(t.var.index), varFrame: t.var, useRaw: false };
}

/** The labels of an index, with a missing label replaced by its position. */
export function names(idx: StringArray): string[] {
  return idx.values.map((v, i) => v ?? String(i));
}

/** A categorical grouping of cells: a code per cell (-1 = missing) into `categories`. */
export interface Grouping {
  readonly codes: Int32Array;
  readonly categories: readonly string[];
}

/**
 * The grouping of obs column `key`: a categorical as is (categories as strings), a string or boolean
 * column as pandas would make it categorical (sorted unique values). Numeric columns are refused,
 * as scanpy refuses them.
 */
export function groupingOf(t: Table, key: string, op: string): Grouping {
  const col = t.obs.columns[key];
  if (!col) {
    throw new Error(`${op}: no obs column "${key}" (obs columns: ${t.obs.columnOrder.join(", ") || "none"})`);
  }
  if (col.kind === "categorical") {
    const cats = col.categories;
    const categories =
      cats.kind === "string"
        ? cats.values.map((v) => v ?? "nan")
        : Array.from({ length: cats.data.length }, (_, i) => String(cats.data[i]));
    return { codes: col.codes, categories };
  }
  if (col.kind === "string" || col.dtype === "bool") {
    const n = nRows(t.obs);
    const labels: (string | null)[] = [];
    for (let i = 0; i < n; i++) {
      const v = columnValue(col, i);
      labels.push(v === null ? null : String(v === true ? "True" : v === false ? "False" : v));
    }
    const categories = [...new Set(labels.filter((v): v is string => v !== null))].sort();
    const at = new Map(categories.map((c, i) => [c, i]));
    const codes = new Int32Array(n);
    for (let i = 0; i < n; i++) codes[i] = labels[i] === null ? -1 : at.get(labels[i]!)!;
    return { codes, categories };
  }
  throw new Error(`${op}: obs column "${key}" is numeric; group by a categorical (or string) column`);
}

/**
 * Dense values of some columns of a matrix (one Float64Array of length rows per requested column),
 * in one pass over the stored values: never densifies the whole matrix.
 */
export function matrixColumns(m: Matrix, cols: readonly number[]): Float64Array[] {
  const rows = m.shape[0]!;
  const width = m.shape[1]!;
  const out = cols.map(() => new Float64Array(rows));
  const slotOf = new Int32Array(width).fill(-1);
  const dup: number[][] = cols.map(() => []);
  cols.forEach((c, s) => {
    if (slotOf[c]! < 0) slotOf[c] = s;
    else dup[slotOf[c]!]!.push(s);
  });
  if (m.kind === "dense") {
    const d = m.data as unknown as ArrayLike<number>;
    cols.forEach((c, s) => {
      const o = out[s]!;
      for (let i = 0; i < rows; i++) o[i] = Number(d[i * width + c]);
    });
    return out;
  }
  const data = m.data as unknown as ArrayLike<number>;
  if (m.kind === "csc") {
    cols.forEach((c, s) => {
      const o = out[s]!;
      for (let k = Number(m.indptr[c]); k < Number(m.indptr[c + 1]); k++) o[m.indices[k]!] = Number(data[k]);
    });
    return out;
  }
  for (let i = 0; i < rows; i++) {
    for (let k = Number(m.indptr[i]); k < Number(m.indptr[i + 1]); k++) {
      const s = slotOf[m.indices[k]!]!;
      if (s >= 0) {
        const v = Number(data[k]);
        out[s]![i] = v;
        for (const t of dup[s]!) out[t]![i] = v;
      }
    }
  }
  return out;
}

/** Dense values of some rows of a matrix (one Float64Array of length cols per requested row). */
export function matrixRows(m: Matrix, rowsWanted: readonly number[]): Float64Array[] {
  const width = m.shape[1]!;
  if (m.kind === "csc") {
    const t: SparseMatrix = { ...m, kind: "csr", shape: [m.shape[1], m.shape[0]] };
    return matrixColumns(t, rowsWanted);
  }
  const data = m.data as unknown as ArrayLike<number>;
  return rowsWanted.map((r) => {
    const o = new Float64Array(width);
    if (m.kind === "dense") for (let j = 0; j < width; j++) o[j] = Number(data[r * width + j]);
    else
      for (let k = Number(m.indptr[r]); k < Number(m.indptr[r + 1]); k++) o[m.indices[k]!] = Number(data[k]);
    return o;
  });
}

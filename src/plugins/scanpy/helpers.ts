/**
 * Helpers every part of the `scanpy` plugin shares: finding the table and the matrix an operation
 * works on (X or a layer), putting it in CSR for the row-wise kernels, reading boolean columns, building
 * result columns, and subsetting a whole table along obs or var the way anndata's
 * `_inplace_subset_obs`/`_inplace_subset_var` do (every aligned slot follows; unused categories are
 * dropped with their colours).
 */
import {
  allocArray,
  type DenseArray,
  type Matrix,
  type SparseMatrix,
  type TypedArray,
} from "../../sdk/data/arrays.js";
import { type Column, type DataFrame, dataFrame } from "../../sdk/data/dataframe.js";
import { loadMatrix, type MatrixSlot } from "../../sdk/data/lazy.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { frameRows, maskPositions, matrixRows, subsetTableRows } from "../../sdk/data/subset.js";
import { type AxisArray, makeTable, type Table, updateTable } from "../../sdk/data/table.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { csrSubsetColumns, csrSubsetRows, numberData } from "../../sdk/math/csr.js";
import { allocIndex, switchCompression } from "../../sdk/math/sparse.js";

/**
 * The active table of an operation (`ctx.table`), or an error naming the operation and the tables, or saying
 * that the table has no cells.
 */
export function activeTable(sd: SpatialData, ctx: Pick<OpContext, "table">, op: string): Table {
  const t = getTable(sd, ctx.table, op);
  // Checked at submission too, but an earlier step of the same queue (a filter) may have emptied the table.
  if (t.obs.index.values.length === 0)
    throw new Error(
      `${op}: the table "${ctx.table}" has no cells (a filter removed them all?); nothing to compute`,
    );
  return t;
}

/** The table an operation works on (`sd.tables[name]`), or a clear error. */
export function getTable(sd: SpatialData, name: string, op: string): Table {
  const t = sd.tables[name];
  if (!t) {
    const have = Object.keys(sd.tables);
    throw new Error(`${op}: no table "${name}" (tables: ${have.length ? have.join(", ") : "none"})`);
  }
  return t;
}

/** The matrix of X or of `layers/<layer>`, read if lazy. */
export async function getMatrix(t: Table, layer: string | null | undefined, op: string): Promise<Matrix> {
  if (layer) {
    const slot = t.layers[layer];
    if (!slot)
      throw new Error(`${op}: no layer "${layer}" (layers: ${Object.keys(t.layers).join(", ") || "none"})`);
    return checkMatrix(await loadMatrix(slot), `layers/${layer}`, op);
  }
  if (!t.X) throw new Error(`${op}: the table has no X`);
  return checkMatrix(await loadMatrix(t.X), "X", op);
}

function checkMatrix(m: Matrix, where: string, op: string): Matrix {
  if (m.kind === "dense" && m.shape.length !== 2)
    throw new Error(`${op}: ${where} is ${m.shape.length}-d, expected a 2-d matrix`);
  return m;
}

/**
 * Refuse a matrix with negative values where an operation expects counts: data already scaled or
 * centred (`sc.pp.scale`) has them, and normalize_total or log1p on it give NaN or meaningless values
 * that only surface steps later (highly_variable_genes' "bin edges must be unique"). `where` names the
 * matrix (`X`, `layers/counts`), `fix` what to do instead. One pass over the stored values; the minimum
 * is sought only once a negative value is found.
 */
export function refuseNegative(m: Matrix, where: string, op: string, fix: string): void {
  const v = m.data;
  if (v instanceof Uint8Array || v instanceof Uint16Array || v instanceof Uint32Array) return;
  if (v instanceof BigUint64Array) return;
  const x = numberData(v);
  const n = x.length;
  let k = 0;
  while (k < n && !(x[k]! < 0)) k++;
  if (k === n) return;
  let min = x[k]!;
  for (; k < n; k++) if (x[k]! < min) min = x[k]!;
  throw new Error(
    `${op}: ${where} has negative values (min ${Number(min.toPrecision(3))}): it looks already scaled or log-transformed; ${fix}`,
  );
}

/** A dense 2-d matrix as CSR (zeros dropped). */
export function denseToCsr(a: DenseArray): SparseMatrix {
  const [rows, cols] = a.shape as [number, number];
  const src = numberData(a.data);
  let nnz = 0;
  for (let k = 0; k < src.length; k++) if (src[k] !== 0) nnz++;
  const indptr = allocIndex(rows + 1, nnz);
  const indices = allocIndex(nnz, cols);
  const data = allocArray(src === a.data ? a.dtype : "float64", nnz) as TypedArray;
  const dst = data as unknown as { [i: number]: number };
  let at = 0;
  for (let i = 0; i < rows; i++) {
    const base = i * cols;
    for (let j = 0; j < cols; j++) {
      const v = src[base + j]!;
      if (v !== 0) {
        indices[at] = j;
        dst[at] = v;
        at++;
      }
    }
    indptr[i + 1] = at;
  }
  return {
    kind: "csr",
    dtype: src === a.data ? a.dtype : "float64",
    shape: [rows, cols],
    data,
    indices,
    indptr,
  };
}

/** Any matrix as CSR: a CSR input is returned as is, CSC and dense are converted (a temporary copy). */
export function asCsr(m: Matrix): SparseMatrix {
  if (m.kind === "csr") return m;
  if (m.kind === "csc") return switchCompression(m);
  return denseToCsr(m as DenseArray);
}

/** A boolean obs/var column as a 0/1 mask (missing values count as false). */
export function boolMask(df: DataFrame, name: string, where: string, op: string): Uint8Array {
  const col = df.columns[name];
  if (!col) throw new Error(`${op}: no ${where} column "${name}"`);
  const n = df.index.values.length;
  const out = new Uint8Array(n);
  if (col.kind === "dense") {
    const d = numberData(col.data);
    for (let i = 0; i < n; i++) out[i] = d[i] ? 1 : 0;
    if (col.dtype !== "bool") {
      for (let i = 0; i < n; i++)
        if (d[i] !== 0 && d[i] !== 1) throw new Error(`${op}: ${where} column "${name}" is not boolean`);
    }
    return out;
  }
  if (col.kind === "nullable" && col.dtype === "bool") {
    for (let i = 0; i < n; i++) out[i] = !col.mask[i] && col.data[i] ? 1 : 0;
    return out;
  }
  throw new Error(`${op}: ${where} column "${name}" is not boolean (it is ${col.kind})`);
}

/** A float64 column value. */
export function f64Column(data: Float64Array): DenseArray<Float64Array> {
  const out = allocArray("float64", data.length) as Float64Array;
  out.set(data);
  return { kind: "dense", dtype: "float64", shape: [data.length], data: out };
}

/** A float32 column value (rounded from float64). */
export function f32Column(data: ArrayLike<number>): DenseArray<Float32Array> {
  const out = allocArray("float32", data.length) as Float32Array;
  for (let i = 0; i < data.length; i++) out[i] = data[i]!;
  return { kind: "dense", dtype: "float32", shape: [data.length], data: out };
}

/** An int32 column value. */
export function i32Column(data: ArrayLike<number>): DenseArray<Int32Array> {
  const out = allocArray("int32", data.length) as Int32Array;
  for (let i = 0; i < data.length; i++) out[i] = data[i]!;
  return { kind: "dense", dtype: "int32", shape: [data.length], data: out };
}

/** A boolean column value from a 0/1 mask. */
export function boolColumn(mask: ArrayLike<number>): DenseArray<Uint8Array> {
  const out = allocArray("bool", mask.length) as Uint8Array;
  for (let i = 0; i < mask.length; i++) out[i] = mask[i] ? 1 : 0;
  return { kind: "dense", dtype: "bool", shape: [mask.length], data: out };
}

// ---------------------------------------------------------------------------------------------
// Subsetting

/** Rows (`axis` 0) or columns (`axis` 1) of a matrix whose mask byte is 1. */
export function subsetMatrix(m: Matrix, mask: Uint8Array, axis: 0 | 1): Matrix {
  // Nothing dropped: share the input (values are immutable).
  if (mask.every((b) => b === 1)) return m;
  if (m.kind === "dense") {
    const [rows, cols] = m.shape as [number, number];
    if (axis === 0) return matrixRows(m, maskPositions(mask));
    const pos = maskPositions(mask);
    const out = allocArray(m.dtype, rows * pos.length);
    const s = m.data as unknown as { [i: number]: unknown };
    const d = out as unknown as { [i: number]: unknown };
    for (let i = 0; i < rows; i++) {
      const base = i * cols;
      const ob = i * pos.length;
      for (let j = 0; j < pos.length; j++) d[ob + j] = s[base + pos[j]!];
    }
    return { kind: "dense", dtype: m.dtype, shape: [rows, pos.length], data: out };
  }
  if (m.kind === "csr") return axis === 0 ? csrSubsetRows(m, mask) : csrSubsetColumns(m, mask);
  // CSC is the CSR of the transpose: rows and columns swap roles.
  const t: SparseMatrix = { ...m, kind: "csr", shape: [m.shape[1], m.shape[0]] };
  const r = axis === 0 ? csrSubsetColumns(t, mask) : csrSubsetRows(t, mask);
  return { ...r, kind: "csc", shape: [r.shape[1], r.shape[0]] };
}

async function subsetSlot(slot: MatrixSlot, mask: Uint8Array, axis: 0 | 1): Promise<Matrix> {
  return subsetMatrix(await loadMatrix(slot), mask, axis);
}

async function subsetAxisArray(a: AxisArray, mask: Uint8Array, pos: Int32Array): Promise<AxisArray> {
  if (a.kind === "dataframe") return frameRows(a, pos).df;
  return subsetSlot(a, mask, 0);
}

async function mapRecord<T, U>(
  rec: Readonly<Record<string, T>>,
  f: (v: T) => Promise<U>,
): Promise<Record<string, U>> {
  const out: Record<string, U> = {};
  for (const [k, v] of Object.entries(rec)) out[k] = await f(v);
  return out;
}

/**
 * The table restricted to the cells of `mask` (anndata's `_inplace_subset_obs`, through the SDK's
 * `subsetTableRows`): X, layers, obs, obsm, obsp (both axes) and raw's rows; var, varm, varp and uns
 * stay (uns colours follow the kept categories). `obsExtra` columns are added to obs before subsetting.
 */
export async function subsetObs(
  t: Table,
  mask: Uint8Array,
  obsExtra: Record<string, Column> = {},
): Promise<Table> {
  if (!Object.keys(obsExtra).length) return subsetTableRows(t, mask);
  const obs = t.obs;
  const cols = { ...obs.columns, ...obsExtra };
  const order = [...obs.columnOrder, ...Object.keys(obsExtra).filter((k) => !(k in obs.columns))];
  return subsetTableRows(updateTable(t, { obs: dataFrame(obs.index, cols, obs.indexName, order) }), mask);
}

/**
 * The table restricted to the genes of `mask` (anndata's `_inplace_subset_var`): X's and layers'
 * columns, var, varm, varp (both axes); obs, obsm, obsp and raw stay. `varExtra` columns are added
 * to var before subsetting.
 */
export async function subsetVar(
  t: Table,
  mask: Uint8Array,
  varExtra: Record<string, Column> = {},
): Promise<Table> {
  const pos = maskPositions(mask);
  let vr = t.var;
  if (Object.keys(varExtra).length) {
    const cols = { ...vr.columns, ...varExtra };
    const order = [...vr.columnOrder, ...Object.keys(varExtra).filter((k) => !(k in vr.columns))];
    vr = dataFrame(vr.index, cols, vr.indexName, order);
  }
  // Colours in uns/<col>_colors follow the kept categories.
  const subsetVarFrame = frameRows(vr, pos, t.uns);
  return makeTable({
    X: t.X ? await subsetSlot(t.X, mask, 1) : null,
    obs: t.obs,
    var: subsetVarFrame.df,
    obsm: { ...t.obsm },
    varm: await mapRecord(t.varm, (a) => subsetAxisArray(a, mask, pos)),
    obsp: { ...t.obsp },
    varp: await mapRecord(t.varp, async (s) => subsetMatrix(await subsetSlot(s, mask, 0), mask, 1)),
    layers: await mapRecord(t.layers, (s) => subsetSlot(s, mask, 1)),
    uns: subsetVarFrame.uns ?? t.uns,
    raw: t.raw,
    annotation: t.annotation,
  });
}

/**
 * Helpers of the squidpy operations: the active table, its spatial coordinates, its spatial graph and
 * a cluster column, with errors that name what is missing. Not an operations module (the plugin
 * descriptor does not list it).
 */
import type { Categorical, Matrix, SparseMatrix } from "../../sdk/data/arrays.js";
import { loadMatrix } from "../../sdk/data/lazy.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { nObs, type Table } from "../../sdk/data/table.js";
import type { CsrGraph } from "../../sdk/math/spatial/graph.js";
import { activeTable, categoricalColumn, categoryLabels } from "../tessera/tables.js";

export { activeTable };

/** squidpy's `Key.obsp.spatial_conn`: `spatial_connectivities`, or `<key>_connectivities` unless it ends so. */
export function connectivitiesKey(key: string | null | undefined): string {
  if (key == null) return "spatial_connectivities";
  return key.endsWith("_connectivities") ? key : `${key}_connectivities`;
}

/** The coordinates in obsm `key` as n × dim float64 (row-major), or an error naming the key. */
export async function spatialCoords(
  t: Table,
  table: string,
  key: string,
): Promise<{ coords: Float64Array; n: number; dim: number }> {
  const slot = Object.hasOwn(t.obsm, key) ? t.obsm[key] : undefined;
  if (!slot) {
    const have = Object.keys(t.obsm);
    throw new Error(
      `table "${table}" has no obsm "${key}" (spatial coordinates); obsm keys: ${have.length ? have.join(", ") : "none"}`,
    );
  }
  if (slot.kind === "dataframe")
    throw new Error(`obsm "${key}" of table "${table}" is a data frame, not a coordinate matrix`);
  const m: Matrix = await loadMatrix(slot);
  if (m.kind !== "dense" || m.shape.length !== 2) {
    throw new Error(
      `obsm "${key}" of table "${table}" must be a dense n × 2 (or n × 3) array, got ${m.kind} ${m.shape.join(" × ")}`,
    );
  }
  const n = m.shape[0] as number;
  const dim = m.shape[1] as number;
  if (dim < 2)
    throw new Error(
      `obsm "${key}" of table "${table}" has ${dim} column(s); spatial coordinates need at least 2`,
    );
  const src = m.data as unknown as ArrayLike<number | bigint>;
  const coords = new Float64Array(n * dim);
  for (let i = 0; i < n * dim; i++) coords[i] = Number(src[i]);
  return { coords, n, dim };
}

/** The first two coordinate columns (squidpy's co-occurrence and Ripley use x and y). */
export function xy(coords: Float64Array, n: number, dim: number): Float64Array {
  if (dim === 2) return coords;
  const out = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    out[2 * i] = coords[i * dim] as number;
    out[2 * i + 1] = coords[i * dim + 1] as number;
  }
  return out;
}

/** The square graph in obsp `key` as CSR with int32 indices and float64 weights. */
export async function obspGraph(t: Table, table: string, key: string): Promise<CsrGraph<Float64Array>> {
  const slot = Object.hasOwn(t.obsp, key) ? t.obsp[key] : undefined;
  if (!slot) {
    throw new Error(
      `table "${table}" has no obsp "${key}"; run gr.spatial_neighbors first (obsp keys: ${Object.keys(t.obsp).join(", ") || "none"})`,
    );
  }
  const m: Matrix = await loadMatrix(slot);
  const n = nObs(t);
  if (m.shape[0] !== n || m.shape[1] !== n)
    throw new Error(`obsp "${key}" is ${m.shape.join(" × ")}, not ${n} × ${n}`);
  if (m.kind === "dense") {
    const src = m.data as unknown as ArrayLike<number | bigint>;
    const indptr = new Int32Array(n + 1);
    const cols: number[] = [];
    const vals: number[] = [];
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const v = Number(src[i * n + j]);
        if (v !== 0) {
          cols.push(j);
          vals.push(v);
        }
      }
      indptr[i + 1] = cols.length;
    }
    return { n, indptr, indices: Int32Array.from(cols), data: Float64Array.from(vals) };
  }
  const s = m.kind === "csc" ? transposeToCsr(m) : m;
  return { n, indptr: asInt32(s.indptr), indices: asInt32(s.indices), data: asFloat64(s.data) };
}

/** `a` as an Int32Array: itself, or a typed copy (a typed-to-typed copy, not a per-value callback). */
function asInt32(a: ArrayLike<number | bigint>): Int32Array {
  if (a instanceof Int32Array) return a;
  if (a instanceof BigInt64Array || a instanceof BigUint64Array) return Int32Array.from(a, Number);
  return new Int32Array(a as ArrayLike<number>);
}

/** `a` as a Float64Array, the same way. */
function asFloat64(a: ArrayLike<number | bigint>): Float64Array {
  if (a instanceof Float64Array) return a;
  if (a instanceof BigInt64Array || a instanceof BigUint64Array) return Float64Array.from(a, Number);
  return new Float64Array(a as ArrayLike<number>);
}

/** A CSC matrix as CSR of the same matrix. */
function transposeToCsr(m: SparseMatrix): SparseMatrix {
  const [rows, cols] = m.shape;
  const nnz = Number(m.indptr[cols]);
  const indptr = new Int32Array(rows + 1);
  for (let p = 0; p < nnz; p++) indptr[Number(m.indices[p]) + 1]++;
  for (let i = 0; i < rows; i++) indptr[i + 1] = (indptr[i + 1] as number) + (indptr[i] as number);
  const fill = indptr.slice(0, rows);
  const indices = new Int32Array(nnz);
  const data = new Float64Array(nnz);
  for (let j = 0; j < cols; j++) {
    for (let p = Number(m.indptr[j]); p < Number(m.indptr[j + 1]); p++) {
      const q = fill[Number(m.indices[p])]++;
      indices[q] = j;
      data[q] = Number(m.data[p]);
    }
  }
  return { kind: "csr", dtype: "float64", shape: [rows, cols], data, indices, indptr };
}

/** A categorical obs column: codes (−1 for missing) as int32, and its category labels. */
export function clusters(
  t: Table,
  table: string,
  key: string,
): { codes: Int32Array; labels: string[]; column: Categorical } {
  const col = categoricalColumn(t, table, key);
  const labels = categoryLabels(col.categories);
  const codes = col.codes instanceof Int32Array ? col.codes : Int32Array.from(col.codes as ArrayLike<number>);
  return { codes, labels, column: col };
}

/** Throw when a categorical has fewer than `min` categories. */
export function needCategories(labels: readonly string[], key: string, min: number): void {
  if (labels.length < min) {
    throw new Error(
      `obs column "${key}" has ${labels.length} categor${labels.length === 1 ? "y" : "ies"}; need at least ${min}`,
    );
  }
}

/** The table the context names, from `sd`. */
export function tableOf(sd: SpatialData, table: string): Table {
  return activeTable(sd, table);
}

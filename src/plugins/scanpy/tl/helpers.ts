/**
 * Helpers the `sc.tl` embeddings and trajectory tools share (scanpy's `tools/_utils.py`): the
 * representation a tool reads (`use_rep`/`n_pcs`, as `_choose_representation`), the neighbourhood graph
 * a `neighbors_key` names, categorical obs columns, and result matrices.
 */
import {
  allocArray,
  type Categorical,
  type DenseArray,
  type SparseMatrix,
} from "../../../sdk/data/arrays.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import { nObs, type Table } from "../../../sdk/data/table.js";
import { isUnsDict, type UnsValue, unsGet } from "../../../sdk/data/uns.js";
import { switchCompression } from "../../../sdk/math/sparse.js";

/** A cell representation as n×d row-major numbers. */
export interface Representation {
  readonly data: Float32Array | Float64Array;
  readonly n: number;
  readonly d: number;
  /** Where it came from (`obsm/X_pca`, `X`). */
  readonly source: string;
}

/**
 * Scanpy's `_choose_representation`: `use_rep` (an obsm key, or `X`), else `X_pca` (its first
 * `n_pcs` columns), else X when it has at most 50 variables. Scanpy would run PCA itself beyond
 * that; here the caller is told to run `sc.pp.pca` first.
 * @internal
 */
export async function chooseRepresentation(
  t: Table,
  op: string,
  use_rep?: string | null,
  n_pcs?: number | null,
): Promise<Representation> {
  const n = nObs(t);
  let m: DenseArray | SparseMatrix;
  let source: string;
  if (use_rep === "X" || (!use_rep && !t.obsm.X_pca && t.X && t.var.index.values.length <= 50)) {
    if (!t.X) throw new Error(`${op}: the table has no X`);
    m = await loadMatrix(t.X);
    source = "X";
  } else {
    const key = use_rep || "X_pca";
    const entry = t.obsm[key];
    if (!entry) {
      throw new Error(
        use_rep
          ? `${op}: no obsm["${key}"] (use_rep)`
          : `${op}: no obsm["X_pca"]; run sc.pp.pca first or pass use_rep`,
      );
    }
    if (entry.kind === "dataframe") throw new Error(`${op}: obsm["${key}"] is a data frame, not a matrix`);
    m = await loadMatrix(entry);
    source = `obsm/${key}`;
  }
  const width = m.shape.length > 1 ? m.shape[1]! : 1;
  const d = n_pcs != null && source !== "X" ? Math.min(n_pcs, width) : width;
  if (n_pcs != null && n_pcs > width)
    throw new Error(`${op}: n_pcs = ${n_pcs} exceeds the ${width} columns of ${source}`);
  if (m.kind === "dense") {
    const src = m.data;
    if (src instanceof Float32Array || src instanceof Float64Array) {
      if (d === width) return { data: src, n, d, source };
    }
    const out = new Float64Array(n * d);
    for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) out[i * d + j] = Number(src[i * width + j]);
    return { data: out, n, d, source };
  }
  // Sparse (X): densify the needed columns only when it is small enough to hold.
  if (n * d > 2e8)
    throw new Error(
      `${op}: ${source} is sparse and too large to densify (${n}×${d}); use a PCA representation`,
    );
  const csr = m.kind === "csr" ? m : switchCompression(m);
  const out = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    for (let p = Number(csr.indptr[i]); p < Number(csr.indptr[i + 1]); p++) {
      const j = csr.indices[p] as number;
      if (j < d) out[i * d + j] = Number(csr.data[p]);
    }
  }
  return { data: out, n, d, source };
}

/**
 * The obsp keys of a neighbors run: `uns[neighbors_key].connectivities_key`/`distances_key`, else
 * scanpy's defaults (`connectivities`/`distances` for `neighbors`, `<key>_connectivities` otherwise).
 * @internal
 */
export function neighborsKeys(
  t: Table,
  neighbors_key?: string | null,
): { connectivities: string; distances: string } {
  const key = neighbors_key || "neighbors";
  const entry = unsGet(t.uns, key);
  const prefix = key === "neighbors" ? "" : `${key}_`;
  const read = (name: string, fallback: string) => {
    const v = isUnsDict(entry) ? entry.entries[name] : undefined;
    return typeof v === "string" ? v : fallback;
  };
  return {
    connectivities: read("connectivities_key", `${prefix}connectivities`),
    distances: read("distances_key", `${prefix}distances`),
  };
}

/**
 * A square obsp graph as CSR (converted from CSC or dense when stored so).
 * @internal
 */
export async function obspGraph(t: Table, key: string, op: string): Promise<SparseMatrix> {
  const slot = t.obsp[key];
  if (!slot) throw new Error(`${op}: no obsp["${key}"]; run sc.pp.neighbors first`);
  const m = await loadMatrix(slot);
  if (m.kind === "csr") return m;
  if (m.kind === "csc") return switchCompression(m);
  const n = m.shape[0]!;
  const indptr = new Int32Array(n + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const v = Number(m.data[i * n + j]);
      if (v !== 0) {
        cols.push(j);
        vals.push(v);
      }
    }
    indptr[i + 1] = cols.length;
  }
  return {
    kind: "csr",
    dtype: "float64",
    shape: [n, n],
    data: Float64Array.from(vals),
    indices: Int32Array.from(cols),
    indptr,
  };
}

/**
 * A categorical obs column, or a clear error naming the column.
 * @internal
 */
export function categoricalObs(
  t: Table,
  key: string,
  op: string,
): { codes: Int32Array; categories: string[] } {
  const col = t.obs.columns[key];
  if (!col) throw new Error(`${op}: no obs column "${key}"`);
  if (col.kind !== "categorical") throw new Error(`${op}: obs column "${key}" is not categorical`);
  const c = col as Categorical;
  const categories =
    c.categories.kind === "string"
      ? c.categories.values.map((v) => String(v))
      : Array.from(c.categories.data as ArrayLike<number>, (v) => String(v));
  return { codes: c.codes, categories };
}

/** A float32 n×d dense matrix (row-major) copied from `src`. */
export function float32Matrix(src: ArrayLike<number>, n: number, d: number): DenseArray {
  const out = allocArray("float32", n * d) as Float32Array;
  for (let i = 0; i < n * d; i++) out[i] = src[i]!;
  return { kind: "dense", dtype: "float32", shape: [n, d], data: out };
}

/** A float64 n×d dense matrix (row-major) copied from `src`. */
export function float64Matrix(src: ArrayLike<number>, n: number, d: number): DenseArray {
  const out = allocArray("float64", n * d) as Float64Array;
  for (let i = 0; i < n * d; i++) out[i] = src[i]!;
  return { kind: "dense", dtype: "float64", shape: [n, d], data: out };
}

/**
 * Connected components of an undirected graph given as CSR (union-find over its stored entries).
 * @internal
 */
export function connectedComponents(g: SparseMatrix): { count: number; labels: Int32Array } {
  const n = g.shape[0];
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (a: number): number => {
    let r = a;
    while (parent[r] !== r) r = parent[r]!;
    while (parent[a] !== r) {
      const next = parent[a]!;
      parent[a] = r;
      a = next;
    }
    return r;
  };
  const csr = g.kind === "csr" ? g : switchCompression(g);
  for (let i = 0; i < n; i++) {
    for (let p = Number(csr.indptr[i]); p < Number(csr.indptr[i + 1]); p++) {
      const a = find(i);
      const b = find(csr.indices[p] as number);
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
    }
  }
  const labels = new Int32Array(n).fill(-1);
  const ids = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const r = find(i);
    let id = ids.get(r);
    if (id === undefined) {
      id = ids.size;
      ids.set(r, id);
    }
    labels[i] = id;
  }
  return { count: ids.size, labels };
}

/** A number stored in uns as a number, a bigint or a one-element array; `undefined` otherwise. */
export function scalarNumber(v: UnsValue | undefined): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (
    v &&
    typeof v === "object" &&
    (v as DenseArray).kind === "dense" &&
    (v as DenseArray).data.length === 1
  ) {
    return Number((v as DenseArray).data[0]);
  }
  return undefined;
}

/** An n×n CSR matrix from one map (column → value) per row, columns sorted within each row. */
export function csrFromRows(rows: Map<number, number>[], n: number): SparseMatrix {
  const indptr = allocArray("int32", n + 1) as Int32Array;
  let nnz = 0;
  for (let i = 0; i < n; i++) nnz += rows[i]!.size;
  const indices = allocArray("int32", nnz) as Int32Array;
  const data = allocArray("float64", nnz) as Float64Array;
  let at = 0;
  for (let i = 0; i < n; i++) {
    const cols = [...rows[i]!.keys()].sort((a, b) => a - b);
    for (const j of cols) {
      indices[at] = j;
      data[at] = rows[i]!.get(j)!;
      at++;
    }
    indptr[i + 1] = at;
  }
  return { kind: "csr", dtype: "float64", shape: [n, n], data, indices, indptr };
}

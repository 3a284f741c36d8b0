/**
 * scanpy's `sc.get` accessors as extracts (read-only, answered off the queue): `obs_df`, `var_df`,
 * `rank_genes_groups_df` and `aggregate`. Each returns plain JSON (numbers, strings, booleans and
 * `null` for missing or non-finite values), never a table.
 *
 * The module also holds the small accessors the `sc.tl` operations share, as scanpy's `get` module
 * does (`_get_obs_rep`): the expression matrix a call reads (X, a layer or raw), and a categorical
 * grouping of the cells.
 */
import type { Matrix, SparseMatrix, StringArray } from "../../sdk/data/arrays.js";
import { type Column, columnValue, type DataFrame, nRows } from "../../sdk/data/dataframe.js";
import { loadMatrix, type MatrixSlot } from "../../sdk/data/lazy.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { AxisArray, Table } from "../../sdk/data/table.js";
import { isUnsDict, type UnsDict, type UnsValue, unsGet } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { activeTable } from "./pp-matrix.js";

// ---------------------------------------------------------------------------------------------
// Shared accessors (helpers: their first parameter is not SpatialData, so the build skips them)
// ---------------------------------------------------------------------------------------------

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

function names(idx: StringArray): string[] {
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

/** A JSON cell value: non-finite numbers and bigints beyond 2^53 become null / numbers. */
type JsonCell = string | number | boolean | null;

function jsonValue(v: string | number | boolean | bigint | null): JsonCell {
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number" && !Number.isFinite(v)) return null;
  return v;
}

function columnJson(col: Column): JsonCell[] {
  const n =
    col.kind === "string"
      ? col.values.length
      : col.kind === "categorical"
        ? col.codes.length
        : col.data.length;
  const out: JsonCell[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = jsonValue(columnValue(col, i));
  return out;
}

function numbersJson(a: ArrayLike<number>): (number | null)[] {
  return Array.from(a, (v) => (Number.isFinite(v) ? v : null));
}

/** A frame as JSON: the row labels and one array of values per column, in the order asked. */
export interface FrameJson {
  readonly index: string[];
  readonly columns: Record<string, JsonCell[]>;
}

// ---------------------------------------------------------------------------------------------
// obs_df / var_df
// ---------------------------------------------------------------------------------------------

/** Params of `obs_df`. */
export interface ObsDfParams {
  /**
   * Keys from `var_names` (expression values), `var[gene_symbols]` or obs columns, in the order wanted.
   * @default []
   */
  keys?: string[];
  /**
   * `[obsm key, column index]` pairs; each becomes a column `<key>-<index>`.
   * @default []
   */
  obsm_keys?: [string, number][];
  /** Layer to read expression values from (default X). */
  layer?: string;
  /** Column of var to search `keys` in instead of var_names. */
  gene_symbols?: string;
  /**
   * Read expression values from `raw`.
   * @default false
   */
  use_raw?: boolean;
}

/** Split keys into frame columns and names of the other axis (scanpy's `_check_indices`). */
function checkIndices(
  frame: DataFrame,
  altNames: readonly string[],
  keys: readonly string[],
  dim: "obs" | "var",
  aliases: readonly string[] | null,
  op: string,
): { colKeys: string[]; indexKeys: Map<string, number> } {
  const lookup = new Map<string, number>();
  const dupAlias = new Set<string>();
  (aliases ?? altNames).forEach((name, i) => {
    if (lookup.has(name)) dupAlias.add(name);
    else lookup.set(name, i);
  });
  const colKeys: string[] = [];
  const indexKeys = new Map<string, number>();
  const notFound: string[] = [];
  const other = dim === "obs" ? "var" : "obs";
  for (const key of new Set(keys)) {
    if (key in frame.columns) {
      if (lookup.has(key))
        throw new Error(`${op}: the key "${key}" is found in both ${dim} and ${other}_names`);
      colKeys.push(key);
    } else if (lookup.has(key)) {
      if (dupAlias.has(key)) throw new Error(`${op}: found duplicate entries for "${key}" in ${other} names`);
      indexKeys.set(key, lookup.get(key)!);
    } else notFound.push(key);
  }
  if (notFound.length > 0) {
    throw new Error(
      `${op}: could not find keys ${JSON.stringify(notFound)} in ${dim} columns or ${other}_names`,
    );
  }
  return { colKeys, indexKeys };
}

function axisColumn(a: AxisArray, key: string, idx: number, op: string): JsonCell[] {
  if (a.kind === "dataframe") {
    const name = a.columnOrder[idx];
    if (name === undefined) throw new Error(`${op}: obsm "${key}" has no column ${idx}`);
    return columnJson(a.columns[name]!);
  }
  if (a.kind === "lazy") throw new Error(`${op}: obsm "${key}" is not read yet`);
  const width = a.shape[1] ?? 1;
  if (!(idx >= 0 && idx < width))
    throw new Error(`${op}: obsm "${key}" has ${width} columns, asked for ${idx}`);
  return numbersJson(matrixColumns(a, [idx])[0]!);
}

/**
 * Values of obs columns, genes and obsm components for every cell, as a frame indexed by obs_names
 * (scanpy's `sc.get.obs_df`).
 * @effect extract
 */
export async function obs_df(sd: SpatialData, params: ObsDfParams, ctx: OpContext): Promise<FrameJson> {
  const op = "obs_df";
  const t = activeTable(sd, ctx, op);
  const keys = params.keys ?? [];
  const useRaw = params.use_raw ?? false;
  if (useRaw && params.layer)
    throw new Error(`${op}: cannot specify use_raw=True and a layer at the same time`);
  const varFrame = useRaw ? t.raw?.var : t.var;
  if (!varFrame) throw new Error(`${op}: use_raw=True but the table has no raw`);
  const varNames = names(varFrame.index);
  let aliases: string[] | null = null;
  if (params.gene_symbols) {
    const c = varFrame.columns[params.gene_symbols];
    if (!c) throw new Error(`${op}: no var column "${params.gene_symbols}"`);
    aliases = columnJson(c).map((v) => String(v));
  }
  const { colKeys, indexKeys } = checkIndices(t.obs, varNames, keys, "obs", aliases, op);
  const columns: Record<string, JsonCell[]> = {};
  if (indexKeys.size > 0) {
    const src = await expressionSource(t, useRaw, params.layer, op);
    const wanted = [...indexKeys.entries()];
    const vals = matrixColumns(
      src.matrix,
      wanted.map(([, j]) => j),
    );
    wanted.forEach(([k], s) => {
      columns[k] = numbersJson(vals[s]!);
    });
  }
  for (const k of colKeys) columns[k] = columnJson(t.obs.columns[k]!);
  const ordered: Record<string, JsonCell[]> = {};
  for (const k of keys) ordered[k] = columns[k]!;
  for (const [k, idx] of params.obsm_keys ?? []) {
    const a = t.obsm[k];
    if (!a) throw new Error(`${op}: no obsm "${k}"`);
    ordered[`${k}-${idx}`] = axisColumn(a, k, idx, op);
  }
  return { index: names(t.obs.index), columns: ordered };
}

/** Params of `var_df`. */
export interface VarDfParams {
  /**
   * Keys from obs_names (a cell's expression across genes) or var columns, in the order wanted.
   * @default []
   */
  keys?: string[];
  /**
   * `[varm key, column index]` pairs; each becomes a column `<key>-<index>`.
   * @default []
   */
  varm_keys?: [string, number][];
  /** Layer to read expression values from (default X). */
  layer?: string;
}

/**
 * Values of var columns, cells and varm components for every gene, as a frame indexed by var_names
 * (scanpy's `sc.get.var_df`).
 * @effect extract
 */
export async function var_df(sd: SpatialData, params: VarDfParams, ctx: OpContext): Promise<FrameJson> {
  const op = "var_df";
  const t = activeTable(sd, ctx, op);
  const keys = params.keys ?? [];
  const { colKeys, indexKeys } = checkIndices(t.var, names(t.obs.index), keys, "var", null, op);
  const columns: Record<string, JsonCell[]> = {};
  if (indexKeys.size > 0) {
    const src = await expressionSource(t, false, params.layer, op);
    const wanted = [...indexKeys.entries()];
    const vals = matrixRows(
      src.matrix,
      wanted.map(([, i]) => i),
    );
    wanted.forEach(([k], s) => {
      columns[k] = numbersJson(vals[s]!);
    });
  }
  for (const k of colKeys) columns[k] = columnJson(t.var.columns[k]!);
  const ordered: Record<string, JsonCell[]> = {};
  for (const k of keys) ordered[k] = columns[k]!;
  for (const [k, idx] of params.varm_keys ?? []) {
    const a = t.varm[k];
    if (!a) throw new Error(`${op}: no varm "${k}"`);
    ordered[`${k}-${idx}`] = axisColumn(a, k, idx, op);
  }
  return { index: names(t.var.index), columns: ordered };
}

// ---------------------------------------------------------------------------------------------
// rank_genes_groups_df
// ---------------------------------------------------------------------------------------------

/** Params of `rank_genes_groups_df`. */
export interface RankGenesGroupsDfParams {
  /** Group(s) to return; all groups when absent. */
  group?: string | string[];
  /**
   * uns key the results were stored under.
   * @default "rank_genes_groups"
   */
  key?: string;
  /** Keep only rows whose adjusted p-value is below this. */
  pval_cutoff?: number;
  /** Keep only rows whose log2 fold change is above this. */
  log2fc_min?: number;
  /** Keep only rows whose log2 fold change is below this. */
  log2fc_max?: number;
  /** var column with gene symbols to add to each row. */
  gene_symbols?: string;
}

/** A long table of ranked genes: column names in order, and one record per row. */
export interface RowsJson {
  readonly columns: string[];
  readonly rows: Record<string, JsonCell>[];
}

/** A per-group result frame of `rank_genes_groups` (a DataFrame with one column per group). */
function resultFrame(entry: UnsDict, field: string, key: string, op: string): DataFrame {
  const v: UnsValue | undefined = entry.entries[field];
  if (!v || typeof v !== "object" || v.kind !== "dataframe") {
    throw new Error(`${op}: uns "${key}/${field}" is missing or not a per-group frame`);
  }
  return v;
}

/**
 * Results of `rank_genes_groups` as a long table, one row per (group, rank): `group` (left out when
 * one group is asked for), `names`, `scores`, `logfoldchanges`, `pvals`, `pvals_adj`, and
 * `pct_nz_group`/`pct_nz_reference` when `pts` was computed (scanpy's `sc.get.rank_genes_groups_df`).
 * @effect extract
 */
export async function rank_genes_groups_df(
  sd: SpatialData,
  params: RankGenesGroupsDfParams,
  ctx: OpContext,
): Promise<RowsJson> {
  const op = "rank_genes_groups_df";
  const t = activeTable(sd, ctx, op);
  const key = params.key ?? "rank_genes_groups";
  const entry = t.uns.entries[key];
  if (!isUnsDict(entry)) throw new Error(`${op}: no rank_genes_groups results in uns "${key}"`);
  const namesFrame = resultFrame(entry, "names", key, op);
  const groups =
    params.group === undefined
      ? [...namesFrame.columnOrder]
      : typeof params.group === "string"
        ? [params.group]
        : params.group;
  for (const g of groups) {
    if (!(g in namesFrame.columns)) {
      throw new Error(
        `${op}: no group "${g}" in uns "${key}" (groups: ${namesFrame.columnOrder.join(", ")})`,
      );
    }
  }
  const method = unsGet(t.uns, `${key}/params/method`);
  const fields =
    method === "logreg" ? ["names", "scores"] : ["names", "scores", "logfoldchanges", "pvals", "pvals_adj"];
  const frames = fields.map((f) => resultFrame(entry, f, key, op));
  let symbols: Map<string, JsonCell> | null = null;
  if (params.gene_symbols) {
    const c = t.var.columns[params.gene_symbols];
    if (!c) throw new Error(`${op}: no var column "${params.gene_symbols}"`);
    const vals = columnJson(c);
    symbols = new Map(names(t.var.index).map((n, i) => [n, vals[i]!]));
  }
  const pts: [string, DataFrame][] = [];
  for (const [f, name] of [
    ["pts", "pct_nz_group"],
    ["pts_rest", "pct_nz_reference"],
  ] as const) {
    const v = entry.entries[f];
    if (v && typeof v === "object" && v.kind === "dataframe") pts.push([name, v]);
  }
  const ptsIndex = pts.map(([, df]) => new Map(names(df.index).map((n, i) => [n, i])));
  const columns = [
    ...(groups.length > 1 ? ["group"] : []),
    ...fields,
    ...(symbols ? [params.gene_symbols!] : []),
    ...pts.map(([n]) => n),
  ];
  const rows: Record<string, JsonCell>[] = [];
  for (const g of groups) {
    const n = nRows(namesFrame);
    for (let r = 0; r < n; r++) {
      const row: Record<string, JsonCell> = {};
      if (groups.length > 1) row.group = g;
      fields.forEach((f, fi) => {
        row[f] = jsonValue(columnValue(frames[fi]!.columns[g]!, r));
      });
      if (method !== "logreg") {
        const padj = row.pvals_adj as number | null;
        const lfc = row.logfoldchanges as number | null;
        if (params.pval_cutoff !== undefined && !(padj !== null && padj < params.pval_cutoff)) continue;
        if (params.log2fc_min !== undefined && !(lfc !== null && lfc > params.log2fc_min)) continue;
        if (params.log2fc_max !== undefined && !(lfc !== null && lfc < params.log2fc_max)) continue;
      }
      if (symbols) row[params.gene_symbols!] = symbols.get(String(row.names)) ?? null;
      let keep = true;
      pts.forEach(([name, df], pi) => {
        const at = ptsIndex[pi]!.get(String(row.names));
        const col = df.columns[g];
        if (at === undefined || !col) keep = false;
        else row[name] = jsonValue(columnValue(col, at));
      });
      if (keep) rows.push(row);
    }
  }
  return { columns, rows };
}

// ---------------------------------------------------------------------------------------------
// aggregate
// ---------------------------------------------------------------------------------------------

/** An aggregation of `aggregate`. */
export type AggFunc = "sum" | "mean" | "count_nonzero" | "var";

/** Params of `aggregate`. */
export interface AggregateParams {
  /** obs column(s) to group the cells by; several columns group by their combinations (`a_b`). */
  by: string | string[];
  /** Aggregation(s) to compute, each giving one groups × features matrix. */
  func: AggFunc | AggFunc[];
  /**
   * Boolean obs column: only cells where it is true are aggregated.
   * @widget obs_key
   */
  mask?: string;
  /**
   * Degrees of freedom of the variance.
   * @default 1
   * @asType integer
   * @minimum 0
   */
  dof?: number;
  /** Layer to aggregate instead of X. */
  layer?: string;
  /** obsm entry to aggregate instead of X. */
  obsm?: string;
}

/** Result of `aggregate`: the groups (rows), the features (columns) and one matrix per function. */
export interface AggregateJson {
  /** Group labels, in category order (combinations joined with `_`), only those with cells. */
  readonly groups: string[];
  /** Feature names: var_names for X or a layer, column positions for an obsm matrix. */
  readonly var_names: string[];
  /** Cells aggregated into each group. */
  readonly n_obs_aggregated: number[];
  /** Per function, a groups × features matrix (row per group). NaN (var of a group of ≤ dof cells) is null. */
  readonly values: Partial<Record<AggFunc, (number | null)[][]>>;
}

/** Combined grouping of several obs columns (scanpy's `_combine_categories`): only used combinations. */
function combinedGrouping(t: Table, by: readonly string[], op: string): Grouping {
  const parts = by.map((k) => {
    const g = groupingOf(t, k, op);
    // pandas' remove_unused_categories, per column.
    const used = new Uint8Array(g.categories.length);
    for (const c of g.codes) if (c >= 0) used[c] = 1;
    const remap = new Int32Array(g.categories.length).fill(-1);
    const cats: string[] = [];
    g.categories.forEach((c, i) => {
      if (used[i]) {
        remap[i] = cats.length;
        cats.push(c);
      }
    });
    return { codes: g.codes.map((c) => (c >= 0 ? remap[c]! : -1)), categories: cats };
  });
  const n = t.obs.index.values.length;
  const codes = new Int32Array(n);
  const sizes = parts.map((p) => p.categories.length);
  for (let i = 0; i < n; i++) {
    let code = 0;
    for (let p = 0; p < parts.length; p++) {
      const c = parts[p]!.codes[i]!;
      if (c < 0) {
        code = -1;
        break;
      }
      code = code * sizes[p]! + c;
    }
    codes[i] = code;
  }
  const total = sizes.reduce((a, b) => a * b, 1);
  const used = new Uint8Array(total);
  for (const c of codes) if (c >= 0) used[c] = 1;
  const remap = new Int32Array(total).fill(-1);
  const categories: string[] = [];
  for (let c = 0; c < total; c++) {
    if (!used[c]) continue;
    const labels: string[] = [];
    let rest = c;
    for (let p = parts.length - 1; p >= 0; p--) {
      labels.unshift(parts[p]!.categories[rest % sizes[p]!]!);
      rest = Math.floor(rest / sizes[p]!);
    }
    remap[c] = categories.length;
    categories.push(labels.join("_"));
  }
  return { codes: codes.map((c) => (c >= 0 ? remap[c]! : -1)), categories };
}

/**
 * Aggregate the cells by a categorical grouping: per group and feature the sum, mean, count of
 * non-zeros or variance (scanpy's `sc.get.aggregate`, which returns an AnnData whose layers are these
 * matrices; here the matrices come back as JSON).
 * @effect extract
 */
export async function aggregate(
  sd: SpatialData,
  params: AggregateParams,
  ctx: OpContext,
): Promise<AggregateJson> {
  const op = "aggregate";
  const t = activeTable(sd, ctx, op);
  const by = typeof params.by === "string" ? [params.by] : params.by;
  if (by.length === 0) throw new Error(`${op}: "by" names no column`);
  const funcs = new Set(typeof params.func === "string" ? [params.func] : params.func);
  for (const f of funcs) {
    if (!["sum", "mean", "count_nonzero", "var"].includes(f))
      throw new Error(`${op}: func "${f}" is not one of sum, mean, count_nonzero, var`);
  }
  if (params.layer && params.obsm) throw new Error(`${op}: give only one of layer and obsm`);
  const dof = params.dof ?? 1;
  const g = combinedGrouping(t, by, op);
  let mask: Column | undefined;
  if (params.mask) {
    mask = t.obs.columns[params.mask];
    if (!mask) throw new Error(`${op}: no obs column "${params.mask}" for the mask`);
  }
  let matrix: Matrix;
  let varNames: string[];
  if (params.obsm) {
    const a = t.obsm[params.obsm];
    if (!a) throw new Error(`${op}: no obsm "${params.obsm}"`);
    if (a.kind === "dataframe")
      throw new Error(`${op}: obsm "${params.obsm}" is a data frame; aggregate a matrix`);
    matrix = await loadMatrix(a as MatrixSlot);
    varNames = Array.from({ length: matrix.shape[1] ?? 1 }, (_, i) => String(i));
  } else {
    const src = await expressionSource(t, false, params.layer, op);
    matrix = src.matrix;
    varNames = [...src.varNames];
  }
  const k = g.categories.length;
  const m = matrix.shape[1] ?? 1;
  const rows = matrix.shape[0]!;
  const cell = new Int32Array(rows);
  const counts = new Float64Array(k);
  for (let i = 0; i < rows; i++) {
    let c = g.codes[i]!;
    if (c >= 0 && mask && !columnValue(mask, i)) c = -1;
    cell[i] = c;
    if (c >= 0) counts[c]!++;
  }
  const sum = new Float64Array(k * m);
  const nnz = new Float64Array(k * m);
  const add = (c: number, j: number, v: number) => {
    sum[c * m + j]! += v;
    if (v !== 0) nnz[c * m + j]!++;
  };
  const data = matrix.data as unknown as ArrayLike<number>;
  if (matrix.kind === "dense") {
    for (let i = 0; i < rows; i++) {
      const c = cell[i]!;
      if (c >= 0) for (let j = 0; j < m; j++) add(c, j, Number(data[i * m + j]));
    }
  } else if (matrix.kind === "csr") {
    for (let i = 0; i < rows; i++) {
      const c = cell[i]!;
      if (c < 0) continue;
      for (let p = Number(matrix.indptr[i]); p < Number(matrix.indptr[i + 1]); p++)
        add(c, matrix.indices[p]!, Number(data[p]));
    }
  } else {
    for (let j = 0; j < m; j++) {
      for (let p = Number(matrix.indptr[j]); p < Number(matrix.indptr[j + 1]); p++) {
        const c = cell[matrix.indices[p]!]!;
        if (c >= 0) add(c, j, Number(data[p]));
      }
    }
  }
  let m2: Float64Array | null = null;
  if (funcs.has("var")) {
    // Second pass on deviations from the group mean (stable, like scanpy's Welford kernels); the
    // implicit zeros of a sparse matrix contribute (count - stored) · mean² each.
    m2 = new Float64Array(k * m);
    const stored = new Float64Array(k * m);
    const dev = (c: number, j: number, v: number) => {
      const mu = sum[c * m + j]! / counts[c]!;
      m2![c * m + j]! += (v - mu) * (v - mu);
      stored[c * m + j]!++;
    };
    if (matrix.kind === "dense") {
      for (let i = 0; i < rows; i++) {
        const c = cell[i]!;
        if (c >= 0) for (let j = 0; j < m; j++) dev(c, j, Number(data[i * m + j]));
      }
    } else if (matrix.kind === "csr") {
      for (let i = 0; i < rows; i++) {
        const c = cell[i]!;
        if (c < 0) continue;
        for (let p = Number(matrix.indptr[i]); p < Number(matrix.indptr[i + 1]); p++)
          dev(c, matrix.indices[p]!, Number(data[p]));
      }
    } else {
      for (let j = 0; j < m; j++) {
        for (let p = Number(matrix.indptr[j]); p < Number(matrix.indptr[j + 1]); p++) {
          const c = cell[matrix.indices[p]!]!;
          if (c >= 0) dev(c, j, Number(data[p]));
        }
      }
    }
    for (let c = 0; c < k; c++) {
      for (let j = 0; j < m; j++) {
        const mu = sum[c * m + j]! / counts[c]!;
        m2[c * m + j]! += (counts[c]! - stored[c * m + j]!) * mu * mu;
      }
    }
  }
  const matrixJson = (f: (c: number, j: number) => number) =>
    Array.from({ length: k }, (_, c) => numbersJson(Float64Array.from({ length: m }, (_, j) => f(c, j))));
  const values: Partial<Record<AggFunc, (number | null)[][]>> = {};
  if (funcs.has("sum")) values.sum = matrixJson((c, j) => sum[c * m + j]!);
  if (funcs.has("mean")) values.mean = matrixJson((c, j) => sum[c * m + j]! / counts[c]!);
  if (funcs.has("count_nonzero")) values.count_nonzero = matrixJson((c, j) => nnz[c * m + j]!);
  if (m2) {
    const mm = m2;
    values.var = matrixJson((c, j) => (counts[c]! > dof ? mm[c * m + j]! / (counts[c]! - dof) : Number.NaN));
  }
  return { groups: [...g.categories], var_names: varNames, n_obs_aggregated: Array.from(counts), values };
}

/**
 * scanpy's `sc.get` accessors (`get/get.py`) as extracts (read-only, answered off the queue): `obs_df`,
 * `var_df` and `rank_genes_groups_df`. Each returns plain JSON (numbers, strings, booleans and `null` for
 * missing or non-finite values), never a table.
 */
import { type Column, columnValue, type DataFrame, nRows } from "../../../sdk/data/dataframe.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import type { AxisArray } from "../../../sdk/data/table.js";
import { isUnsDict, type UnsDict, type UnsValue, unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { activeTable } from "../helpers.js";
import { expressionSource, matrixColumns, matrixRows, names } from "./expression.js";

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

/** Numbers as JSON: non-finite values (NaN, ±Inf) become `null`. */
export function numbersJson(a: ArrayLike<number>): (number | null)[] {
  return Array.from(a, (v) => (Number.isFinite(v) ? v : null));
}

/** A frame as JSON: the row labels and one array of values per column, in the order asked. */
export interface FrameJson {
  readonly index: string[];
  readonly columns: Record<string, JsonCell[]>;
}

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

/**
 * What the plots read from a table, and the field path of each read (a plot's `references`): obs
 * columns and genes as values per cell, categorical groupings, the categories' colours (scanpy's
 * `uns["<key>_colors"]`, else the default palette), uns entries.
 */
import type { StringArray } from "../../sdk/data/arrays.js";
import { type Column, columnValue } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";
import { isUnsDict, type UnsDict, type UnsValue } from "../../sdk/data/uns.js";
import { parseHexColor } from "../../sdk/display/encoding.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { expressionSource, groupingOf, matrixColumns, names } from "../scanpy/get/expression.js";
import { activeTable } from "../scanpy/helpers.js";
import { defaultColor } from "../tessera/palette.js";

/** The active table of a plot, or a clear error. */
export function plotTable(sd: SpatialData, ctx: Pick<OpContext, "table">, op: string): Table {
  return activeTable(sd, ctx, op);
}

/** A field path of the active table. */
export function ref(ctx: Pick<OpContext, "table">, slot: string, key?: string): string {
  return key === undefined ? `tables:${ctx.table}:${slot}` : `tables:${ctx.table}:${slot}:${key}`;
}

/** Where gene values are read from (scanpy's `use_raw`, `layer`, `gene_symbols`). */
export interface ExpressionOptions {
  use_raw?: boolean | null;
  layer?: string | null;
  gene_symbols?: string | null;
}

/** Values per cell of some genes, with the references they add. */
export interface GeneValues {
  readonly columns: Float64Array[];
  readonly references: string[];
}

/**
 * Most genes a plot reads from the column mirror; more are taken from X in one pass. Each mirror read
 * decodes that gene's chunks on the session's thread, and past a few dozen genes one scan of the CSR
 * is cheaper (bench/figures-plots at 200k × 5,000: 8 genes 0.89 → 0.46 CPU s through the mirror,
 * rank_genes_groups_dotplot's 36 genes 1.50 → 1.92).
 */
export const MIRROR_MAX_GENES = 16;

/** What reading genes needs of the job's context (the mirror reader and the log are optional). */
export type GeneReadContext = Pick<OpContext, "table"> & Partial<Pick<OpContext, "mirrorGene" | "log">>;

/**
 * Per-cell values of `genes` (names, or `gene_symbols` values) from X, a layer or raw. Up to
 * `MIRROR_MAX_GENES` genes of X come from the session's column mirror when it has one
 * (`ctx.mirrorGene`: one column per gene, X never loaded or scanned here); otherwise, and for a layer
 * or raw, the columns are taken out of the matrix.
 */
export async function geneValues(
  t: Table,
  ctx: GeneReadContext,
  genes: readonly string[],
  opts: ExpressionOptions,
  op: string,
): Promise<GeneValues> {
  const useRaw = opts.use_raw ?? undefined;
  // X (not a layer, not raw: scanpy's use_raw defaults to "raw when there is one")
  const fromX = !opts.layer && !(useRaw ?? t.raw !== null) && t.X !== null;
  const src = fromX
    ? { matrix: null, varNames: names(t.var.index), varFrame: t.var, useRaw: false }
    : await expressionSource(t, useRaw === null ? undefined : useRaw, opts.layer, op);
  let lookup: readonly string[] = src.varNames;
  if (opts.gene_symbols) {
    const col = src.varFrame.columns[opts.gene_symbols];
    if (!col) throw new Error(`${op}: no var column "${opts.gene_symbols}" (gene_symbols)`);
    lookup = lookup.map((_, i) => String(columnValue(col, i) ?? ""));
  }
  const at = new Map<string, number>();
  lookup.forEach((g, i) => {
    if (!at.has(g)) at.set(g, i);
  });
  const idx = genes.map((g) => {
    const i = at.get(g);
    if (i === undefined)
      throw new Error(`${op}: gene "${g}" is not in ${src.useRaw ? "raw.var_names" : "var_names"}`);
    return i;
  });
  const mirrored =
    fromX && ctx.mirrorGene && idx.length <= MIRROR_MAX_GENES
      ? await Promise.all(idx.map((i) => ctx.mirrorGene!(ctx.table, src.varNames[i]!)))
      : null;
  let columns: Float64Array[];
  if (mirrored?.every((v) => v !== null)) {
    columns = mirrored.map((v) => Float64Array.from(v!));
    ctx.log?.(`${op}: ${genes.length} gene(s) read from the session's column mirror`);
  } else columns = matrixColumns(src.matrix ?? (await expressionSource(t, false, null, op)).matrix, idx);
  const slot = opts.layer ? ref(ctx, "layers", opts.layer) : src.useRaw ? ref(ctx, "raw") : null;
  const references = slot ? [slot] : genes.map((g) => ref(ctx, "X", src.varNames[at.get(g)!]!));
  if (opts.gene_symbols) references.push(ref(ctx, "var", opts.gene_symbols));
  return { columns, references };
}

/** A key of `color`/`keys`: an obs column (numeric or categorical) or a gene. */
export type KeyValues =
  | { kind: "numeric"; key: string; values: Float64Array; references: string[] }
  | { kind: "categorical"; key: string; codes: Int32Array; categories: string[]; references: string[] };

/** Whether an obs column is drawn as categories (categorical, string, boolean). */
function isCategoricalColumn(col: Column): boolean {
  return (
    col.kind === "categorical" || col.kind === "string" || (col.kind === "dense" && col.dtype === "bool")
  );
}

/** The values of `key`: an obs column when there is one (scanpy looks in obs first), else a gene. */
export async function keyValues(
  t: Table,
  ctx: GeneReadContext,
  key: string,
  opts: ExpressionOptions,
  op: string,
): Promise<KeyValues> {
  const col = t.obs.columns[key];
  if (col) {
    const references = [ref(ctx, "obs", key)];
    if (isCategoricalColumn(col)) {
      const g = groupingOf(t, key, op);
      return { kind: "categorical", key, codes: g.codes, categories: [...g.categories], references };
    }
    const n = t.obs.index.values.length;
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const v = columnValue(col, i);
      values[i] = typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : Number.NaN;
    }
    return { kind: "numeric", key, values, references };
  }
  try {
    const g = await geneValues(t, ctx, [key], opts, op);
    return { kind: "numeric", key, values: g.columns[0]!, references: g.references };
  } catch (err) {
    if (/is not in/.test((err as Error).message))
      throw new Error(`${op}: "${key}" is neither an obs column nor a gene (var_names)`);
    throw err;
  }
}

/** A categorical grouping with its reference. */
export interface GroupingRef {
  readonly codes: Int32Array;
  readonly categories: string[];
  readonly references: string[];
}

/** The categorical obs column `key` (categorical, string or boolean), refusing a numeric one. */
export function groupingRef(t: Table, ctx: Pick<OpContext, "table">, key: string, op: string): GroupingRef {
  const g = groupingOf(t, key, op);
  return { codes: g.codes, categories: [...g.categories], references: [ref(ctx, "obs", key)] };
}

/**
 * The colours of the categories of `key`: `uns["<key>_colors"]` when it holds one valid colour per
 * category (what scanpy writes and reads), else scanpy's default palette in category order.
 */
export function categoryColors(
  t: Table,
  ctx: Pick<OpContext, "table">,
  key: string,
  categories: readonly string[],
): { colors: string[]; references: string[] } {
  const stored = t.uns.entries[`${key}_colors`];
  const list = colorList(stored);
  if (list && list.length >= categories.length) {
    return { colors: list.slice(0, categories.length), references: [ref(ctx, "uns", `${key}_colors`)] };
  }
  return { colors: categories.map((_, i) => defaultColor(i)), references: [] };
}

function colorList(v: UnsValue | undefined): string[] | null {
  if (!v || typeof v !== "object" || !("kind" in v) || v.kind !== "string") return null;
  const values = (v as StringArray).values;
  const out: string[] = [];
  for (const c of values) {
    if (!c || !parseHexColor(c.slice(0, 7))) return null;
    out.push(c.slice(0, 7).toLowerCase());
  }
  return out;
}

/** `uns[key]` as a dict, or an error naming the compute that writes it. */
export function unsDictAt(t: Table, key: string, op: string, writer: string): UnsDict {
  const v = t.uns.entries[key];
  if (!isUnsDict(v)) throw new Error(`${op}: no uns["${key}"]; run ${writer} first`);
  return v;
}

/** A list param as scanpy takes it: a single string or a list (null/undefined → empty). */
export function asList(v: string | readonly string[] | null | undefined): string[] {
  if (v === null || v === undefined) return [];
  return typeof v === "string" ? [v] : [...v];
}

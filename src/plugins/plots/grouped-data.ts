/**
 * The data behind scanpy's grouped expression plots (dotplot, matrixplot, heatmap, violins): genes
 * (flat, or labelled groups of genes), cells grouped by a categorical obs column in `categories_order`,
 * per-group means and fractions of expressing cells, and `standard_scale`.
 */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";
import type { ColumnGroup } from "../../sdk/figures/plots/grid-chart.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { type ExpressionOptions, geneValues, groupingRef } from "./access.js";
import { type GroupDendrogram, groupDendrogram } from "./dendrogram-data.js";

/** scanpy's `var_names`: one gene, a list, or labelled lists (`{"T cells": ["CD3E", …]}`). */
export type VarNames = string | string[] | Record<string, string[]>;

/** The genes in order and the labelled column groups of a `var_names` mapping. */
export function flattenVarNames(v: VarNames, op: string): { genes: string[]; colGroups: ColumnGroup[] } {
  if (typeof v === "string") return { genes: [v], colGroups: [] };
  if (Array.isArray(v)) {
    if (v.length === 0) throw new Error(`${op}: var_names is empty`);
    return { genes: [...v], colGroups: [] };
  }
  const genes: string[] = [];
  const colGroups: ColumnGroup[] = [];
  for (const [label, list] of Object.entries(v)) {
    if (!list.length) continue;
    colGroups.push({ start: genes.length, end: genes.length + list.length - 1, label });
    genes.push(...list);
  }
  if (genes.length === 0) throw new Error(`${op}: var_names is empty`);
  return { genes, colGroups };
}

/** Cells grouped for a plot: a group index per cell (−1 = not drawn), group labels in drawing order. */
export interface CellGroups {
  readonly of: Int32Array;
  readonly labels: string[];
  /** The category code of each drawn group (for its colour). */
  readonly codes: number[];
  readonly sizes: number[];
}

/** The groups of `groupby` in `categories_order` (every category, in the column's order, by default). */
export function cellGroups(
  t: Table,
  ctx: Pick<OpContext, "table">,
  groupby: string,
  order: readonly string[] | null | undefined,
  op: string,
): CellGroups & { categories: string[]; references: string[] } {
  const g = groupingRef(t, ctx, groupby, op);
  const labels = order?.length ? [...order] : g.categories;
  const missing = labels.filter((l) => !g.categories.includes(l));
  if (missing.length)
    throw new Error(`${op}: categories_order names ${missing.join(", ")}, not categories of "${groupby}"`);
  const slot = new Int32Array(g.categories.length).fill(-1);
  labels.forEach((l, i) => {
    slot[g.categories.indexOf(l)] = i;
  });
  const of = new Int32Array(g.codes.length);
  const sizes = new Array<number>(labels.length).fill(0);
  for (let i = 0; i < of.length; i++) {
    const c = g.codes[i]!;
    of[i] = c < 0 ? -1 : slot[c]!;
    if (of[i]! >= 0) sizes[of[i]!]!++;
  }
  return {
    of,
    labels,
    codes: labels.map((l) => g.categories.indexOf(l)),
    sizes,
    categories: g.categories,
    references: g.references,
  };
}

/** Gene columns plus their grouping, what every grouped plot starts from. */
export interface GroupedExpression extends CellGroups {
  readonly genes: string[];
  readonly colGroups: ColumnGroup[];
  /** Values per gene (n cells each), log1p'd when `log`. */
  readonly columns: Float64Array[];
  readonly categories: string[];
  readonly references: string[];
  /** The dendrogram of the groups, leaves in the order of `labels` (when the plot asked for one). */
  readonly dendrogram: GroupDendrogram | null;
}

/** Params every grouped expression plot shares. */
export interface GroupedParams extends ExpressionOptions {
  /** Order of the groups (default: the categories' order). */
  categories_order?: string[] | null;
  /** Plot log1p of the values. @default false */
  log?: boolean;
  /**
   * Order the groups by a hierarchical clustering and draw its dendrogram: `true` reads
   * `uns["dendrogram_<groupby>"]` (computed with `sc.tl.dendrogram`'s defaults when absent), a
   * string names another uns key. The dendrogram's order wins over `categories_order`, and with two
   * categories or fewer none is drawn (as scanpy). @default false
   */
  dendrogram?: boolean | string;
}

/** Read the genes and the grouping of a grouped plot. */
export async function groupedExpression(
  t: Table,
  ctx: Pick<OpContext, "table">,
  varNames: VarNames,
  groupby: string,
  p: GroupedParams,
  op: string,
  /** The data and context, needed to compute a dendrogram that uns does not hold. */
  data?: { sd: SpatialData; ctx: OpContext },
): Promise<GroupedExpression> {
  const all = groupingRef(t, ctx, groupby, op);
  const dendrogram = data
    ? await groupDendrogram(data.sd, t, data.ctx, groupby, p.dendrogram, all.categories, op)
    : null;
  // gene groups labelled by the categories follow the dendrogram's order (scanpy reorders them too)
  let names = varNames;
  if (dendrogram && typeof varNames === "object" && !Array.isArray(varNames)) {
    const keys = Object.keys(varNames);
    if (keys.every((k) => dendrogram.ordered.includes(k)))
      names = Object.fromEntries(
        dendrogram.ordered.filter((k) => keys.includes(k)).map((k) => [k, varNames[k]!]),
      );
  }
  const { genes, colGroups } = flattenVarNames(names, op);
  const groups = cellGroups(t, ctx, groupby, dendrogram ? dendrogram.ordered : p.categories_order, op);
  const gv = await geneValues(t, ctx, genes, p, op);
  if (p.log) for (const c of gv.columns) for (let i = 0; i < c.length; i++) c[i] = Math.log1p(c[i]!);
  return {
    ...groups,
    genes,
    colGroups,
    columns: gv.columns,
    references: [...groups.references, ...gv.references, ...(dendrogram?.references ?? [])],
    dendrogram,
  };
}

/** Per group × gene (row-major) mean and fraction of cells above `cutoff`. */
export function groupStats(
  e: Pick<GroupedExpression, "of" | "labels" | "columns">,
  cutoff: number,
  meanOnlyExpressed: boolean,
): { mean: Float64Array; frac: Float64Array } {
  const ng = e.labels.length;
  const nv = e.columns.length;
  const sum = new Float64Array(ng * nv);
  const cnt = new Float64Array(ng * nv);
  const sizes = new Float64Array(ng);
  for (let i = 0; i < e.of.length; i++) if (e.of[i]! >= 0) sizes[e.of[i]!]!++;
  e.columns.forEach((col, j) => {
    for (let i = 0; i < col.length; i++) {
      const g = e.of[i]!;
      if (g < 0) continue;
      const v = col[i]!;
      const expressed = v > cutoff;
      if (expressed) cnt[g * nv + j]!++;
      if (!meanOnlyExpressed || expressed) sum[g * nv + j]! += v;
    }
  });
  const mean = new Float64Array(ng * nv);
  const frac = new Float64Array(ng * nv);
  for (let g = 0; g < ng; g++)
    for (let j = 0; j < nv; j++) {
      const k = g * nv + j;
      const denom = meanOnlyExpressed ? cnt[k]! : sizes[g]!;
      mean[k] = denom > 0 ? sum[k]! / denom : meanOnlyExpressed ? 0 : Number.NaN;
      frac[k] = sizes[g]! > 0 ? cnt[k]! / sizes[g]! : 0;
    }
  return { mean, frac };
}

/** scanpy's `standard_scale`: `var` scales each gene (column) to [0, 1] over the groups, `group` each row. */
export type StandardScale = "var" | "group";

/** `m` (rows × cols, row-major) scaled in place by `mode` (min → 0, max → 1; a constant line → 0). */
export function standardScale(
  m: Float64Array,
  rows: number,
  cols: number,
  mode: StandardScale | null | undefined,
): Float64Array {
  if (!mode) return m;
  const lines = mode === "var" ? cols : rows;
  const len = mode === "var" ? rows : cols;
  const at = (l: number, k: number) => (mode === "var" ? k * cols + l : l * cols + k);
  for (let l = 0; l < lines; l++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let k = 0; k < len; k++) {
      const v = m[at(l, k)]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    for (let k = 0; k < len; k++) {
      const i = at(l, k);
      m[i] = hi > lo ? (m[i]! - lo) / (hi - lo) : 0;
    }
  }
  return m;
}

/** scanpy's dot sizes: fractions clipped to [dot_min, dot_max], rescaled, `^1.5` in area, as a radius fraction. */
export function dotRadii(
  frac: Float64Array,
  dotMin: number | null | undefined,
  dotMax: number | null | undefined,
  smallestDot: number,
): { radii: Float64Array; dotMin: number; dotMax: number } {
  let maxFrac = 0;
  for (const f of frac) maxFrac = Math.max(maxFrac, f);
  const hi = dotMax ?? Math.ceil(maxFrac * 10) / 10;
  const lo = dotMin ?? 0;
  const span = hi - lo;
  const largest = 200;
  const radii = new Float64Array(frac.length);
  for (let i = 0; i < frac.length; i++) {
    const f = span > 0 ? (Math.min(Math.max(frac[i]!, lo), hi) - lo) / span : 1;
    const area = f ** 1.5 * (largest - smallestDot) + smallestDot;
    radii[i] = Math.sqrt(area / largest);
  }
  return { radii, dotMin: lo, dotMax: hi };
}

/**
 * The dot-size key as scanpy's `_plot_size_legend`: fractions from dot_max down towards dot_min in
 * steps of 0.05 (a range up to 0.3), 0.1 (up to 0.6) or 0.2, as percentages.
 */
export function dotSizeKey(
  dotMin: number,
  dotMax: number,
  smallestDot: number,
): { title: string; dots: { label: string; fraction: number }[] } {
  const diff = dotMax - dotMin;
  const step = diff <= 0.3 ? 0.05 : diff <= 0.6 ? 0.1 : 0.2;
  const dots: { label: string; fraction: number }[] = [];
  for (let k = 0; dotMax - k * step > dotMin + 1e-9; k++) {
    const f = dotMax - k * step;
    const rel = dotMax > dotMin ? (f - dotMin) / (dotMax - dotMin) : 1;
    dots.unshift({
      label: `${Math.round(f * 100)}`,
      fraction: Math.sqrt((rel ** 1.5 * (200 - smallestDot) + smallestDot) / 200),
    });
  }
  return { title: "Fraction of cells in group (%)", dots };
}

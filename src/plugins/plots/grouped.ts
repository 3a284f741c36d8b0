/**
 * scanpy's grouped expression plots: `violin`, `dotplot`, `matrixplot`, `heatmap` and
 * `stacked_violin`, with scanpy's parameter names and defaults (scanpy 1.12).
 */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { cellHeatmap } from "../../sdk/figures/plots/cell-heatmap.js";
import { isColormap } from "../../sdk/figures/plots/colormaps.js";
import { gridChart } from "../../sdk/figures/plots/grid-chart.js";
import { stackedViolinChart, type ViolinScale, violinChart } from "../../sdk/figures/plots/violin-chart.js";
import type { OpContext, PlotResult } from "../../sdk/jobs/operation.js";
import { asList, categoryColors, type ExpressionOptions, keyValues, plotTable } from "./access.js";
import { plotResult } from "./finish.js";
import {
  cellGroups,
  dotRadii,
  dotSizeKey,
  type GroupedExpression,
  type GroupedParams,
  groupedExpression,
  groupStats,
  type StandardScale,
  standardScale,
  type VarNames,
} from "./grouped-data.js";

/** Params of the grid plots (dotplot, matrixplot). */
export interface GridParams extends GroupedParams {
  /**
   * Genes to show: a list, or labelled lists drawn under brackets (`{"T": ["CD3E"], "B": ["MS4A1"]}`).
   * @widget var_names
   */
  var_names: VarNames;
  /**
   * Categorical obs column that groups the cells.
   * @widget obs_key
   */
  groupby: string;
  /** Scale each gene (`var`) or each group (`group`) to [0, 1]. */
  standard_scale?: StandardScale | null;
  /** Genes as rows and groups as columns. @default false */
  swap_axes?: boolean;
  /** Figure title. */
  title?: string | null;
  /** Lower end of the colour scale. */
  vmin?: number | null;
  /** Upper end of the colour scale. */
  vmax?: number | null;
  /** Centre of a diverging colour scale. */
  vcenter?: number | null;
}

/** Params of `dotplot`. */
export interface DotplotParams extends GridParams {
  /**
   * A cell expresses a gene when its value is above this.
   * @default 0
   */
  expression_cutoff?: number;
  /** Average over expressing cells only. @default false */
  mean_only_expressed?: boolean;
  /**
   * Colour map of the mean expression.
   * @default "Reds"
   */
  cmap?: string;
  /** Fraction drawn as the largest dot (default: the largest fraction rounded up to 0.1). @minimum 0 @maximum 1 */
  dot_max?: number | null;
  /** Fraction drawn as the smallest dot (default 0). @minimum 0 @maximum 1 */
  dot_min?: number | null;
  /** Area of the smallest dot in pt². @minimum 0 @default 0 */
  smallest_dot?: number;
  /**
   * Title of the colour bar.
   * @default "Mean expression in group"
   */
  colorbar_title?: string;
}

/** Params of `matrixplot`. */
export interface MatrixplotParams extends GridParams {
  /**
   * Colour map of the mean expression.
   * @default "viridis"
   */
  cmap?: string;
  /**
   * Title of the colour bar.
   * @default "Mean expression in group"
   */
  colorbar_title?: string;
}

function checkCmap(cmap: string, op: string): string {
  if (!isColormap(cmap)) throw new Error(`${op}: unknown cmap "${cmap}"`);
  return cmap;
}

function transpose(m: Float64Array, rows: number, cols: number): Float64Array {
  const out = new Float64Array(m.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = m[r * cols + c]!;
  return out;
}

/** Draw a groups × genes grid (dot or square cells) for `e` with colour values `color` and optional dots. */
export async function drawGrid(
  e: GroupedExpression,
  color: Float64Array,
  radii: Float64Array | null,
  opts: {
    cmap: string;
    swap: boolean;
    title?: string | null;
    colorTitle: string;
    sizeKey?: { title: string; dots: { label: string; fraction: number }[] };
    vmin?: number | null;
    vmax?: number | null;
    vcenter?: number | null;
    rowColors?: string[];
    gridLines?: boolean;
  },
  references: string[],
  op: string,
): Promise<PlotResult> {
  const ng = e.labels.length;
  const nv = e.genes.length;
  const swap = opts.swap;
  const svg = gridChart({
    rowLabels: swap ? e.genes : e.labels,
    colLabels: swap ? e.labels : e.genes,
    values: swap ? transpose(color, ng, nv) : color,
    radii: radii ? (swap ? transpose(radii, ng, nv) : radii) : undefined,
    cmap: opts.cmap,
    vmin: opts.vmin,
    vmax: opts.vmax,
    vcenter: opts.vcenter,
    colorTitle: opts.colorTitle,
    sizeKey: opts.sizeKey,
    colGroups: swap ? undefined : e.colGroups,
    title: opts.title ?? undefined,
    rowColors: swap ? undefined : opts.rowColors,
    gridLines: opts.gridLines,
    ...(e.dendrogram ? { dendrogram: { links: e.dendrogram, side: swap ? "top" : "right" } } : {}),
  });
  return plotResult(svg, references, op);
}

/**
 * Dot plot of genes per group: dot colour is the mean expression, dot size the fraction of cells
 * expressing the gene (scanpy's `sc.pl.dotplot`).
 * @peakMemory n_obs * 8 * 64
 */
export async function dotplot(sd: SpatialData, params: DotplotParams, ctx: OpContext): Promise<PlotResult> {
  const op = "sc.pl.dotplot";
  const cmap = checkCmap(params.cmap ?? "Reds", op);
  const t = plotTable(sd, ctx, op);
  const e = await groupedExpression(t, ctx, params.var_names, params.groupby, params, op, { sd, ctx });
  const st = groupStats(e, params.expression_cutoff ?? 0, params.mean_only_expressed ?? false);
  standardScale(st.mean, e.labels.length, e.genes.length, params.standard_scale);
  const smallest = params.smallest_dot ?? 0;
  const d = dotRadii(st.frac, params.dot_min, params.dot_max, smallest);
  return drawGrid(
    e,
    st.mean,
    d.radii,
    {
      cmap,
      swap: params.swap_axes ?? false,
      title: params.title,
      colorTitle: params.colorbar_title ?? "Mean expression in group",
      sizeKey: dotSizeKey(d.dotMin, d.dotMax, smallest),
      vmin: params.vmin,
      vmax: params.vmax,
      vcenter: params.vcenter,
    },
    e.references,
    op,
  );
}

/**
 * Heatmap of the mean expression of genes per group (scanpy's `sc.pl.matrixplot`).
 * @peakMemory n_obs * 8 * 64
 */
export async function matrixplot(
  sd: SpatialData,
  params: MatrixplotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.matrixplot";
  const cmap = checkCmap(params.cmap ?? "viridis", op);
  const t = plotTable(sd, ctx, op);
  const e = await groupedExpression(t, ctx, params.var_names, params.groupby, params, op, { sd, ctx });
  const st = groupStats(e, 0, false);
  standardScale(st.mean, e.labels.length, e.genes.length, params.standard_scale);
  return drawGrid(
    e,
    st.mean,
    null,
    {
      cmap,
      swap: params.swap_axes ?? false,
      title: params.title,
      colorTitle: params.colorbar_title ?? "Mean expression in group",
      vmin: params.vmin,
      vmax: params.vmax,
      vcenter: params.vcenter,
      gridLines: true,
    },
    e.references,
    op,
  );
}

/** Params of `heatmap`. */
export interface HeatmapParams extends GroupedParams {
  /**
   * Genes to show: a list, or labelled lists.
   * @widget var_names
   */
  var_names: VarNames;
  /**
   * Categorical obs column that groups the cells.
   * @widget obs_key
   */
  groupby: string;
  /** Scale each gene (`var`) or each cell (`obs`) to [0, 1]. */
  standard_scale?: "var" | "obs" | null;
  /**
   * Colour map of the expression.
   * @default "viridis"
   */
  cmap?: string;
  /** Lower end of the colour scale. */
  vmin?: number | null;
  /** Upper end of the colour scale. */
  vmax?: number | null;
  /** Centre of a diverging colour scale. */
  vcenter?: number | null;
  /** Figure title. */
  title?: string | null;
}

/** Draw scanpy's cells × genes heatmap of `e`. */
export async function drawCellHeatmap(
  e: GroupedExpression,
  colors: string[],
  p: Pick<HeatmapParams, "standard_scale" | "cmap" | "vmin" | "vmax" | "vcenter" | "title">,
  references: string[],
  op: string,
): Promise<PlotResult> {
  const cmap = checkCmap(p.cmap ?? "viridis", op);
  if (p.standard_scale === "var") {
    for (const c of e.columns) {
      let lo = Infinity;
      let hi = -Infinity;
      for (let i = 0; i < c.length; i++)
        if (e.of[i]! >= 0) [lo, hi] = [Math.min(lo, c[i]!), Math.max(hi, c[i]!)];
      for (let i = 0; i < c.length; i++) c[i] = hi > lo ? (c[i]! - lo) / (hi - lo) : 0;
    }
  } else if (p.standard_scale === "obs") {
    const n = e.of.length;
    for (let i = 0; i < n; i++) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const c of e.columns) [lo, hi] = [Math.min(lo, c[i]!), Math.max(hi, c[i]!)];
      for (const c of e.columns) c[i] = hi > lo ? (c[i]! - lo) / (hi - lo) : 0;
    }
  }
  // Cells sorted by group (stable: within a group, in obs order), as scanpy sorts obs_tidy by category.
  const start = new Int32Array(e.labels.length + 1);
  for (let i = 0; i < e.of.length; i++) if (e.of[i]! >= 0) start[e.of[i]! + 1]!++;
  for (let g = 0; g < e.labels.length; g++) start[g + 1]! += start[g];
  const order = new Uint32Array(start[e.labels.length]!);
  const fill = start.slice();
  for (let i = 0; i < e.of.length; i++) if (e.of[i]! >= 0) order[fill[e.of[i]!]!++] = i;
  const svg = await cellHeatmap({
    genes: e.genes,
    columns: e.columns,
    order,
    groups: e.labels
      .map((label, g) => ({ label, count: e.sizes[g]!, color: colors[e.codes[g]!]! }))
      .filter((g) => g.count > 0),
    cmap,
    vmin: p.vmin,
    vmax: p.vmax,
    vcenter: p.vcenter,
    title: p.title ?? undefined,
    // leaves at the bands of the groups drawn (a group without cells has no band)
    dendrogram: e.dendrogram && e.sizes.every((c) => c > 0) ? e.dendrogram : undefined,
  });
  return plotResult(svg, references, op);
}

/**
 * Heatmap of the expression of genes in every cell, cells grouped by category (scanpy's `sc.pl.heatmap`).
 * @peakMemory n_obs * 8 * 64
 */
export async function heatmap(sd: SpatialData, params: HeatmapParams, ctx: OpContext): Promise<PlotResult> {
  const op = "sc.pl.heatmap";
  const t = plotTable(sd, ctx, op);
  const e = await groupedExpression(t, ctx, params.var_names, params.groupby, params, op, { sd, ctx });
  const cc = categoryColors(t, ctx, params.groupby, e.categories);
  return drawCellHeatmap(e, cc.colors, params, [...e.references, ...cc.references], op);
}

/** Params of `stacked_violin`. */
export interface StackedViolinParams extends GroupedParams {
  /**
   * Genes to show: a list, or labelled lists.
   * @widget var_names
   */
  var_names: VarNames;
  /**
   * Categorical obs column that groups the cells.
   * @widget obs_key
   */
  groupby: string;
  /** Scale each gene (`var`) or each group (`group`) to [0, 1] before drawing. */
  standard_scale?: StandardScale | null;
  /**
   * Colour map of the violins' median.
   * @default "Blues"
   */
  cmap?: string;
  /**
   * seaborn's density_norm: `width` (equal widths), `area` or `count`.
   * @default "width"
   */
  scale?: ViolinScale;
  /** Genes as rows and groups as columns. @default false */
  swap_axes?: boolean;
  /**
   * Title of the colour bar.
   * @default "Median expression in group"
   */
  colorbar_title?: string;
  /** Figure title. */
  title?: string | null;
  /** Lower end of the colour scale. */
  vmin?: number | null;
  /** Upper end of the colour scale. */
  vmax?: number | null;
}

/** Draw a stacked violin of `e`. */
export async function drawStackedViolin(
  e: GroupedExpression,
  p: Omit<StackedViolinParams, "var_names" | "groupby">,
  references: string[],
  op: string,
): Promise<PlotResult> {
  const cmap = checkCmap(p.cmap ?? "Blues", op);
  if (p.standard_scale) {
    // Scale the values themselves per gene (over all cells of the drawn groups) or per group.
    if (p.standard_scale === "var") {
      for (const c of e.columns) {
        let lo = Infinity;
        let hi = -Infinity;
        for (let i = 0; i < c.length; i++)
          if (e.of[i]! >= 0) [lo, hi] = [Math.min(lo, c[i]!), Math.max(hi, c[i]!)];
        for (let i = 0; i < c.length; i++) c[i] = hi > lo ? (c[i]! - lo) / (hi - lo) : 0;
      }
    } else {
      for (let g = 0; g < e.labels.length; g++) {
        let lo = Infinity;
        let hi = -Infinity;
        for (const c of e.columns)
          for (let i = 0; i < c.length; i++)
            if (e.of[i] === g) [lo, hi] = [Math.min(lo, c[i]!), Math.max(hi, c[i]!)];
        for (const c of e.columns)
          for (let i = 0; i < c.length; i++) if (e.of[i] === g) c[i] = hi > lo ? (c[i]! - lo) / (hi - lo) : 0;
      }
    }
  }
  // Values of each (group, gene) cell, gathered once.
  const members: number[][] = e.labels.map(() => []);
  for (let i = 0; i < e.of.length; i++) if (e.of[i]! >= 0) members[e.of[i]!]!.push(i);
  const cell = (g: number, j: number) => Float64Array.from(members[g]!, (i) => e.columns[j]![i]!);
  const swap = p.swap_axes ?? false;
  const svg = stackedViolinChart({
    rowLabels: swap ? e.genes : e.labels,
    colLabels: swap ? e.labels : e.genes,
    values: swap ? (r, c) => cell(c, r) : (r, c) => cell(r, c),
    cmap,
    scale: p.scale ?? "width",
    colorTitle: p.colorbar_title ?? "Median expression in group",
    title: p.title ?? undefined,
    vmin: p.vmin,
    vmax: p.vmax,
    ...(e.dendrogram ? { dendrogram: { links: e.dendrogram, side: swap ? "top" : "right" } } : {}),
  });
  return plotResult(svg, references, op);
}

/**
 * Violins of genes per group stacked in a grid, filled by the median (scanpy's `sc.pl.stacked_violin`).
 * @peakMemory n_obs * 8 * 64
 */
export async function stacked_violin(
  sd: SpatialData,
  params: StackedViolinParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.stacked_violin";
  const t = plotTable(sd, ctx, op);
  const e = await groupedExpression(t, ctx, params.var_names, params.groupby, params, op, { sd, ctx });
  return drawStackedViolin(e, params, e.references, op);
}

/** Params of `violin`. */
export interface ViolinParams extends ExpressionOptions {
  /**
   * obs columns or genes to draw, one panel each.
   * @widget obs_key
   */
  keys: string | string[];
  /**
   * Categorical obs column: a violin per category (default: one violin per key).
   * @widget obs_key
   */
  groupby?: string | null;
  /** Plot log1p of the values. @default false */
  log?: boolean;
  /** Draw the cells as a jittered strip over the violins. @default true */
  stripplot?: boolean;
  /** Jitter the strip (a fraction of the violin's half-width, `true` = 0.4). @default true */
  jitter?: boolean | number;
  /** Strip dot size (matplotlib points). @minimum 0 @default 1 */
  size?: number;
  /**
   * seaborn's density_norm: `width` (equal widths), `area` or `count`.
   * @default "width"
   */
  density_norm?: ViolinScale;
  /** Order of the groups (default: the categories' order). */
  order?: string[] | null;
  /** y axis label (default: the key). */
  ylabel?: string | string[] | null;
}

/**
 * Violin plots of obs columns or genes, per group (scanpy's `sc.pl.violin`).
 * @peakMemory n_obs * 8 * 16
 */
export async function violin(sd: SpatialData, params: ViolinParams, ctx: OpContext): Promise<PlotResult> {
  const op = "sc.pl.violin";
  const t = plotTable(sd, ctx, op);
  const keys = asList(params.keys);
  if (keys.length === 0) throw new Error(`${op}: keys is empty`);
  const ylabels = asList(params.ylabel);
  const references: string[] = [];
  const values: Float64Array[] = [];
  for (const k of keys) {
    const kv = await keyValues(t, ctx, k, params, op);
    if (kv.kind !== "numeric") throw new Error(`${op}: "${k}" is categorical; violins need numbers`);
    references.push(...kv.references);
    values.push(kv.values);
  }
  const jitter =
    params.jitter === false ? 0 : params.jitter === true || params.jitter === undefined ? 0.1 : params.jitter;
  const common = {
    scale: params.density_norm ?? "width",
    stripplot: params.stripplot ?? true,
    jitter,
    dotRadius: Math.max(0.3, Math.sqrt(params.size ?? 1) / 2),
    log: params.log ?? false,
  };
  let svg: string;
  if (params.groupby) {
    const g = cellGroups(t, ctx, params.groupby, params.order, op);
    const cc = categoryColors(t, ctx, params.groupby, g.categories);
    references.push(...g.references, ...cc.references);
    const members: number[][] = g.labels.map(() => []);
    for (let i = 0; i < g.of.length; i++) if (g.of[i]! >= 0) members[g.of[i]!]!.push(i);
    svg = await violinChart({
      ...common,
      panels: keys.map((k, i) => ({
        title: undefined,
        yLabel: ylabels[i] ?? k,
        violins: g.labels.map((label, gi) => ({
          label,
          values: Float64Array.from(members[gi]!, (c) => values[i]![c]!),
          color: cc.colors[g.codes[gi]!]!,
        })),
      })),
    });
  } else {
    svg = await violinChart({
      ...common,
      panels: [
        {
          yLabel: ylabels[0],
          violins: keys.map((k, i) => ({ label: k, values: values[i]!, color: "#1f77b4" })),
        },
      ],
    });
  }
  return plotResult(svg, references, op);
}

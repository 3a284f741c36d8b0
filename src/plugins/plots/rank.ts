/**
 * scanpy's `rank_genes_groups_dotplot`, `_matrixplot`, `_heatmap` and `_stacked_violin`: the top
 * `n_genes` of each group of `uns[key]` (what `sc.tl.rank_genes_groups` wrote), drawn under a bracket
 * per group; dot and matrix plots can colour by a ranking statistic (`values_to_plot`) instead of
 * the mean expression.
 */
import { columnValue, type DataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";
import type { OpContext, PlotResult } from "../../sdk/jobs/operation.js";
import { asList, categoryColors, plotTable, ref, unsDictAt } from "./access.js";
import {
  type DotplotParams,
  drawCellHeatmap,
  drawGrid,
  drawStackedViolin,
  type HeatmapParams,
  type MatrixplotParams,
  type StackedViolinParams,
} from "./grouped.js";
import {
  dotRadii,
  dotSizeKey,
  type GroupedExpression,
  groupedExpression,
  groupStats,
  standardScale,
} from "./grouped-data.js";
import { finishOptional } from "./rank-values.js";

/** Params every rank_genes_groups plot shares. */
export interface RankPlotParams {
  /** Groups whose top genes are shown (default: all). */
  groups?: string | string[] | null;
  /**
   * Top genes shown per group.
   * @asType integer
   * @minimum 1
   * @maximum 500
   * @default 10
   */
  n_genes?: number;
  /**
   * Grouping of the cells (default: the groupby `rank_genes_groups` used).
   * @widget obs_key
   */
  groupby?: string | null;
  /** Leave out genes whose log fold change is below this. */
  min_logfoldchange?: number | null;
  /**
   * uns key of the ranking.
   * @default "rank_genes_groups"
   */
  key?: string;
  /** var column holding the names to show instead of var_names. */
  gene_symbols?: string | null;
  /** Read the expression from `raw` (default: what the ranking used). */
  use_raw?: boolean | null;
  /** Read the expression from this layer. */
  layer?: string | null;
  /**
   * Order the groups by `sc.tl.dendrogram` and draw the tree (scanpy adds it to these plots by
   * default); a string names the uns key. @default true
   */
  dendrogram?: boolean | string;
}

/** Statistics of a ranking a dot or matrix plot can colour by. */
export type RankValues =
  | "scores"
  | "logfoldchanges"
  | "pvals"
  | "pvals_adj"
  | "log10_pvals"
  | "log10_pvals_adj";

/** Params of `rank_genes_groups_dotplot`. */
export interface RankDotplotParams
  extends RankPlotParams,
    Omit<DotplotParams, "var_names" | "groupby" | keyof RankPlotParams> {
  /** Colour by this statistic of the ranking instead of the mean expression. */
  values_to_plot?: RankValues | null;
}

/** Params of `rank_genes_groups_matrixplot`. */
export interface RankMatrixplotParams
  extends RankPlotParams,
    Omit<MatrixplotParams, "var_names" | "groupby" | keyof RankPlotParams> {
  /** Colour by this statistic of the ranking instead of the mean expression. */
  values_to_plot?: RankValues | null;
}

/** Params of `rank_genes_groups_heatmap`. */
export interface RankHeatmapParams
  extends RankPlotParams,
    Omit<HeatmapParams, "var_names" | "groupby" | keyof RankPlotParams> {}

/** Params of `rank_genes_groups_stacked_violin`. */
export interface RankStackedViolinParams
  extends RankPlotParams,
    Omit<StackedViolinParams, "var_names" | "groupby" | keyof RankPlotParams> {}

/** The ranking's genes per shown group, and the groupby the plot uses. */
interface RankSelection {
  groupby: string;
  varNames: Record<string, string[]>;
  frames: Record<string, DataFrame>;
  references: string[];
  useRaw: boolean | undefined;
}

function frameOf(v: unknown): DataFrame | null {
  return v && typeof v === "object" && (v as { kind?: string }).kind === "dataframe"
    ? (v as DataFrame)
    : null;
}

/** Read `uns[key]`: its groupby, the top genes per group, its per-statistic frames. */
function rankSelection(
  t: Table,
  ctx: Pick<OpContext, "table">,
  p: RankPlotParams,
  op: string,
): RankSelection {
  const key = p.key ?? "rank_genes_groups";
  const r = unsDictAt(t, key, op, "sc.tl.rank_genes_groups");
  const names = frameOf(r.entries.names);
  if (!names) throw new Error(`${op}: uns["${key}"] has no names; run sc.tl.rank_genes_groups first`);
  const params = r.entries.params;
  const stored =
    params && typeof params === "object" && (params as { kind?: string }).kind === "dict"
      ? (params as { entries: Record<string, unknown> }).entries
      : {};
  const groupby = p.groupby ?? (typeof stored.groupby === "string" ? stored.groupby : null);
  if (!groupby) throw new Error(`${op}: no groupby given and uns["${key}"]["params"] names none`);
  const all = [...names.columnOrder];
  const groups = asList(p.groups);
  const unknown = groups.filter((g) => !all.includes(g));
  if (unknown.length)
    throw new Error(`${op}: groups ${unknown.join(", ")} are not in uns["${key}"] (${all.join(", ")})`);
  const shown = groups.length ? groups : all;
  const n = p.n_genes ?? 10;
  const lfc = frameOf(r.entries.logfoldchanges);
  if (p.min_logfoldchange != null && !lfc)
    throw new Error(
      `${op}: min_logfoldchange needs uns["${key}"]["logfoldchanges"], which this ranking has not`,
    );
  const varNames: Record<string, string[]> = {};
  for (const g of shown) {
    const col = names.columns[g]!;
    const len = names.index.values.length;
    const genes: string[] = [];
    for (let i = 0; i < len && genes.length < n; i++) {
      if (p.min_logfoldchange != null) {
        const v = Number(columnValue(lfc!.columns[g]!, i));
        if (!(v >= p.min_logfoldchange)) continue;
      }
      const gene = columnValue(col, i);
      if (gene !== null && gene !== "") genes.push(String(gene));
    }
    varNames[g] = genes;
  }
  if (Object.values(varNames).every((v) => v.length === 0)) throw new Error(`${op}: no genes left to show`);
  const frames: Record<string, DataFrame> = {};
  for (const [k, v] of Object.entries(r.entries)) {
    const f = frameOf(v);
    if (f) frames[k] = f;
  }
  const useRaw = typeof stored.use_raw === "boolean" ? stored.use_raw : undefined;
  return { groupby, varNames, frames, references: [ref(ctx, "uns", key)], useRaw };
}

async function rankExpression(
  sd: SpatialData,
  ctx: OpContext,
  p: RankPlotParams & { categories_order?: string[] | null; log?: boolean },
  op: string,
): Promise<{ t: Table; sel: RankSelection; e: GroupedExpression }> {
  const t = plotTable(sd, ctx, op);
  const sel = rankSelection(t, ctx, p, op);
  const e = await groupedExpression(
    t,
    ctx,
    sel.varNames,
    sel.groupby,
    { ...p, use_raw: p.use_raw ?? sel.useRaw, dendrogram: p.dendrogram ?? true },
    op,
    { sd, ctx },
  );
  return { t, sel, e };
}

/**
 * Dot plot of the top-ranked genes of each group (scanpy's `sc.pl.rank_genes_groups_dotplot`).
 * @peakMemory n_obs * 8 * 64
 */
export async function rank_genes_groups_dotplot(
  sd: SpatialData,
  params: RankDotplotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.rank_genes_groups_dotplot";
  const { sel, e } = await rankExpression(sd, ctx, params, op);
  const st = groupStats(e, params.expression_cutoff ?? 0, params.mean_only_expressed ?? false);
  const smallest = params.smallest_dot ?? 0;
  const d = dotRadii(st.frac, params.dot_min, params.dot_max, smallest);
  const colour = finishOptional(params.values_to_plot, sel.frames, e, op);
  if (!colour) standardScale(st.mean, e.labels.length, e.genes.length, params.standard_scale);
  return drawGrid(
    e,
    colour?.values ?? st.mean,
    d.radii,
    {
      cmap: colour?.cmap ?? params.cmap ?? "Reds",
      swap: params.swap_axes ?? false,
      title: params.title,
      colorTitle: colour?.title ?? params.colorbar_title ?? "Mean expression in group",
      sizeKey: dotSizeKey(d.dotMin, d.dotMax, smallest),
      vmin: params.vmin,
      vmax: params.vmax,
      vcenter: params.vcenter ?? colour?.vcenter,
    },
    [...e.references, ...sel.references],
    op,
  );
}

/**
 * Matrix plot of the top-ranked genes of each group (scanpy's `sc.pl.rank_genes_groups_matrixplot`).
 * @peakMemory n_obs * 8 * 64
 */
export async function rank_genes_groups_matrixplot(
  sd: SpatialData,
  params: RankMatrixplotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.rank_genes_groups_matrixplot";
  const { sel, e } = await rankExpression(sd, ctx, params, op);
  const st = groupStats(e, 0, false);
  const colour = finishOptional(params.values_to_plot, sel.frames, e, op);
  if (!colour) standardScale(st.mean, e.labels.length, e.genes.length, params.standard_scale);
  return drawGrid(
    e,
    colour?.values ?? st.mean,
    null,
    {
      cmap: colour?.cmap ?? params.cmap ?? "viridis",
      swap: params.swap_axes ?? false,
      title: params.title,
      colorTitle: colour?.title ?? params.colorbar_title ?? "Mean expression in group",
      vmin: params.vmin,
      vmax: params.vmax,
      vcenter: params.vcenter ?? colour?.vcenter,
      gridLines: true,
    },
    [...e.references, ...sel.references],
    op,
  );
}

/**
 * Heatmap of the top-ranked genes of each group in every cell (scanpy's `sc.pl.rank_genes_groups_heatmap`).
 * @peakMemory n_obs * 8 * 64
 */
export async function rank_genes_groups_heatmap(
  sd: SpatialData,
  params: RankHeatmapParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.rank_genes_groups_heatmap";
  const { t, sel, e } = await rankExpression(sd, ctx, params, op);
  const cc = categoryColors(t, ctx, sel.groupby, e.categories);
  return drawCellHeatmap(e, cc.colors, params, [...e.references, ...sel.references, ...cc.references], op);
}

/**
 * Stacked violins of the top-ranked genes of each group (scanpy's `sc.pl.rank_genes_groups_stacked_violin`).
 * @peakMemory n_obs * 8 * 64
 */
export async function rank_genes_groups_stacked_violin(
  sd: SpatialData,
  params: RankStackedViolinParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.rank_genes_groups_stacked_violin";
  const { sel, e } = await rankExpression(sd, ctx, params, op);
  return drawStackedViolin(e, params, [...e.references, ...sel.references], op);
}

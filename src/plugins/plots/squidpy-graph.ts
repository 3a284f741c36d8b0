/**
 * squidpy's `pl.nhood_enrichment`, `pl.interaction_matrix` and `pl.centrality_scores`: the
 * cluster × cluster heatmaps (with the clusters' colours beside the rows) and the centrality scores
 * per cluster, drawn from what `gr.nhood_enrichment`, `gr.interaction_matrix` and
 * `gr.centrality_scores` stored in uns.
 */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { isColormap } from "../../sdk/figures/plots/colormaps.js";
import { gridChart } from "../../sdk/figures/plots/grid-chart.js";
import { lineChart } from "../../sdk/figures/plots/line-chart.js";
import type { OpContext, PlotResult } from "../../sdk/jobs/operation.js";
import { asList, categoryColors, groupingRef, plotTable, ref } from "./access.js";
import { plotResult } from "./finish.js";
import { denseAt, frameAt, frameNumbers, numbers, unsEntry } from "./squidpy-access.js";

/** Params of the cluster × cluster heatmaps. */
export interface ClusterHeatmapParams {
  /**
   * Categorical obs column the result was computed for.
   * @widget obs_categorical
   */
  cluster_key: string;
  /** Write each value in its square. @default false */
  annotate?: boolean;
  /** Figure title (default: the plot's name). */
  title?: string | null;
  /**
   * Colour map.
   * @default "viridis"
   */
  cmap?: string;
  /** Lower end of the colour scale. */
  vmin?: number | null;
  /** Upper end of the colour scale. */
  vmax?: number | null;
}

/** Params of `nhood_enrichment`. */
export interface NhoodEnrichmentPlotParams extends ClusterHeatmapParams {
  /**
   * `zscore` (enrichment) or `count` (number of neighbour pairs).
   * @default "zscore"
   */
  mode?: "zscore" | "count";
}

async function clusterHeatmap(
  sd: SpatialData,
  ctx: OpContext,
  p: ClusterHeatmapParams,
  unsKey: string,
  sub: string | null,
  title: string,
  op: string,
  writer: string,
): Promise<PlotResult> {
  const cmap = p.cmap ?? "viridis";
  if (!isColormap(cmap)) throw new Error(`${op}: unknown cmap "${cmap}"`);
  const t = plotTable(sd, ctx, op);
  const g = groupingRef(t, ctx, p.cluster_key, op);
  const node = unsEntry(t, unsKey);
  const arr = denseAt(
    sub === null
      ? node
      : node && typeof node === "object" && "entries" in node
        ? (node.entries as Record<string, never>)[sub]
        : undefined,
    `uns["${unsKey}"]${sub ? `["${sub}"]` : ""}`,
    op,
    writer,
  );
  const k = g.categories.length;
  if (arr.shape.length !== 2 || arr.shape[0] !== k || arr.shape[1] !== k)
    throw new Error(
      `${op}: uns["${unsKey}"] is ${arr.shape.join(" × ")}, not ${k} × ${k} (the categories of "${p.cluster_key}" changed; run ${writer} again)`,
    );
  const cc = categoryColors(t, ctx, p.cluster_key, g.categories);
  const svg = gridChart({
    rowLabels: g.categories,
    colLabels: g.categories,
    values: numbers(arr),
    cmap,
    vmin: p.vmin,
    vmax: p.vmax,
    rowColors: cc.colors,
    colColors: cc.colors,
    annotate: p.annotate ?? false,
    title: p.title ?? title,
    cell: Math.max(14, Math.min(30, 420 / k)),
  });
  return plotResult(svg, [ref(ctx, "uns", unsKey), ...g.references, ...cc.references], op);
}

/**
 * Heatmap of the neighbourhood enrichment z-scores (or counts) between clusters (squidpy's `pl.nhood_enrichment`).
 * @peakMemory n_obs * 8
 */
export async function nhood_enrichment(
  sd: SpatialData,
  params: NhoodEnrichmentPlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  return clusterHeatmap(
    sd,
    ctx,
    params,
    `${params.cluster_key}_nhood_enrichment`,
    params.mode ?? "zscore",
    "Neighborhood enrichment",
    "pl.nhood_enrichment",
    "gr.nhood_enrichment",
  );
}

/**
 * Heatmap of the number of edges between clusters (squidpy's `pl.interaction_matrix`).
 * @peakMemory n_obs * 8
 */
export async function interaction_matrix(
  sd: SpatialData,
  params: ClusterHeatmapParams,
  ctx: OpContext,
): Promise<PlotResult> {
  return clusterHeatmap(
    sd,
    ctx,
    params,
    `${params.cluster_key}_interactions`,
    null,
    "Interaction matrix",
    "pl.interaction_matrix",
    "gr.interaction_matrix",
  );
}

/** Params of `centrality_scores`. */
export interface CentralityScoresPlotParams {
  /**
   * Categorical obs column the scores were computed for.
   * @widget obs_categorical
   */
  cluster_key: string;
  /** Scores to draw, one panel each (default: every score computed). */
  score?: string | string[] | null;
}

/**
 * The centrality scores of each cluster, a panel per score (squidpy's `pl.centrality_scores`).
 * @peakMemory n_obs * 8
 */
export async function centrality_scores(
  sd: SpatialData,
  params: CentralityScoresPlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "pl.centrality_scores";
  const t = plotTable(sd, ctx, op);
  const key = `${params.cluster_key}_centrality_scores`;
  const df = frameAt(unsEntry(t, key), `uns["${key}"]`, op, "gr.centrality_scores");
  const clusters = df.index.values.map(String);
  const scores = asList(params.score);
  const unknown = scores.filter((s) => !df.columnOrder.includes(s));
  if (unknown.length)
    throw new Error(
      `${op}: scores ${unknown.join(", ")} not in uns["${key}"] (${df.columnOrder.join(", ")})`,
    );
  const shown = scores.length ? scores : [...df.columnOrder];
  const g = groupingRef(t, ctx, params.cluster_key, op);
  const cc = categoryColors(t, ctx, params.cluster_key, g.categories);
  const colorOf = (c: string) => cc.colors[g.categories.indexOf(c)] ?? "#808080";
  const svg = lineChart({
    panels: shown.map((s) => {
      const v = frameNumbers(df, s);
      return {
        title: s,
        xCategories: clusters,
        yLabel: "value",
        series: clusters.map((c, i) => ({
          label: c,
          color: colorOf(c),
          x: [i],
          y: [v[i]!],
          line: false,
          marker: 4,
        })),
      };
    }),
    legend: clusters.map((c) => ({ label: c, color: colorOf(c) })),
    legendTitle: params.cluster_key,
  });
  return plotResult(svg, [ref(ctx, "uns", key), ...g.references, ...cc.references], op);
}

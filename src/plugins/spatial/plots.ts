/**
 * Plot companions of the spatial functions (`custom.*_plot`): each draws the uns result its compute
 * partner wrote, as a heatmap through the shared figure core (`sdk/figures/plots/grid-chart.ts`) or a
 * line chart, and returns the SVG with a PNG and a PDF.
 */
import type { DataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { type UnsValue, unsGet } from "../../sdk/data/uns.js";
import { gridChart } from "../../sdk/figures/plots/grid-chart.js";
import { lineChart } from "../../sdk/figures/plots/line-chart.js";
import type { OpContext, PlotResult } from "../../sdk/jobs/operation.js";
import { plotResult } from "../plots/finish.js";
import { defaultColor } from "../tessera/palette.js";
import { activeTable } from "./inputs.js";

/** The uns frame at `path`, or an error saying which compute writes it. */
function frameAt(uns: Parameters<typeof unsGet>[0], path: string, op: string, writer: string): DataFrame {
  const v: UnsValue | undefined = unsGet(uns, path);
  if (!v || typeof v !== "object" || (v as { kind?: string }).kind !== "dataframe")
    throw new Error(`${op}: no uns["${path}"]; run ${writer} first`);
  return v as DataFrame;
}

/** A frame's numeric columns as a row-major matrix. */
function frameMatrix(df: DataFrame): { rows: string[]; cols: string[]; values: Float64Array } {
  const rows = df.index.values.map((v) => v ?? "");
  const cols = [...df.columnOrder];
  const values = new Float64Array(rows.length * cols.length);
  cols.forEach((c, j) => {
    const col = df.columns[c]!;
    if (col.kind !== "dense") throw new Error(`column "${c}" of the frame is not numeric`);
    const d = col.data as unknown as ArrayLike<number>;
    for (let i = 0; i < rows.length; i++) values[i * cols.length + j] = Number(d[i]);
  });
  return { rows, cols, values };
}

/** uns field path of the active table. */
const unsRef = (ctx: OpContext, key: string) => `tables:${ctx.table}:uns:${key}`;

/** Params of `cellular_neighborhoods_plot`. */
export interface CellularNeighborhoodsPlotParams {
  /**
   * The key `cellular_neighborhoods` wrote (its `key_added`).
   * @default "cellular_neighborhood"
   * @maxLength 256
   */
  key?: string;
  /**
   * Colour map of the heatmap.
   * @default "RdBu_r"
   */
  cmap?: "RdBu_r" | "bwr" | "viridis" | "magma";
  /**
   * Figure title.
   * @maxLength 256
   */
  title?: string | null;
}

/**
 * Heatmap of each cellular neighbourhood's cell-type enrichment (log2 of its mean window composition
 * over the overall type fractions, centred at 0), from uns `<key>/enrichment`.
 */
export async function cellular_neighborhoods_plot(
  sd: SpatialData,
  params: CellularNeighborhoodsPlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "custom.cellular_neighborhoods_plot";
  const t = activeTable(sd, ctx.table);
  const key = params.key ?? "cellular_neighborhood";
  const m = frameMatrix(frameAt(t.uns, `${key}/enrichment`, op, "custom.cellular_neighborhoods"));
  // An absent type in a neighbourhood is −∞: shown at the colour scale's end, not as a hole.
  const finite = Array.from(m.values).filter(Number.isFinite);
  const lim = Math.max(1e-9, ...finite.map(Math.abs));
  const values = m.values.map((v) => (v === Number.NEGATIVE_INFINITY ? -lim : v));
  const svg = gridChart({
    rowLabels: m.rows,
    colLabels: m.cols,
    values,
    cmap: params.cmap ?? "RdBu_r",
    vmin: -lim,
    vmax: lim,
    vcenter: 0,
    colorTitle: "log2 enrichment",
    title: params.title ?? `Cellular neighbourhoods (${key})`,
  });
  return plotResult(svg, [unsRef(ctx, key), `tables:${ctx.table}:obs:${key}`], op);
}

/** Params of `region_feature_kruskal_plot`. */
export interface RegionFeatureKruskalPlotParams {
  /**
   * The key `region_feature_kruskal` wrote.
   * @default "region_feature_kruskal"
   * @maxLength 256
   */
  key?: string;
  /**
   * Cell type whose genes are shown; default the first in the results.
   * @maxLength 256
   */
  cell_type?: string | null;
  /**
   * Genes shown (the most significant first).
   * @default 15
   * @asType integer
   * @minimum 1
   * @maximum 500
   */
  n_genes?: number;
  /**
   * Colour map of the heatmap.
   * @default "RdBu_r"
   */
  cmap?: "RdBu_r" | "bwr" | "viridis" | "magma";
}

/**
 * Heatmap of the most significant genes of one cell type × regions: each gene's mean expression per
 * region, z-scored across the regions (the rows of uns `<key>/means`).
 */
export async function region_feature_kruskal_plot(
  sd: SpatialData,
  params: RegionFeatureKruskalPlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "custom.region_feature_kruskal_plot";
  const t = activeTable(sd, ctx.table);
  const key = params.key ?? "region_feature_kruskal";
  const results = frameAt(t.uns, `${key}/results`, op, "custom.region_feature_kruskal");
  const means = frameMatrix(frameAt(t.uns, `${key}/means`, op, "custom.region_feature_kruskal"));
  const stringsOf = (name: string): readonly (string | null)[] => {
    const col = results.columns[name];
    if (col?.kind !== "string")
      throw new Error(`${op}: uns["${key}/results"] has no string column "${name}"`);
    return col.values;
  };
  const types = stringsOf("cell_type");
  const genes = stringsOf("gene");
  const cellType = params.cell_type ?? types[0] ?? "";
  const rows = types.flatMap((c, i) => (c === cellType ? [i] : [])).slice(0, params.n_genes ?? 15);
  if (rows.length === 0) throw new Error(`${op}: no results for cell type "${cellType}" in uns["${key}"]`);
  const nc = means.cols.length;
  const z = new Float64Array(rows.length * nc);
  rows.forEach((r, i) => {
    const v = Array.from(means.values.subarray(r * nc, (r + 1) * nc));
    const ok = v.filter(Number.isFinite);
    const mean = ok.reduce((a, b) => a + b, 0) / ok.length;
    const sd = Math.sqrt(ok.reduce((a, b) => a + (b - mean) ** 2, 0) / ok.length);
    v.forEach((x, j) => {
      z[i * nc + j] = Number.isFinite(x) ? (sd > 0 ? (x - mean) / sd : 0) : Number.NaN;
    });
  });
  const svg = gridChart({
    rowLabels: rows.map((r) => genes[r] ?? ""),
    colLabels: means.cols,
    values: z,
    cmap: params.cmap ?? "RdBu_r",
    vcenter: 0,
    colorTitle: "z-scored mean",
    title: `${cellType}: genes across regions`,
  });
  return plotResult(svg, [unsRef(ctx, key)], op);
}

/** Params of `proximity_test_plot`. */
export interface ProximityTestPlotParams {
  /**
   * The key `proximity_test` wrote (default `<cluster_key>_proximity`).
   * @maxLength 256
   */
  key: string;
  /**
   * Colour map of the heatmap.
   * @default "RdBu_r"
   */
  cmap?: "RdBu_r" | "bwr" | "viridis" | "magma";
}

/** Heatmap of the proximity z-scores (rows: from-label, columns: to-label; negative = nearer than chance). */
export async function proximity_test_plot(
  sd: SpatialData,
  params: ProximityTestPlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "custom.proximity_test_plot";
  const t = activeTable(sd, ctx.table);
  const m = frameMatrix(frameAt(t.uns, `${params.key}/zscore`, op, "custom.proximity_test"));
  const lim = Math.max(1e-9, ...Array.from(m.values).filter(Number.isFinite).map(Math.abs));
  const svg = gridChart({
    rowLabels: m.rows,
    colLabels: m.cols,
    values: m.values,
    cmap: params.cmap ?? "RdBu_r",
    vmin: -lim,
    vmax: lim,
    vcenter: 0,
    colorTitle: "z-score",
    title: "Nearest-neighbour proximity",
  });
  return plotResult(svg, [unsRef(ctx, params.key)], op);
}

/** Params of `infiltration_profile_plot`. */
export interface InfiltrationProfilePlotParams {
  /**
   * The key `infiltration_profile` wrote.
   * @default "infiltration_profile"
   * @maxLength 256
   */
  key?: string;
}

/** Infiltration curves: each cell type's share (or count) per distance bin across the margin. */
export async function infiltration_profile_plot(
  sd: SpatialData,
  params: InfiltrationProfilePlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "custom.infiltration_profile_plot";
  const t = activeTable(sd, ctx.table);
  const key = params.key ?? "infiltration_profile";
  const m = frameMatrix(frameAt(t.uns, `${key}/profile`, op, "custom.infiltration_profile"));
  const centers = unsGet(t.uns, `${key}/bin_centers`) as { data: Float64Array } | undefined;
  if (!centers?.data)
    throw new Error(`${op}: no uns["${key}/bin_centers"]; run custom.infiltration_profile first`);
  const value = unsGet(t.uns, `${key}/params/value`) === "count" ? "cells" : "fraction of cells";
  const nc = m.cols.length;
  const series = m.cols.map((label, j) => ({
    label,
    color: defaultColor(j),
    x: centers.data,
    y: Float64Array.from({ length: m.rows.length }, (_, i) => m.values[i * nc + j]!),
    marker: 2,
  }));
  const svg = lineChart({
    panels: [
      {
        title: "Infiltration across the margin",
        series,
        xLabel: "signed distance to the margin",
        yLabel: value,
      },
    ],
    legend: series.map((s) => ({ label: s.label, color: s.color })),
  });
  return plotResult(svg, [unsRef(ctx, key)], op);
}

/** Params of `region_composition_plot`. */
export interface RegionCompositionPlotParams {
  /**
   * The key `region_composition` wrote (default `<region_key>_<cell_type_key>_composition`).
   * @maxLength 256
   */
  key: string;
  /**
   * Colour by each region's `fractions` or by the Pearson `residuals` of the chi-square test.
   * @default "fractions"
   */
  value?: "fractions" | "residuals";
}

/**
 * Regions × cell types coloured by each region's fractions (or the chi-square residuals), with the
 * test's χ² and p-value in the title.
 */
export async function region_composition_plot(
  sd: SpatialData,
  params: RegionCompositionPlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "custom.region_composition_plot";
  const t = activeTable(sd, ctx.table);
  const value = params.value ?? "fractions";
  const m = frameMatrix(frameAt(t.uns, `${params.key}/${value}`, op, "custom.region_composition"));
  const chi2 = unsGet(t.uns, `${params.key}/chi2`);
  const p = unsGet(t.uns, `${params.key}/pvalue`);
  const lim = Math.max(1e-9, ...Array.from(m.values).filter(Number.isFinite).map(Math.abs));
  const svg = gridChart({
    rowLabels: m.rows,
    colLabels: m.cols,
    values: m.values,
    cmap: value === "fractions" ? "viridis" : "RdBu_r",
    ...(value === "fractions" ? { vmin: 0, vmax: 1 } : { vmin: -lim, vmax: lim, vcenter: 0 }),
    annotate: value === "fractions",
    colorTitle: value === "fractions" ? "fraction" : "(O − E)/√E",
    title: `χ² = ${Number(chi2).toPrecision(4)}, p = ${Number(p).toPrecision(3)}`,
  });
  return plotResult(svg, [unsRef(ctx, params.key)], op);
}

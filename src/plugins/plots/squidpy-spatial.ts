/**
 * squidpy's `pl.co_occurrence` and `pl.ripley` (curves over distance per cluster, from
 * `gr.co_occurrence` and `gr.ripley`) and `pl.spatial_scatter` (the cells at their spatial coordinates
 * over the tissue image, y down as the image is shown).
 */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";
import { isUnsDict, unsGet } from "../../sdk/data/uns.js";
import { type LinePanel, lineChart, type Series } from "../../sdk/figures/plots/line-chart.js";
import type { MarkerShape } from "../../sdk/figures/plots/points-raster.js";
import { scatterChart } from "../../sdk/figures/plots/scatter-chart.js";
import type { OpContext, PlotResult } from "../../sdk/jobs/operation.js";
import { asList, categoryColors, groupingRef, plotTable, ref } from "./access.js";
import { coordinates, markerRadius, namedColor, type ScatterParams, scatterPanels } from "./embedding.js";
import { plotResult } from "./finish.js";
import { denseAt, frameAt, frameNumbers, frameStrings, numbers, unsEntry } from "./squidpy-access.js";
import { imageNames, tissueImage } from "./tissue-image.js";

/** Params of `co_occurrence`. */
export interface CoOccurrencePlotParams {
  /**
   * Categorical obs column the co-occurrence was computed for.
   * @widget obs_categorical
   */
  cluster_key: string;
  /** Clusters to draw a panel for (default: every cluster). */
  clusters?: string | string[] | null;
}

function dictEntry(v: unknown, key: string): never | undefined {
  return v && typeof v === "object" && (v as { kind?: string }).kind === "dict"
    ? ((v as { entries: Record<string, never> }).entries[key] as never)
    : undefined;
}

/**
 * Co-occurrence probability ratio of each cluster with the others over distance, a panel per
 * cluster (squidpy's `pl.co_occurrence`).
 * @peakMemory n_obs * 8
 */
export async function co_occurrence(
  sd: SpatialData,
  params: CoOccurrencePlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "pl.co_occurrence";
  const t = plotTable(sd, ctx, op);
  const key = `${params.cluster_key}_co_occurrence`;
  const node = unsEntry(t, key);
  const occ = denseAt(dictEntry(node, "occ"), `uns["${key}"]["occ"]`, op, "gr.co_occurrence");
  const interval = numbers(
    denseAt(dictEntry(node, "interval"), `uns["${key}"]["interval"]`, op, "gr.co_occurrence"),
  );
  const g = groupingRef(t, ctx, params.cluster_key, op);
  const k = g.categories.length;
  const l = interval.length - 1;
  if (occ.shape[0] !== k || occ.shape[1] !== k || occ.shape[2] !== l)
    throw new Error(
      `${op}: uns["${key}"]["occ"] is ${occ.shape.join(" × ")}, not ${k} × ${k} × ${l}; run gr.co_occurrence again`,
    );
  const chosen = asList(params.clusters);
  const unknown = chosen.filter((c) => !g.categories.includes(c));
  if (unknown.length)
    throw new Error(`${op}: clusters ${unknown.join(", ")} are not categories of "${params.cluster_key}"`);
  const shown = chosen.length ? chosen : g.categories;
  const cc = categoryColors(t, ctx, params.cluster_key, g.categories);
  const d = numbers(occ);
  const x = interval.subarray(1);
  const panels: LinePanel[] = shown.map((c) => {
    const a = g.categories.indexOf(c);
    const series: Series[] = g.categories.map((other, b) => ({
      label: other,
      color: cc.colors[b]!,
      x,
      y: d.subarray((a * k + b) * l, (a * k + b + 1) * l),
    }));
    return { title: c, series, xLabel: "distance", yLabel: `p(exp|${c})/p(exp)` };
  });
  const svg = lineChart({
    panels,
    legend: g.categories.map((c, i) => ({ label: c, color: cc.colors[i]! })),
    legendTitle: params.cluster_key,
  });
  return plotResult(svg, [ref(ctx, "uns", key), ...g.references, ...cc.references], op);
}

/** Params of `ripley`. */
export interface RipleyPlotParams {
  /**
   * Categorical obs column Ripley's statistic was computed for.
   * @widget obs_categorical
   */
  cluster_key: string;
  /**
   * Which statistic: F, G or L (the one `gr.ripley` computed).
   * @default "F"
   */
  mode?: "F" | "G" | "L";
  /** Draw the envelope of the simulated Poisson processes. @default true */
  plot_sims?: boolean;
}

/**
 * Ripley's F, G or L of each cluster over distance, with the simulations' envelope (squidpy's `pl.ripley`).
 * @peakMemory n_obs * 8
 */
export async function ripley(sd: SpatialData, params: RipleyPlotParams, ctx: OpContext): Promise<PlotResult> {
  const op = "pl.ripley";
  const mode = params.mode ?? "F";
  const t = plotTable(sd, ctx, op);
  const key = `${params.cluster_key}_ripley_${mode}`;
  const node = unsEntry(t, key);
  const writer = `gr.ripley (mode "${mode}")`;
  const stat = frameAt(dictEntry(node, `${mode}_stat`), `uns["${key}"]["${mode}_stat"]`, op, writer);
  const g = groupingRef(t, ctx, params.cluster_key, op);
  const cc = categoryColors(t, ctx, params.cluster_key, g.categories);
  const bins = frameNumbers(stat, "bins");
  const values = frameNumbers(stat, "stats");
  const labels = frameStrings(stat, params.cluster_key);
  const series: Series[] = [];
  if (params.plot_sims ?? true) {
    const sims = frameAt(dictEntry(node, "sims_stat"), `uns["${key}"]["sims_stat"]`, op, writer);
    const sb = frameNumbers(sims, "bins");
    const sv = frameNumbers(sims, "stats");
    const byBin = new Map<number, number[]>();
    sb.forEach((b, i) => {
      const list = byBin.get(b) ?? [];
      list.push(sv[i]!);
      byBin.set(b, list);
    });
    const xs = [...byBin.keys()].sort((a, b) => a - b);
    const lo = xs.map((b) => Math.min(...byBin.get(b)!));
    const hi = xs.map((b) => Math.max(...byBin.get(b)!));
    const mean = xs.map((b) => byBin.get(b)!.reduce((s, v) => s + v, 0) / byBin.get(b)!.length);
    series.push({ label: "simulations", color: "#808080", x: xs, y: mean, band: { lo, hi } });
  }
  for (const [ci, c] of g.categories.entries()) {
    const idx = labels.flatMap((l, i) => (l === c ? [i] : []));
    if (!idx.length) continue;
    series.push({
      label: c,
      color: cc.colors[ci]!,
      x: idx.map((i) => bins[i]!),
      y: idx.map((i) => values[i]!),
    });
  }
  const svg = lineChart({
    panels: [{ title: `Ripley's ${mode}`, series, xLabel: "bins", yLabel: "value" }],
    legend: series.map((s) => ({ label: s.label, color: s.color })),
    legendTitle: params.cluster_key,
  });
  return plotResult(svg, [ref(ctx, "uns", key), ...g.references, ...cc.references], op);
}

/** Params of `spatial_scatter`. */
export interface SpatialScatterParams extends ScatterParams {
  /**
   * obsm key of the spatial coordinates.
   * @widget obsm_key
   * @default "spatial"
   */
  spatial_key?: string;
  /** Draw the tissue image under the spots (when the data has an image element). @default true */
  img?: boolean;
  /**
   * Image element to draw (squidpy picks the library's image by `img_res_key`; here it is the image
   * element's name). Default: the first image element.
   */
  img_key?: string | null;
  /** Opacity of the image (0–1). Default: opaque. */
  img_alpha?: number | null;
  /** Draw one channel of the image (grey) instead of its composite. */
  img_channel?: number | null;
  /**
   * Spots drawn at their size in coordinate units, as squidpy's `shape`: `circle`, `square` or `hex`
   * (Visium's hexagonal spots), of radius `size` × half of uns `spatial/<library_id>/scalefactors/
   * spot_diameter_fullres` (`size` defaults to 1 then), or `size` coordinate units when uns has no
   * spot diameter. `null` draws points of `size` pt² whatever the zoom (squidpy's `shape=None`).
   * Default: `circle` when uns holds a spot diameter, else points.
   */
  shape?: MarkerShape | null;
  /**
   * Library in uns `spatial` whose spot diameter sizes the shapes; default the only one.
   * @maxLength 256
   */
  library_id?: string | null;
}

/** uns `spatial/<library>/scalefactors/spot_diameter_fullres` (the only library's by default), when there is one. */
function spotDiameter(t: Table, libraryId: string | null | undefined, op: string): number | undefined {
  const spatial = unsGet(t.uns, "spatial");
  const libs = isUnsDict(spatial) ? Object.keys(spatial.entries) : [];
  if (libraryId != null && !libs.includes(libraryId))
    throw new Error(`${op}: library_id "${libraryId}" is not in uns spatial (${libs.join(", ") || "none"})`);
  const lib = libraryId ?? (libs.length === 1 ? libs[0] : undefined);
  if (lib === undefined) return undefined;
  const v = unsGet(t.uns, `spatial/${lib}/scalefactors/spot_diameter_fullres`);
  const d =
    typeof v === "number" ? v : v && typeof v === "object" && "data" in v ? Number(v.data[0]) : Number.NaN;
  return Number.isFinite(d) && d > 0 ? d : undefined;
}

/** The marker a `shape` asks for, sized in coordinate units (see `SpatialScatterParams.shape`), or null for points. */
function spotMarker(
  t: Table,
  p: SpatialScatterParams,
  op: string,
): { shape: MarkerShape; radius: number } | null {
  if (p.shape !== undefined && p.shape !== null && !["circle", "square", "hex"].includes(p.shape))
    throw new Error(`${op}: shape must be one of circle, square, hex or null (got "${String(p.shape)}")`);
  const diameter = spotDiameter(t, p.library_id, op);
  const shape = p.shape === undefined ? (diameter !== undefined ? "circle" : null) : p.shape;
  if (shape === null) return null;
  if (diameter !== undefined) return { shape, radius: (diameter / 2) * (p.size ?? 1) };
  if (p.size == null || !(p.size > 0))
    throw new Error(
      `${op}: shape "${shape}" needs a spot size: uns spatial/<library_id>/scalefactors/spot_diameter_fullres or size (in coordinate units)`,
    );
  return { shape, radius: p.size };
}

/**
 * The cells at their spatial coordinates over the tissue image, coloured by obs columns or genes
 * (squidpy's `pl.spatial_scatter`). The image is placed through its element's transformation into
 * the same world space as `obsm[spatial_key]`.
 * @peakMemory 4 * n_obs * 8 + 4 * n_obs * 4 + 16000000 * 8
 */
export async function spatial_scatter(
  sd: SpatialData,
  params: SpatialScatterParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "pl.spatial_scatter";
  const t = plotTable(sd, ctx, op);
  const key = params.spatial_key ?? "spatial";
  if (!t.obsm[key])
    throw new Error(`${op}: no obsm "${key}" (obsm: ${Object.keys(t.obsm).join(", ") || "none"})`);
  const { x, y } = coordinates(t, key, "1,2", op);
  const { panels, references } = await scatterPanels(t, ctx, params, op);
  if (params.img_alpha != null && !(params.img_alpha >= 0 && params.img_alpha <= 1))
    throw new Error(`${op}: img_alpha must be between 0 and 1 (got ${params.img_alpha})`);
  const imgName = params.img === false ? null : (params.img_key ?? imageNames(sd)[0] ?? null);
  const marker = spotMarker(t, params, op);
  let drawn: string | null = null;
  const svg = await scatterChart({
    background: imgName
      ? async (window, w, h) => {
          const im = await tissueImage(sd, ctx.table, imgName, window, w, h, {
            channel: params.img_channel ?? null,
            op,
          });
          drawn = im ? imgName : null;
          return im?.png ?? null;
        }
      : undefined,
    backgroundAlpha: params.img_alpha ?? undefined,
    x,
    y,
    panels,
    radius: markerRadius(params.size, x.length),
    ...(marker ? { marker } : {}),
    alpha: params.alpha ?? undefined,
    ncols: params.ncols ?? 4,
    equalAspect: true,
    invertY: true,
    axes: params.frameon !== false,
    xLabel: "spatial1",
    yLabel: "spatial2",
    naColor: namedColor(params.na_color ?? "lightgray", `${op}: na_color`),
  });
  const imageRefs = drawn ? [`images:${drawn}`] : [];
  return plotResult(svg, [ref(ctx, "obsm", key), ...references, ...imageRefs], op);
}

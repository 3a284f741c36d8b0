/**
 * squidpy's `pl.ligrec`: the ligand–receptor test of `gr.ligrec` as a dot plot, interactions
 * (`source|target` molecules) by cluster pairs (`cluster_1|cluster_2`, bracketed by source cluster).
 * Colour is `log2(mean + 1)`; dot size is `−log10(p)` (p floored at `min(1e-3, alpha)` as squidpy
 * does); dots with p ≤ `alpha` are outlined in red.
 */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { isColormap } from "../../sdk/figures/plots/colormaps.js";
import { type ColumnGroup, gridChart } from "../../sdk/figures/plots/grid-chart.js";
import type { OpContext, PlotResult } from "../../sdk/jobs/operation.js";
import { asList, plotTable, ref } from "./access.js";
import { plotResult } from "./finish.js";
import { frameAt, frameNumbers, unsEntry } from "./squidpy-access.js";

/** Params of `ligrec`. */
export interface LigrecPlotParams {
  /**
   * Categorical obs column the test was run for (the result is `uns["<cluster_key>_ligrec"]`).
   * @widget obs_categorical
   */
  cluster_key: string;
  /** uns key of the result, when `gr.ligrec` was given a `key_added`. */
  key?: string | null;
  /** Source clusters to show (default: all). */
  source_groups?: string | string[] | null;
  /** Target clusters to show (default: all). */
  target_groups?: string | string[] | null;
  /** Show only means inside [low, high]. @minItems 2 @maxItems 2 */
  means_range?: number[] | null;
  /**
   * Show only entries with a p-value at most this.
   * @minimum 0
   * @maximum 1
   * @default 1
   */
  pvalue_threshold?: number;
  /** Leave out interactions with no mean left to show. @default true */
  remove_empty_interactions?: boolean;
  /** Leave out interactions with no p-value at most `alpha`. @default false */
  remove_nonsig_interactions?: boolean;
  /**
   * Significance level: dots with p ≤ alpha are outlined.
   * @minimum 0
   * @maximum 1
   * @default 0.001
   */
  alpha?: number | null;
  /** Cluster pairs as rows and interactions as columns. @default false */
  swap_axes?: boolean;
  /** Figure title. */
  title?: string | null;
  /**
   * Colour map of the means.
   * @default "viridis"
   */
  cmap?: string;
}

function dictEntry(v: unknown, key: string): never | undefined {
  return v && typeof v === "object" && (v as { kind?: string }).kind === "dict"
    ? ((v as { entries: Record<string, never> }).entries[key] as never)
    : undefined;
}

/**
 * Dot plot of the ligand–receptor means and p-values between cluster pairs (squidpy's `pl.ligrec`).
 * @peakMemory n_obs * 8
 */
export async function ligrec(sd: SpatialData, params: LigrecPlotParams, ctx: OpContext): Promise<PlotResult> {
  const op = "pl.ligrec";
  const cmap = params.cmap ?? "viridis";
  if (!isColormap(cmap)) throw new Error(`${op}: unknown cmap "${cmap}"`);
  const t = plotTable(sd, ctx, op);
  const key = params.key ?? `${params.cluster_key}_ligrec`;
  const node = unsEntry(t, key);
  const means = frameAt(dictEntry(node, "means"), `uns["${key}"]["means"]`, op, "gr.ligrec");
  const pvals = frameAt(dictEntry(node, "pvalues"), `uns["${key}"]["pvalues"]`, op, "gr.ligrec");
  const interactions = means.index.values.map(String);
  const sources = asList(params.source_groups);
  const targets = asList(params.target_groups);
  const pairs = means.columnOrder.filter((c) => {
    const [s, tg] = c.split("|");
    return (!sources.length || sources.includes(s!)) && (!targets.length || targets.includes(tg!));
  });
  if (!pairs.length) throw new Error(`${op}: no cluster pair matches source_groups/target_groups`);
  const alpha = params.alpha ?? null;
  const floor = Math.min(1e-3, alpha ?? 1e-3);
  const threshold = params.pvalue_threshold ?? 1;
  const [lo, hi] = params.means_range?.length === 2 ? params.means_range : [-Infinity, Infinity];
  const ni = interactions.length;
  const np = pairs.length;
  const colour = new Float64Array(ni * np).fill(Number.NaN);
  const size = new Float64Array(ni * np);
  const sig = new Float64Array(ni * np);
  pairs.forEach((pair, j) => {
    const m = frameNumbers(means, pair);
    const p = frameNumbers(pvals, pair);
    for (let i = 0; i < ni; i++) {
      const pv = p[i]!;
      if (!(m[i]! >= lo && m[i]! <= hi) || (Number.isFinite(pv) && pv > threshold)) continue;
      colour[i * np + j] = Math.log2(m[i]! + 1);
      size[i * np + j] = Number.isFinite(pv) ? -Math.log10(pv + floor) : 0;
      sig[i * np + j] = alpha !== null && pv <= alpha ? 1 : 0;
    }
  });
  const keep = interactions.flatMap((_, i) => {
    const row = Array.from({ length: np }, (_, j) => i * np + j);
    if ((params.remove_empty_interactions ?? true) && row.every((k) => Number.isNaN(colour[k]!))) return [];
    if (params.remove_nonsig_interactions && !row.some((k) => sig[k]! > 0)) return [];
    return [i];
  });
  if (!keep.length) throw new Error(`${op}: no interaction left to show (every entry filtered out)`);
  const maxSize = Math.max(1e-12, ...keep.flatMap((i) => Array.from(size.subarray(i * np, (i + 1) * np))));
  const pick = (a: Float64Array, f: (v: number) => number = (v) => v) =>
    Float64Array.from(keep.flatMap((i) => Array.from(a.subarray(i * np, (i + 1) * np), f)));
  let values = pick(colour);
  let radii = pick(size, (v) => Math.sqrt(Math.max(0, v) / maxSize));
  let highlight = pick(sig);
  let rowLabels = keep.map((i) => interactions[i]!);
  let colLabels = pairs;
  let colGroups: ColumnGroup[] | undefined = [];
  for (const [j, pair] of pairs.entries()) {
    const s = pair.split("|")[0]!;
    const last = colGroups.at(-1);
    if (last && last.label === s && last.end === j - 1) last.end = j;
    else colGroups.push({ start: j, end: j, label: s });
  }
  if (params.swap_axes) {
    const tr = (a: Float64Array) => {
      const out = new Float64Array(a.length);
      for (let r = 0; r < keep.length; r++)
        for (let c = 0; c < np; c++) out[c * keep.length + r] = a[r * np + c]!;
      return out;
    };
    [values, radii, highlight] = [tr(values), tr(radii), tr(highlight)];
    [rowLabels, colLabels] = [colLabels, rowLabels];
    colGroups = undefined;
  }
  const svg = gridChart({
    rowLabels,
    colLabels,
    values,
    radii,
    highlight,
    cmap,
    colorTitle: "log2(mean + 1)",
    sizeKey: {
      title: "-log10 p-value",
      dots: [0.25, 0.5, 1].map((f) => ({ label: (f * maxSize).toPrecision(2), fraction: Math.sqrt(f) })),
    },
    colGroups,
    title: params.title ?? undefined,
    cell: 18,
  });
  return plotResult(svg, [ref(ctx, "uns", key)], op);
}

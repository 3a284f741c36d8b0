/**
 * scanpy's preprocessing plots: `highly_variable_genes` (dispersion or variance against mean, the
 * selected genes in black) and `pca_variance_ratio` (the variance ratio of each PC, ranked).
 */
import { columnValue } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";
import { lineChart, type Series } from "../../sdk/figures/plots/line-chart.js";
import type { OpContext, PlotResult } from "../../sdk/jobs/operation.js";
import { plotTable, ref } from "./access.js";
import { plotResult } from "./finish.js";

/** Params of `highly_variable_genes`. */
export interface HighlyVariableGenesPlotParams {
  /** Plot on logarithmic axes. @default false */
  log?: boolean;
}

function varNumbers(t: Table, col: string): Float64Array | null {
  const c = t.var.columns[col];
  if (!c) return null;
  const n = t.var.index.values.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = columnValue(c, i);
    out[i] = typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : Number.NaN;
  }
  return out;
}

/**
 * Dispersions (or variances) against mean expression, highly variable genes in black, normalised and
 * not (scanpy's `sc.pl.highly_variable_genes`).
 * @peakMemory n_vars * 8 * 8
 */
export async function highly_variable_genes(
  sd: SpatialData,
  params: HighlyVariableGenesPlotParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.highly_variable_genes";
  const t = plotTable(sd, ctx, op);
  const hvCol = t.var.columns.highly_variable;
  if (!hvCol)
    throw new Error(`${op}: no var column "highly_variable"; run sc.pp.highly_variable_genes first`);
  const seuratV3 = !!t.var.columns.variances_norm;
  const yName = seuratV3 ? "variances" : "dispersions";
  const means = varNumbers(t, "means");
  const y = varNumbers(t, yName);
  const yNorm = varNumbers(t, `${yName}_norm`);
  if (!means || !y || !yNorm) throw new Error(`${op}: var lacks means, ${yName} or ${yName}_norm`);
  const n = means.length;
  const hv = Array.from(
    { length: n },
    (_, i) => columnValue(hvCol, i) === true || columnValue(hvCol, i) === 1,
  );
  const log = params.log ?? false;
  const pick = (src: Float64Array, want: boolean) => Float64Array.from(src.filter((_, i) => hv[i] === want));
  const panel = (ys: Float64Array, label: string) => {
    const series: Series[] = [
      {
        label: "other genes",
        color: "#808080",
        x: pick(means, false),
        y: pick(ys, false),
        line: false,
        marker: 1.2,
      },
      {
        label: "highly variable genes",
        color: "#000000",
        x: pick(means, true),
        y: pick(ys, true),
        line: false,
        marker: 1.2,
      },
    ];
    return {
      series,
      xLabel: log ? "mean expressions of genes (log10)" : "mean expressions of genes",
      yLabel: label,
      logY: log,
    };
  };
  const xs = log
    ? (a: Float64Array) => Float64Array.from(a, (v) => (v > 0 ? Math.log10(v) : Number.NaN))
    : (a: Float64Array) => a;
  const panels = [
    panel(yNorm, `${yName} of genes (normalized)`),
    panel(y, `${yName} of genes (not normalized)`),
  ].map((p) => ({ ...p, series: p.series.map((s) => ({ ...s, x: xs(s.x as Float64Array) })) }));
  const svg = lineChart({
    panels,
    legend: [
      { label: "highly variable genes", color: "#000000" },
      { label: "other genes", color: "#808080" },
    ],
  });
  const refs = ["highly_variable", "means", yName, `${yName}_norm`].map((c) => ref(ctx, "var", c));
  return plotResult(svg, refs, op);
}

/** Params of `pca_variance_ratio`. */
export interface PcaVarianceRatioParams {
  /**
   * Number of PCs to show.
   * @asType integer
   * @minimum 1
   * @maximum 1000
   * @default 30
   */
  n_pcs?: number;
  /** Plot the ratios on a log axis. @default false */
  log?: boolean;
}

/**
 * The variance ratio of each principal component, ranked (scanpy's `sc.pl.pca_variance_ratio`).
 * @peakMemory 1000000
 */
export async function pca_variance_ratio(
  sd: SpatialData,
  params: PcaVarianceRatioParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.pca_variance_ratio";
  const t = plotTable(sd, ctx, op);
  const pca = t.uns.entries.pca;
  const vr =
    pca && typeof pca === "object" && (pca as { kind?: string }).kind === "dict"
      ? (pca as { entries: Record<string, unknown> }).entries.variance_ratio
      : undefined;
  if (!vr || typeof vr !== "object" || (vr as { kind?: string }).kind !== "dense")
    throw new Error(`${op}: no uns["pca"]["variance_ratio"]; run sc.pp.pca first`);
  const data = (vr as { data: ArrayLike<number> }).data;
  const k = Math.min(params.n_pcs ?? 30, data.length);
  const y = Float64Array.from({ length: k }, (_, i) => Number(data[i]));
  const x = Float64Array.from({ length: k }, (_, i) => i);
  const svg = lineChart({
    panels: [
      {
        title: "PCA variance ratio",
        series: [
          {
            label: "variance ratio",
            color: "#000000",
            x,
            y,
            line: false,
            marker: 1.5,
            pointLabels: Array.from(y, (_, i) => `PC${i + 1}`),
          },
        ],
        xLabel: "ranking",
        yLabel: "variance ratio",
        logY: params.log ?? false,
      },
    ],
  });
  return plotResult(svg, [ref(ctx, "uns", "pca")], op);
}

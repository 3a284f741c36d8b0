/**
 * scanpy's `sc.pl.embedding` and `sc.pl.umap`: the cells on two components of an obsm embedding,
 * one panel per `color` key (an obs column or a gene), categories from `uns["<key>_colors"]` or the
 * default palette, continuous values on a colour map, highest values drawn last (`sort_order`).
 */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";
import { isColormap } from "../../sdk/figures/plots/colormaps.js";
import { type ScatterPanel, scatterChart } from "../../sdk/figures/plots/scatter-chart.js";
import type { OpContext, PlotResult } from "../../sdk/jobs/operation.js";
import { asList, categoryColors, keyValues, plotTable, ref } from "./access.js";
import { plotResult } from "./finish.js";

/** Params shared by `embedding`, `umap` and squidpy's `spatial_scatter`. */
export interface ScatterParams {
  /**
   * Keys to colour by: obs columns or genes, one panel each; none draws the cells in one colour.
   * @widget obs_key
   */
  color?: string | string[] | null;
  /** var column holding the gene names `color` uses. */
  gene_symbols?: string | null;
  /** Read genes from `raw` (default: when raw exists and no layer is given). */
  use_raw?: boolean | null;
  /** Read genes from this layer. */
  layer?: string | null;
  /** Categories to colour; the other cells are drawn in `na_color`. */
  groups?: string | string[] | null;
  /** Marker area in pt² (matplotlib's `s`); default `120000 / n_obs`. @minimum 0 */
  size?: number | null;
  /**
   * Colour map of continuous values (matplotlib name).
   * @default "viridis"
   */
  cmap?: string;
  /** Lower end of the colour scale (default: the data's minimum). */
  vmin?: number | null;
  /** Upper end of the colour scale (default: the data's maximum). */
  vmax?: number | null;
  /** Centre of a diverging scale. */
  vcenter?: number | null;
  /**
   * Colour of missing values and of cells outside `groups`.
   * @default "lightgray"
   */
  na_color?: string;
  /**
   * Draw a frame around each panel.
   * @default true
   */
  frameon?: boolean;
  /** Panel titles (one per `color` key); default the key. */
  title?: string | string[] | null;
  /**
   * Panels per row.
   * @asType integer
   * @minimum 1
   * @maximum 20
   * @default 4
   */
  ncols?: number;
  /** Marker opacity. @minimum 0 @maximum 1 */
  alpha?: number | null;
}

/** Params of `embedding`. */
export interface EmbeddingParams extends ScatterParams {
  /**
   * The obsm key (`X_umap`, or `umap` for `X_umap`).
   * @widget obsm_key
   */
  basis: string;
  /**
   * The two components to draw, 1-based, as `"1,2"`.
   * @default "1,2"
   */
  components?: string;
}

/** Params of `umap`. */
export interface UmapParams extends ScatterParams {
  /**
   * The two components to draw, 1-based, as `"1,2"`.
   * @default "1,2"
   */
  components?: string;
}

const NAMED_COLORS: Record<string, string> = {
  lightgray: "#d3d3d3",
  lightgrey: "#d3d3d3",
  gray: "#808080",
  grey: "#808080",
  black: "#000000",
};

/** A matplotlib colour name or `#rrggbb` as hex. */
export function namedColor(c: string, what: string): string {
  const hex = NAMED_COLORS[c.toLowerCase()] ?? c;
  if (!/^#[0-9a-f]{6}$/i.test(hex))
    throw new Error(`${what}: "${c}" is not a colour (#rrggbb or ${Object.keys(NAMED_COLORS).join(", ")})`);
  return hex;
}

/** The obsm key of a basis: `X_<basis>` when it exists, else the basis itself (as scanpy finds it). */
function basisKey(t: Table, basis: string, op: string): string {
  for (const k of [`X_${basis}`, basis]) if (t.obsm[k]) return k;
  throw new Error(
    `${op}: no obsm "X_${basis}" or "${basis}" (obsm: ${Object.keys(t.obsm).join(", ") || "none"})`,
  );
}

/** Two columns of a dense obsm matrix. */
export function coordinates(
  t: Table,
  key: string,
  components: string,
  op: string,
): { x: Float64Array; y: Float64Array } {
  const m = t.obsm[key];
  if (!m || m.kind !== "dense" || m.shape.length !== 2)
    throw new Error(`${op}: obsm "${key}" is not a dense 2-d array`);
  const w = m.shape[1]!;
  const parts = components.split(",").map((s) => Number(s.trim()));
  if (parts.length !== 2 || parts.some((c) => !Number.isInteger(c) || c < 1 || c > w))
    throw new Error(`${op}: components "${components}" must be two 1-based indices up to ${w}, as "1,2"`);
  const [a, b] = [parts[0]! - 1, parts[1]! - 1];
  const n = m.shape[0]!;
  const d = m.data as unknown as ArrayLike<number>;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = Number(d[i * w + a]);
    y[i] = Number(d[i * w + b]);
  }
  return { x, y };
}

/** The panels of a scatter: one per colour key, with the references they read. */
export async function scatterPanels(
  t: Table,
  ctx: Pick<OpContext, "table">,
  p: ScatterParams,
  op: string,
): Promise<{ panels: ScatterPanel[]; references: string[] }> {
  const cmap = p.cmap ?? "viridis";
  if (!isColormap(cmap)) throw new Error(`${op}: unknown cmap "${cmap}"`);
  const keys = asList(p.color);
  const titles = asList(p.title);
  const groups = asList(p.groups);
  const references: string[] = [];
  const panels: ScatterPanel[] = [];
  if (keys.length === 0) panels.push({ title: titles[0], coloring: { kind: "constant", color: "#1f77b4" } });
  for (const [i, key] of keys.entries()) {
    const kv = await keyValues(t, ctx, key, p, op);
    references.push(...kv.references);
    const title = titles[i] ?? key;
    if (kv.kind === "categorical") {
      const cc = categoryColors(t, ctx, key, kv.categories);
      references.push(...cc.references);
      const unknown = groups.filter((g) => !kv.categories.includes(g));
      if (unknown.length)
        throw new Error(`${op}: groups ${unknown.join(", ")} are not categories of "${key}"`);
      const shown = groups.length ? new Set(groups.map((g) => kv.categories.indexOf(g))) : undefined;
      panels.push({
        title,
        coloring: {
          kind: "categorical",
          codes: kv.codes,
          categories: kv.categories,
          colors: cc.colors,
          shown,
        },
      });
    } else {
      panels.push({
        title,
        coloring: {
          kind: "continuous",
          values: kv.values,
          cmap,
          vmin: p.vmin,
          vmax: p.vmax,
          vcenter: p.vcenter,
        },
      });
    }
  }
  return { panels, references };
}

/** Point radius in pt of matplotlib marker area `s` (pt²), in a panel scaled from 288 pt to 320 pt. */
export function markerRadius(size: number | null | undefined, n: number): number {
  const s = size ?? 120000 / Math.max(1, n);
  return Math.max(0.35, (Math.sqrt(s) / 2) * (320 / 288));
}

/**
 * Scatter plot of the cells in an embedding (scanpy's `sc.pl.embedding`).
 * @peakMemory 4 * n_obs * 8 + 4 * n_obs * 4
 */
export async function embedding(
  sd: SpatialData,
  params: EmbeddingParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const op = "sc.pl.embedding";
  const t = plotTable(sd, ctx, op);
  const key = basisKey(t, params.basis, op);
  return drawEmbedding(t, key, params.components ?? "1,2", params, ctx, op);
}

/**
 * Scatter plot of the cells in UMAP coordinates (scanpy's `sc.pl.umap`, `obsm["X_umap"]`).
 * @peakMemory 4 * n_obs * 8 + 4 * n_obs * 4
 */
export async function umap(sd: SpatialData, params: UmapParams, ctx: OpContext): Promise<PlotResult> {
  const op = "sc.pl.umap";
  const t = plotTable(sd, ctx, op);
  const key = basisKey(t, "umap", op);
  return drawEmbedding(t, key, params.components ?? "1,2", params, ctx, op);
}

async function drawEmbedding(
  t: Table,
  key: string,
  components: string,
  p: ScatterParams,
  ctx: OpContext,
  op: string,
): Promise<PlotResult> {
  const { x, y } = coordinates(t, key, components, op);
  const { panels, references } = await scatterPanels(t, ctx, p, op);
  ctx.progress(0.3);
  const label = key.replace(/^X_/, "").toUpperCase();
  const [a, b] = components.split(",").map((s) => s.trim());
  const svg = await scatterChart({
    x,
    y,
    panels,
    radius: markerRadius(p.size, x.length),
    alpha: p.alpha ?? undefined,
    ncols: p.ncols ?? 4,
    xLabel: p.frameon === false ? undefined : `${label}${a}`,
    yLabel: p.frameon === false ? undefined : `${label}${b}`,
    naColor: namedColor(p.na_color ?? "lightgray", `${op}: na_color`),
  });
  ctx.progress(0.7);
  return plotResult(svg, [ref(ctx, "obsm", key), ...references], op);
}

/**
 * Violins: scanpy's `violin` (one panel per key, a violin per group, with a jittered strip of the
 * cells) and `stacked_violin` (a grid of small violins, groups × genes, filled by the median's colour).
 * Densities come from `kde.ts` (seaborn's estimate); `scale` is seaborn's `density_norm`: `width`
 * (every violin equally wide), `area` (widths ∝ peak density), `count` (widths ∝ cells).
 */
import { circle, group, image, path, rect, svgDocument } from "../svg.js";
import { bottomLabels, frame, leftAxis, leftLabels, panelTitle } from "./axes.js";
import { colormapHex, normalizer } from "./colormaps.js";
import { type DendrogramLinks, dendrogramSvg } from "./dendrogram.js";
import { type Density, gaussianKde } from "./kde.js";
import { colorbar } from "./legend.js";
import { rasterPoints } from "./points-raster.js";
import { linearScale, padded } from "./scale.js";
import { clip, maxTextWidth } from "./text-metrics.js";

/** seaborn's density_norm. */
export type ViolinScale = "width" | "area" | "count";

/** One violin's data. */
export interface ViolinData {
  label: string;
  values: ArrayLike<number>;
  color: string;
}

/** A panel of violins side by side. */
export interface ViolinPanel {
  title?: string;
  yLabel?: string;
  violins: readonly ViolinData[];
}

/** The `violin` figure. */
export interface ViolinChartSpec {
  panels: readonly ViolinPanel[];
  scale: ViolinScale;
  /** Draw the cells as a jittered strip over the violins. */
  stripplot: boolean;
  /** Half-width of the jitter as a fraction of the distance between violins (seaborn's units). @default 0.1 */
  jitter: number;
  /** Strip dot radius in px. */
  dotRadius: number;
  /** log y axis (values are log1p'd for the drawing, as scanpy's `log`). */
  log?: boolean;
}

/**
 * Strips of at most this many dots in a panel are vector circles; a larger strip (every cell, as
 * scanpy draws it) is one embedded PNG over the panel, as scatter plots do above their cap.
 */
export const VECTOR_STRIP_CAP = 2_000;

/** Widths (fractions of the half slot) of each violin's density under a density_norm. */
function widthFactors(ds: readonly (Density | null)[], scale: ViolinScale): number[] {
  const peak = ds.map((d) => (d ? Math.max(...d.density) : 0));
  const maxPeak = Math.max(1e-300, ...peak);
  const maxN = Math.max(1, ...ds.map((d) => d?.n ?? 0));
  return ds.map((d, i) => {
    if (!d || !(peak[i]! > 0)) return 0;
    if (scale === "area") return 1 / maxPeak;
    if (scale === "count") return d.n / maxN / peak[i]!;
    return 1 / peak[i]!;
  });
}

/** A closed violin outline centred at `cx`, `half` px wide at its peak (after `factor`). */
function violinPath(d: Density, cx: number, half: number, factor: number, sy: (v: number) => number): string {
  if (d.density.every((v) => v === 0))
    return `M${(cx - half * 0.8).toFixed(2)},${sy(d.min).toFixed(2)}H${(cx + half * 0.8).toFixed(2)}`;
  const right: string[] = [];
  const left: string[] = [];
  for (let k = 0; k < d.at.length; k++) {
    const w = d.density[k]! * factor * half;
    const y = sy(d.at[k]!).toFixed(2);
    right.push(`${(cx + w).toFixed(2)},${y}`);
    left.unshift(`${(cx - w).toFixed(2)},${y}`);
  }
  return `M${right.join("L")}L${left.join("L")}Z`;
}

/** A small deterministic jitter stream (so a redraw gives the same figure). */
function jitterStream(seed = 0x9e3779b9): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** The jittered strip of a panel's cells: vector dots up to `VECTOR_STRIP_CAP`, else one raster. */
async function strip(
  data: readonly Float64Array[],
  ox: number,
  pw: number,
  sy: (v: number) => number,
  spec: ViolinChartSpec,
  rnd: () => number,
): Promise<string> {
  const slotW = pw / data.length;
  let total = 0;
  for (const v of data) total += v.length;
  const xs = new Float32Array(total);
  const ys = new Float32Array(total);
  let n = 0;
  data.forEach((v, i) => {
    const cx = ox + (i + 0.5) * slotW;
    for (let k = 0; k < v.length; k++) {
      if (!Number.isFinite(v[k]!)) continue;
      xs[n] = cx + (spec.jitter > 0 ? (rnd() * 2 - 1) * spec.jitter * slotW : 0);
      ys[n++] = sy(v[k]!);
    }
  });
  if (n <= VECTOR_STRIP_CAP) {
    const dots: string[] = [];
    for (let k = 0; k < n; k++) dots.push(circle(xs[k]!, ys[k]!, spec.dotRadius, { fill: "#000" }));
    return group(dots, { class: "strip" });
  }
  let top = Infinity;
  let bottom = -Infinity;
  for (let k = 0; k < n; k++) [top, bottom] = [Math.min(top, ys[k]!), Math.max(bottom, ys[k]!)];
  top -= spec.dotRadius + 1;
  bottom += spec.dotRadius + 1;
  for (let k = 0; k < n; k++) {
    xs[k] = xs[k]! - ox;
    ys[k] = ys[k]! - top;
  }
  const png = await rasterPoints({
    width: pw,
    height: bottom - top,
    x: xs.subarray(0, n),
    y: ys.subarray(0, n),
    rgb: () => BLACK,
    radius: spec.dotRadius,
  });
  return image(ox, top, pw, bottom - top, png, { class: "strip-raster" });
}

const BLACK = [0, 0, 0] as const;

/** The violin figure as an SVG document. */
export async function violinChart(spec: ViolinChartSpec): Promise<string> {
  const tf = spec.log ? (v: number) => Math.log1p(Math.max(v, 0)) : (v: number) => v;
  const slot = 44;
  const ph = 260;
  const top = 30;
  const left = 64;
  const labels = spec.panels.flatMap((p) => p.violins.map((v) => clip(v.label)));
  const bottom = maxTextWidth(labels, 10) + 14;
  const rnd = jitterStream();
  const parts: string[] = [];
  let ox = left;
  for (const panel of spec.panels) {
    const pw = Math.max(80, panel.violins.length * slot);
    const data = panel.violins.map((v) => Float64Array.from(v.values, tf));
    // scanpy draws violins with cut = 0: the density stops at the data's range
    const ds = data.map((v) => gaussianKde(v, 100, 0));
    let lo = Infinity;
    let hi = -Infinity;
    for (const d of ds) {
      if (!d) continue;
      lo = Math.min(lo, d.at[0]!, d.min);
      hi = Math.max(hi, d.at[d.at.length - 1]!, d.max);
    }
    if (!(hi >= lo)) [lo, hi] = [0, 1];
    const sy = linearScale(padded([lo, hi], 0.02), [top + ph, top]);
    const factors = widthFactors(ds, spec.scale);
    const g: string[] = [];
    if (panel.title) g.push(panelTitle(panel.title, ox + pw / 2, top - 10));
    ds.forEach((d, i) => {
      const cx = ox + (i + 0.5) * (pw / panel.violins.length);
      const half = (pw / panel.violins.length) * 0.45;
      if (d)
        g.push(
          path(violinPath(d, cx, half, factors[i]!, sy), {
            class: "violin",
            fill: panel.violins[i]!.color,
            stroke: "#333",
            "stroke-width": 0.6,
          }),
        );
    });
    if (spec.stripplot) g.push(await strip(data, ox, pw, sy, spec, rnd));
    g.push(frame(ox, top, pw, ph));
    g.push(leftAxis(sy, ox, panel.yLabel));
    g.push(
      bottomLabels(
        panel.violins.map((v) => clip(v.label)),
        panel.violins.map((_, i) => ox + (i + 0.5) * (pw / panel.violins.length)),
        top + ph,
      ),
    );
    parts.push(group(g, { class: "panel" }));
    ox += pw + left + 10;
  }
  return svgDocument({
    width: ox - left + 16,
    height: top + ph + bottom + 8,
    children: parts,
    background: "#ffffff",
  });
}

/** The `stacked_violin` figure: a violin per (row, column) cell. */
export interface StackedViolinSpec {
  rowLabels: readonly string[];
  colLabels: readonly string[];
  /** The values of cell (r, c). */
  values: (r: number, c: number) => ArrayLike<number>;
  cmap: string;
  scale: ViolinScale;
  colorTitle: string;
  title?: string;
  vmin?: number | null;
  vmax?: number | null;
  /** Colour each violin by this value of cell (r, c) instead of its median (standard_scale'd medians). */
  colorValue?: (r: number, c: number, median: number) => number;
  /** A dendrogram right of the rows or above the columns (leaves in row / column order), as scanpy draws it. */
  dendrogram?: { links: DendrogramLinks; side: "right" | "top" };
}

/** Room a dendrogram takes beside the violins, px (scanpy: 0.8 in; as the grid plots). */
const DENDROGRAM_PX = 48;

/** The stacked-violin figure as an SVG document. */
export function stackedViolinChart(spec: StackedViolinSpec): string {
  const nr = spec.rowLabels.length;
  const nc = spec.colLabels.length;
  const cw = 30;
  const ch = 36;
  const left =
    12 +
    maxTextWidth(
      spec.rowLabels.map((s) => clip(s)),
      10,
    );
  const dendroTop = spec.dendrogram?.side === "top" ? DENDROGRAM_PX + 6 : 0;
  const dendroRight = spec.dendrogram?.side === "right" ? DENDROGRAM_PX + 6 : 0;
  const top = (spec.title ? 30 : 10) + dendroTop;
  const bottom =
    maxTextWidth(
      spec.colLabels.map((s) => clip(s)),
      10,
    ) + 14;
  const ds: (Density | null)[] = [];
  const colorVals: number[] = [];
  for (let r = 0; r < nr; r++)
    for (let c = 0; c < nc; c++) {
      const d = gaussianKde(spec.values(r, c), 100, 0);
      ds.push(d);
      colorVals.push(
        spec.colorValue ? spec.colorValue(r, c, d?.median ?? Number.NaN) : (d?.median ?? Number.NaN),
      );
    }
  const finite = colorVals.filter(Number.isFinite);
  const vmin = spec.vmin ?? (finite.length ? Math.min(...finite) : 0);
  const vmax = spec.vmax ?? (finite.length ? Math.max(...finite) : 1);
  const norm = normalizer(vmin, vmax);
  // Each column (gene) shares one value axis over its rows.
  const parts: string[] = [];
  if (spec.title) parts.push(panelTitle(spec.title, left + (nc * cw) / 2, 18));
  for (let c = 0; c < nc; c++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let r = 0; r < nr; r++) {
      const d = ds[r * nc + c];
      if (d) {
        lo = Math.min(lo, d.at[0]!);
        hi = Math.max(hi, d.at[d.at.length - 1]!);
      }
    }
    const col = ds.filter((_, i) => i % nc === c);
    const factors = widthFactors(col, spec.scale);
    for (let r = 0; r < nr; r++) {
      const d = ds[r * nc + c];
      const y0 = top + r * ch;
      const sy = linearScale(hi > lo ? [lo, hi] : [lo - 1, lo + 1], [y0 + ch - 2, y0 + 2]);
      if (!d) continue;
      const fill = Number.isFinite(colorVals[r * nc + c]!)
        ? colormapHex(spec.cmap, norm(colorVals[r * nc + c]!))
        : "#d3d3d3";
      parts.push(
        path(violinPath(d, left + (c + 0.5) * cw, cw * 0.45, factors[r]!, sy), {
          class: "violin",
          fill,
          stroke: "#333",
          "stroke-width": 0.5,
        }),
      );
    }
  }
  for (let r = 1; r < nr; r++) parts.push(rect(left, top + r * ch, nc * cw, 0.3, { fill: "#bbb" }));
  parts.push(frame(left, top, nc * cw, nr * ch));
  parts.push(
    leftLabels(
      spec.rowLabels.map((s) => clip(s)),
      spec.rowLabels.map((_, r) => top + (r + 0.5) * ch),
      left,
    ),
  );
  parts.push(
    bottomLabels(
      spec.colLabels.map((s) => clip(s)),
      spec.colLabels.map((_, c) => left + (c + 0.5) * cw),
      top + nr * ch,
    ),
  );
  if (spec.dendrogram) {
    const right = spec.dendrogram.side === "right";
    parts.push(
      dendrogramSvg(spec.dendrogram.links, {
        side: spec.dendrogram.side,
        leafCentres: right
          ? spec.rowLabels.map((_, r) => top + (r + 0.5) * ch)
          : spec.colLabels.map((_, c) => left + (c + 0.5) * cw),
        base: right ? left + nc * cw + 4 : top - 4,
        depth: DENDROGRAM_PX,
      }),
    );
  }
  const bar = colorbar(left + nc * cw + 24 + dendroRight, top, {
    cmap: spec.cmap,
    vmin,
    vmax,
    title: spec.colorTitle,
    length: Math.max(60, Math.min(140, nr * ch)),
  });
  parts.push(bar.svg);
  return svgDocument({
    width: left + nc * cw + 24 + dendroRight + bar.width + 16,
    height: Math.max(top + nr * ch + bottom, top + bar.height) + 8,
    children: parts,
    background: "#ffffff",
  });
}

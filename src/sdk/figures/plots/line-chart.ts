/**
 * Line and point panels (squidpy's co_occurrence and ripley curves, centrality scores per cluster,
 * scanpy's PCA variance-ratio ranking): series of (x, y) drawn as lines and/or markers, an optional
 * shaded band per series (ripley's simulation envelope), numeric or categorical x, a legend of the
 * series, several panels side by side.
 */
import { circle, group, path, svgDocument, text } from "../svg.js";
import { bottomAxis, bottomLabels, frame, leftAxis, panelTitle } from "./axes.js";
import { categoryLegend, type LegendItem } from "./legend.js";
import { extent, linearScale, padded } from "./scale.js";
import { maxTextWidth } from "./text-metrics.js";

/** One series. */
export interface Series {
  label: string;
  color: string;
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  /** Connect the points. @default true */
  line?: boolean;
  /** Marker radius; 0 for none. @default 0 */
  marker?: number;
  /** A band from `lo` to `hi` at the same x (drawn under the line, translucent). */
  band?: { lo: ArrayLike<number>; hi: ArrayLike<number> };
  /** A text label beside each point (scanpy's ranking plots label points PC1, PC2 …). */
  pointLabels?: readonly string[];
}

/** One panel. */
export interface LinePanel {
  title?: string;
  series: readonly Series[];
  xLabel?: string;
  yLabel?: string;
  /** Tick labels of a categorical x (positions 0, 1, 2 …). */
  xCategories?: readonly string[];
  /** log10 y axis (values ≤ 0 are skipped). */
  logY?: boolean;
}

/** The figure. */
export interface LineChartSpec {
  panels: readonly LinePanel[];
  /** Legend items (shared by the panels); none when empty. */
  legend?: readonly LegendItem[];
  legendTitle?: string;
  /** Panel plot area in px. @default [300, 240] */
  size?: readonly [number, number];
}

/** The figure as an SVG document. */
export function lineChart(spec: LineChartSpec): string {
  const [pw, ph] = spec.size ?? [300, 240];
  const catBottom = Math.max(
    0,
    ...spec.panels.map((p) => (p.xCategories ? maxTextWidth(p.xCategories, 10) : 0)),
  );
  const left = 64;
  const top = 30;
  const bottom = (catBottom > 0 ? catBottom + 14 : 26) + 22;
  const cellW = left + pw + 16;
  const parts: string[] = [];
  spec.panels.forEach((panel, p) => {
    const ox = p * cellW + left;
    const oy = top;
    const tf = panel.logY ? (v: number) => (v > 0 ? Math.log10(v) : Number.NaN) : (v: number) => v;
    const xs: number[] = [];
    const ys: number[] = [];
    for (const s of panel.series) {
      for (let i = 0; i < s.x.length; i++) {
        xs.push(s.x[i]!);
        ys.push(tf(s.y[i]!));
        if (s.band) ys.push(tf(s.band.lo[i]!), tf(s.band.hi[i]!));
      }
    }
    const xDom = panel.xCategories
      ? ([-0.5, panel.xCategories.length - 0.5] as [number, number])
      : padded(extent(xs));
    const sx = linearScale(xDom, [ox, ox + pw]);
    const sy = linearScale(padded(extent(ys.filter(Number.isFinite))), [oy + ph, oy]);
    const g: string[] = [];
    if (panel.title) g.push(panelTitle(panel.title, ox + pw / 2, oy - 10));
    for (const s of panel.series) {
      const pts: [number, number][] = [];
      for (let i = 0; i < s.x.length; i++) {
        const y = tf(s.y[i]!);
        if (Number.isFinite(y) && Number.isFinite(s.x[i]!)) pts.push([sx(s.x[i]!), sy(y)]);
      }
      if (s.band) {
        const hi: string[] = [];
        const lo: string[] = [];
        for (let i = 0; i < s.x.length; i++) {
          const a = tf(s.band.lo[i]!);
          const b = tf(s.band.hi[i]!);
          if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
          hi.push(`${sx(s.x[i]!).toFixed(2)},${sy(b).toFixed(2)}`);
          lo.unshift(`${sx(s.x[i]!).toFixed(2)},${sy(a).toFixed(2)}`);
        }
        if (hi.length > 1)
          g.push(
            path(`M${hi.join("L")}L${lo.join("L")}Z`, { class: "band", fill: s.color, "fill-opacity": 0.2 }),
          );
      }
      if (s.line !== false && pts.length > 1) {
        const d = `M${pts.map(([x, y]) => `${x.toFixed(2)},${y.toFixed(2)}`).join("L")}`;
        g.push(path(d, { class: "series", fill: "none", stroke: s.color, "stroke-width": 1.5 }));
      }
      if (s.marker)
        for (const [x, y] of pts) g.push(circle(x, y, s.marker, { class: "marker", fill: s.color }));
      if (s.pointLabels) {
        pts.forEach(([x, y], i) => {
          g.push(text(x, y - 6, s.pointLabels![i] ?? "", { size: 9, anchor: "start", rotate: -90 }));
        });
      }
    }
    g.push(frame(ox, oy, pw, ph));
    g.push(leftAxis(sy, ox, panel.logY && panel.yLabel ? `${panel.yLabel} (log10)` : panel.yLabel));
    if (panel.xCategories) {
      g.push(
        bottomLabels(
          panel.xCategories,
          panel.xCategories.map((_, i) => sx(i)),
          oy + ph,
        ),
      );
      if (panel.xLabel)
        g.push(text(ox + pw / 2, oy + ph + catBottom + 30, panel.xLabel, { size: 11, anchor: "middle" }));
    } else {
      g.push(bottomAxis(sx, oy + ph, panel.xLabel));
    }
    parts.push(group(g, { class: "panel" }));
  });
  let width = spec.panels.length * cellW + 8;
  if (spec.legend?.length) {
    const lg = categoryLegend(width, top, spec.legend, spec.legendTitle);
    parts.push(lg.svg);
    width += lg.width + 12;
  }
  const height = Math.max(top + ph + bottom, top + (spec.legend?.length ?? 0) * 14 + 30);
  return svgDocument({ width, height, children: parts, background: "#ffffff" });
}

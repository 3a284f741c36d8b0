/**
 * Legends: a vertical colour bar with ticks (matplotlib's colorbar), swatches of categories, and the
 * dot-size key of a dot plot. Each returns its markup with the size it takes, so a layout can place it.
 */
import { circle, group, rect, text } from "../svg.js";
import { colormapHex, normalizer } from "./colormaps.js";
import { formatTick, linearScale, niceTicks } from "./scale.js";
import { maxTextWidth, textWidth } from "./text-metrics.js";

/** Markup with the box it occupies. */
export interface Sized {
  readonly svg: string;
  readonly width: number;
  readonly height: number;
}

/** Steps a colour bar is drawn in (rectangles rather than a gradient, so PDF and PNG agree exactly). */
const BAR_STEPS = 64;

/** What a colour bar shows. */
export interface ColorbarSpec {
  cmap: string;
  vmin: number;
  vmax: number;
  /** Centre of a diverging map (TwoSlopeNorm). */
  center?: number | null;
  title?: string;
  /** Bar length in px. @default 120 */
  length?: number;
  /** Lay the bar out horizontally (scanpy's dot plot legend). */
  horizontal?: boolean;
}

/** A colour bar at (x, y) with ticks and an optional title above it. */
export function colorbar(x: number, y: number, spec: ColorbarSpec): Sized {
  const len = spec.length ?? 120;
  const thick = 12;
  const norm = normalizer(spec.vmin, spec.vmax, spec.center);
  const top = spec.title ? 16 : 0;
  const parts: string[] = [];
  if (spec.title) parts.push(text(x, y + 10, spec.title, { size: 10 }));
  const lo = Math.min(spec.vmin, spec.vmax);
  const hi = Math.max(spec.vmin, spec.vmax);
  const ticks = niceTicks(lo, hi, 4).filter((v) => v >= lo && v <= hi);
  if (spec.horizontal) {
    const s = linearScale([spec.vmin, spec.vmax], [x, x + len]);
    for (let i = 0; i < BAR_STEPS; i++) {
      const v = spec.vmin + ((i + 0.5) / BAR_STEPS) * (spec.vmax - spec.vmin);
      parts.push(
        rect(x + (i * len) / BAR_STEPS, y + top, len / BAR_STEPS + 0.3, thick, {
          fill: colormapHex(spec.cmap, norm(v)),
        }),
      );
    }
    parts.push(rect(x, y + top, len, thick, { fill: "none", stroke: "#000", "stroke-width": 0.6 }));
    for (const v of ticks)
      parts.push(
        text(s(v), y + top + thick + 3, formatTick(v), { size: 9, anchor: "middle", baseline: "hanging" }),
      );
    return {
      svg: group(parts, { class: "colorbar" }),
      width: Math.max(len, textWidth(spec.title ?? "", 10)),
      height: top + thick + 16,
    };
  }
  const s = linearScale([spec.vmin, spec.vmax], [y + top + len, y + top]);
  for (let i = 0; i < BAR_STEPS; i++) {
    const v = spec.vmin + ((i + 0.5) / BAR_STEPS) * (spec.vmax - spec.vmin);
    const y1 = y + top + len - ((i + 1) * len) / BAR_STEPS;
    parts.push(rect(x, y1, thick, len / BAR_STEPS + 0.3, { fill: colormapHex(spec.cmap, norm(v)) }));
  }
  parts.push(rect(x, y + top, thick, len, { fill: "none", stroke: "#000", "stroke-width": 0.6 }));
  for (const v of ticks)
    parts.push(text(x + thick + 3, s(v), formatTick(v), { size: 9, baseline: "middle" }));
  const labelW = maxTextWidth(ticks.map(formatTick), 9);
  return {
    svg: group(parts, { class: "colorbar" }),
    width: Math.max(thick + 3 + labelW, textWidth(spec.title ?? "", 10)),
    height: top + len,
  };
}

/** One category swatch. */
export interface LegendItem {
  label: string;
  color: string;
}

/** Category swatches in a column (scanpy's "right margin" legend), with an optional title. */
export function categoryLegend(x: number, y: number, items: readonly LegendItem[], title?: string): Sized {
  const row = 14;
  const top = title ? 16 : 0;
  const parts: string[] = [];
  if (title) parts.push(text(x, y + 10, title, { size: 10 }));
  items.forEach((it, i) => {
    const cy = y + top + i * row + row / 2;
    parts.push(circle(x + 5, cy, 4, { fill: it.color }));
    parts.push(text(x + 14, cy, it.label, { size: 10, baseline: "middle" }));
  });
  return {
    svg: group(parts, { class: "legend" }),
    width:
      14 +
      Math.max(
        maxTextWidth(
          items.map((i) => i.label),
          10,
        ),
        textWidth(title ?? "", 10) - 14,
      ),
    height: top + items.length * row,
  };
}

/** Dots of the size key of a dot plot: fraction labels with the radius each is drawn at. */
export function sizeLegend(
  x: number,
  y: number,
  dots: readonly { label: string; r: number }[],
  title: string,
): Sized {
  const top = 16;
  const parts: string[] = [text(x, y + 10, title, { size: 10 })];
  const maxR = Math.max(1, ...dots.map((d) => d.r));
  let cx = x + maxR;
  for (const d of dots) {
    parts.push(
      circle(cx, y + top + maxR, Math.max(d.r, 0.3), {
        fill: "#808080",
        stroke: "#000",
        "stroke-width": 0.4,
      }),
    );
    parts.push(text(cx, y + top + 2 * maxR + 4, d.label, { size: 9, anchor: "middle", baseline: "hanging" }));
    cx += 2 * maxR + 8;
  }
  return { svg: group(parts, { class: "size-legend" }), width: cx - x, height: top + 2 * maxR + 16 };
}

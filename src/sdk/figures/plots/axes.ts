/**
 * Axes of a plot panel: the frame (matplotlib's four spines), numeric ticks with labels on the left or
 * bottom, categorical tick labels, and axis titles.
 */
import { line, rect, text } from "../svg.js";
import { formatTick, type LinearScale, niceTicks } from "./scale.js";

/** Axis and tick colour, matplotlib's default black at 0.8 pt. */
const INK = "#000";
const TICK = 3.5;
/** Font size of tick labels. */
export const TICK_FONT = 10;
/** Font size of axis titles. */
export const LABEL_FONT = 11;

/** A panel's outline (the four spines). */
export function frame(x: number, y: number, w: number, h: number): string {
  return rect(x, y, w, h, { fill: "none", stroke: INK, "stroke-width": 0.8 });
}

/** Numeric ticks and labels left of `x` for a vertical scale, with an optional rotated title. */
export function leftAxis(scale: LinearScale, x: number, title?: string, ticks?: number[]): string {
  const [lo, hi] = scale.domain;
  const values = ticks ?? niceTicks(Math.min(lo, hi), Math.max(lo, hi), 5);
  const parts: string[] = [];
  for (const v of values) {
    const y = scale(v);
    parts.push(line(x - TICK, y, x, y, { stroke: INK, "stroke-width": 0.8 }));
    parts.push(text(x - TICK - 2, y, formatTick(v), { size: TICK_FONT, anchor: "end", baseline: "middle" }));
  }
  if (title) {
    const [r0, r1] = scale.range;
    const mid = (r0 + r1) / 2;
    const labelW = Math.max(0, ...values.map((v) => formatTick(v).length)) * TICK_FONT * 0.6;
    parts.push(text(x - TICK - labelW - 8, mid, title, { size: LABEL_FONT, anchor: "middle", rotate: -90 }));
  }
  return parts.join("");
}

/** Numeric ticks and labels below `y` for a horizontal scale, with an optional title. */
export function bottomAxis(scale: LinearScale, y: number, title?: string, ticks?: number[]): string {
  const [lo, hi] = scale.domain;
  const values = ticks ?? niceTicks(Math.min(lo, hi), Math.max(lo, hi), 5);
  const parts: string[] = [];
  for (const v of values) {
    const x = scale(v);
    parts.push(line(x, y, x, y + TICK, { stroke: INK, "stroke-width": 0.8 }));
    parts.push(
      text(x, y + TICK + 2, formatTick(v), { size: TICK_FONT, anchor: "middle", baseline: "hanging" }),
    );
  }
  if (title) {
    const [r0, r1] = scale.range;
    parts.push(text((r0 + r1) / 2, y + TICK + TICK_FONT + 18, title, { size: LABEL_FONT, anchor: "middle" }));
  }
  return parts.join("");
}

/** Category labels under `y` at the given x centres, rotated 90° (scanpy's gene labels) or level. */
export function bottomLabels(
  labels: readonly string[],
  xs: readonly number[],
  y: number,
  rotate = true,
): string {
  return labels
    .map((s, i) =>
      rotate
        ? text(xs[i]!, y + 4, s, { size: TICK_FONT, anchor: "end", baseline: "middle", rotate: -90 })
        : text(xs[i]!, y + 4, s, { size: TICK_FONT, anchor: "middle", baseline: "hanging" }),
    )
    .join("");
}

/** Category labels left of `x` at the given y centres, right-aligned. */
export function leftLabels(labels: readonly string[], ys: readonly number[], x: number): string {
  return labels
    .map((s, i) => text(x - 4, ys[i]!, s, { size: TICK_FONT, anchor: "end", baseline: "middle" }))
    .join("");
}

/** A title centred above a panel. */
export function panelTitle(title: string, cx: number, y: number): string {
  return text(cx, y, title, { size: 12, anchor: "middle" });
}

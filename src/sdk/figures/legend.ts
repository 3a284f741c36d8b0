/**
 * Legends and guides drawn as SVG: a colour bar for a numeric field, swatches for a categorical one,
 * and a scale bar in the data's units. Shared by snapshots and `pl` plots.
 *
 * Exports (stable): `colorBar`, `swatches`, `niceScaleLength`, `scaleBar`, `formatTick`, `LUT_STOPS`.
 */
import { el, group, num, rect, text } from "./svg.js";

/** Number of gradient stops a colour bar takes from a 256-entry LUT (every 16th entry plus the last). */
export const LUT_STOPS = 17;

/** A short label for a tick value (3 significant digits, exponent form beyond 1e±4). */
export function formatTick(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(1).replace("e+", "e");
  return String(Number(v.toPrecision(3)));
}

let gradientSerial = 0;

/** Options of `colorBar`. */
export interface ColorBarOptions {
  /** Top-left corner and size of the bar itself (labels go below it). */
  x: number;
  y: number;
  width: number;
  height: number;
  /** RGB-interleaved 256-entry LUT (the same the cells are coloured with). */
  lut: Uint8Array;
  min: number;
  max: number;
  /** Title above the bar. */
  title?: string;
  /** Label and title colour. @default "#000" */
  color?: string;
  /** Font size. @default 10 */
  fontSize?: number;
}

/**
 * A horizontal colour bar: a linear gradient through `LUT_STOPS` entries of the LUT, the title above,
 * min / middle / max below.
 */
export function colorBar(o: ColorBarOptions): string {
  const id = `cbar${++gradientSerial}`;
  const stops: string[] = [];
  for (let i = 0; i < LUT_STOPS; i++) {
    const k = Math.min(255, Math.round((i / (LUT_STOPS - 1)) * 255)) * 3;
    const c = `rgb(${o.lut[k]},${o.lut[k + 1]},${o.lut[k + 2]})`;
    stops.push(el("stop", { offset: num(i / (LUT_STOPS - 1)), "stop-color": c }));
  }
  const fs = o.fontSize ?? 10;
  const fill = o.color ?? "#000";
  const parts = [
    el("defs", {}, el("linearGradient", { id, x1: 0, y1: 0, x2: 1, y2: 0 }, stops)),
    rect(o.x, o.y, o.width, o.height, { fill: `url(#${id})`, stroke: fill, "stroke-width": 0.5 }),
  ];
  if (o.title) parts.push(text(o.x, o.y - fs * 0.4, o.title, { size: fs, fill, bold: true }));
  const ly = o.y + o.height + fs * 1.1;
  parts.push(text(o.x, ly, formatTick(o.min), { size: fs, fill }));
  if (o.max > o.min)
    parts.push(
      text(o.x + o.width / 2, ly, formatTick((o.min + o.max) / 2), { size: fs, fill, anchor: "middle" }),
    );
  parts.push(text(o.x + o.width, ly, formatTick(o.max), { size: fs, fill, anchor: "end" }));
  return group(parts, { class: "legend colorbar" });
}

/** One swatch of a categorical legend. */
export interface Swatch {
  label: string;
  /** CSS colour. */
  color: string;
}

/** Options of `swatches`. */
export interface SwatchOptions {
  x: number;
  y: number;
  items: readonly Swatch[];
  title?: string;
  color?: string;
  /** @default 10 */
  fontSize?: number;
  /** At most this many rows; the rest is summarised as "+ n more". @default 30 */
  maxRows?: number;
}

/** A column of coloured squares with labels (and a title above); returns the markup and its height. */
export function swatches(o: SwatchOptions): { svg: string; height: number; width: number } {
  const fs = o.fontSize ?? 10;
  const fill = o.color ?? "#000";
  const row = fs * 1.4;
  const maxRows = o.maxRows ?? 30;
  const parts: string[] = [];
  let y = o.y;
  let width = 0;
  if (o.title) {
    parts.push(text(o.x, y + fs, o.title, { size: fs, fill, bold: true }));
    y += row;
    width = o.title.length * fs * 0.62;
  }
  const shown = o.items.length > maxRows ? o.items.slice(0, maxRows - 1) : o.items;
  for (const s of shown) {
    parts.push(
      rect(o.x, y + (row - fs) / 2, fs, fs, { fill: s.color, stroke: "#0003", "stroke-width": 0.5 }),
    );
    parts.push(text(o.x + fs * 1.5, y + row / 2, s.label, { size: fs, fill, baseline: "middle" }));
    width = Math.max(width, fs * 1.5 + s.label.length * fs * 0.62);
    y += row;
  }
  if (shown.length < o.items.length) {
    parts.push(
      text(o.x, y + row / 2, `+ ${o.items.length - shown.length} more`, {
        size: fs,
        fill,
        baseline: "middle",
      }),
    );
    y += row;
  }
  return { svg: group(parts, { class: "legend swatches" }), height: y - o.y, width };
}

/**
 * The largest "nice" length (1, 2 or 5 × 10^k data units) not longer than `maxUnits`: what a scale
 * bar shows.
 */
export function niceScaleLength(maxUnits: number): number {
  if (!(maxUnits > 0) || !Number.isFinite(maxUnits))
    throw new RangeError(`scale bar span must be positive, got ${maxUnits}`);
  const p = 10 ** Math.floor(Math.log10(maxUnits));
  for (const m of [5, 2, 1]) if (m * p <= maxUnits * (1 + 1e-9)) return m * p;
  return p;
}

/** Options of `scaleBar`. */
export interface ScaleBarOptions {
  /** Right end of the bar and its baseline. */
  xRight: number;
  y: number;
  /** Output units (pt) per data unit. */
  unitsPerData: number;
  /** Longest bar allowed, in output units. */
  maxLength: number;
  /** The data's unit name ("µm", "px", …). */
  unit: string;
  color?: string;
  fontSize?: number;
}

/** A scale bar: a nice length in data units, drawn to scale, labelled; returns the markup and the bar's length. */
export function scaleBar(o: ScaleBarOptions): { svg: string; length: number; value: number } {
  const value = niceScaleLength(o.maxLength / o.unitsPerData);
  const length = value * o.unitsPerData;
  const fs = o.fontSize ?? 10;
  const fill = o.color ?? "#000";
  const x0 = o.xRight - length;
  const svg = group(
    [
      rect(x0, o.y - 2, length, 2, { fill }),
      text(x0 + length / 2, o.y - 5, `${formatTick(value)} ${o.unit}`, { size: fs, fill, anchor: "middle" }),
    ],
    { class: "scalebar", "data-length": num(length), "data-value": value },
  );
  return { svg, length, value };
}

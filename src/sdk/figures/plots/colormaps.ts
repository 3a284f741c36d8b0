/**
 * The continuous colour maps scanpy and squidpy plots use by default, as matplotlib draws them:
 * viridis (shared with the canvases, `src/sdk/display/encoding.ts`), Reds (dotplot), Blues
 * (stacked_violin), bwr and RdBu_r (diverging), Greys. matplotlib builds Reds/Blues/Greys/RdBu by linear
 * interpolation between ColorBrewer's 9 (or 11) anchor colours; bwr is blue → white → red.
 */
import { parseHexColor, toHexColor, VIRIDIS_LUT } from "../../display/encoding.js";

/** Names of the colour maps a plot's `cmap` / `color_map` may name. */
export const COLORMAP_NAMES = ["viridis", "Reds", "Blues", "Greys", "bwr", "RdBu_r", "magma"] as const;
/** A colour map name. */
export type ColormapName = (typeof COLORMAP_NAMES)[number];

const ANCHORS: Record<Exclude<ColormapName, "viridis">, readonly string[]> = {
  Reds: ["#fff5f0", "#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d", "#a50f15", "#67000d"],
  Blues: ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"],
  Greys: ["#ffffff", "#f0f0f0", "#d9d9d9", "#bdbdbd", "#969696", "#737373", "#525252", "#252525", "#000000"],
  bwr: ["#0000ff", "#ffffff", "#ff0000"],
  RdBu_r: [
    "#053061",
    "#2166ac",
    "#4393c3",
    "#92c5de",
    "#d1e5f0",
    "#f7f7f7",
    "#fddbc7",
    "#f4a582",
    "#d6604d",
    "#b2182b",
    "#67001f",
  ],
  magma: ["#000004", "#1c1044", "#4f127b", "#812581", "#b5367a", "#e55064", "#fb8761", "#fec287", "#fcfdbf"],
};

const LUTS = new Map<string, Uint8Array>([["viridis", VIRIDIS_LUT]]);

/** A 256-entry RGB lookup table interpolated linearly between evenly spaced anchors (matplotlib's from_list). */
function interpolatedLut(anchors: readonly string[]): Uint8Array {
  const rgb = anchors.map((h) => parseHexColor(h)!);
  const out = new Uint8Array(768);
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * (rgb.length - 1);
    const k = Math.min(Math.floor(x), rgb.length - 2);
    const f = x - k;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(rgb[k]![c]! * (1 - f) + rgb[k + 1]![c]! * f);
  }
  return out;
}

/** Whether `name` is a colour map plots know. */
export function isColormap(name: string): name is ColormapName {
  return (COLORMAP_NAMES as readonly string[]).includes(name);
}

/** The lookup table of colour map `name` (256 RGB triples); an unknown name is an error naming the known ones. */
export function colormapTable(name: string): Uint8Array {
  const hit = LUTS.get(name);
  if (hit) return hit;
  if (!isColormap(name) || name === "viridis")
    throw new Error(`unknown colour map "${name}" (known: ${COLORMAP_NAMES.join(", ")})`);
  const lut = interpolatedLut(ANCHORS[name]);
  LUTS.set(name, lut);
  return lut;
}

/**
 * The RGB of fraction `t` ∈ [0, 1] along colour map `name` (clamped; NaN gives the middle), indexed as
 * matplotlib's `Colormap.__call__` does: entry `floor(t · 256)`, the top one for t = 1.
 */
export function colormapRgb(name: string, t: number): [number, number, number] {
  const lut = colormapTable(name);
  const i = Number.isNaN(t) ? 128 : t <= 0 ? 0 : t >= 1 ? 255 : Math.min(255, Math.floor(t * 256));
  return [lut[i * 3]!, lut[i * 3 + 1]!, lut[i * 3 + 2]!];
}

/** The `#rrggbb` of fraction `t` along colour map `name`. */
export function colormapHex(name: string, t: number): string {
  return toHexColor(colormapRgb(name, t));
}

/**
 * A value → colour normalisation as matplotlib's `Normalize` (or `TwoSlopeNorm` when `center` is set):
 * `[vmin, vmax]` maps to [0, 1]; with a centre, each side is stretched to its half.
 */
export function normalizer(vmin: number, vmax: number, center?: number | null): (v: number) => number {
  if (center !== undefined && center !== null && vmin < center && center < vmax) {
    return (v) =>
      v < center ? 0.5 * ((v - vmin) / (center - vmin)) : 0.5 + 0.5 * ((v - center) / (vmax - center));
  }
  const span = vmax - vmin;
  return (v) => (span > 0 ? (v - vmin) / span : 0.5);
}

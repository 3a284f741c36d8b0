/**
 * Cell colours from a field and an encoding (client.md 5.5): viridis over min–max for numbers, the
 * categorical palette keyed by value (with per-category overrides) for categories, a neutral fill for
 * missing values and for columns with more than 100 categories, and the isolated category's
 * neighbours dimmed. The result feeds deck.gl as one RGBA attribute in the browser and the figure
 * renderer (`src/sdk/figures/`) on the server, and the legend as data: one module, so a snapshot
 * colours every cell exactly as the canvas does.
 */
import {
  categoryColors,
  colormapLut,
  ISOLATE_DIM_ALPHA,
  lutIndex,
  MAX_COLORED_CATEGORIES,
  NEUTRAL_COLOR,
  parseHexColor,
} from "./encoding.js";
import type { FieldData } from "./field-data.js";

/** What the legend shows. */
export type Legend =
  | { kind: "none"; title: string; note?: string }
  | { kind: "numeric"; title: string; min: number; max: number; colormap: string }
  | { kind: "categorical"; title: string; items: { value: string; color: string; count: number }[] };

/** Colours of every cell and the legend that explains them. */
export interface CellColors {
  /** RGBA per cell. */
  readonly rgba: Uint8Array;
  readonly legend: Legend;
}

/** Options of `cellColors`. */
export interface ColorOptions {
  /** Title of the legend (default: the field's name). */
  title?: string | null;
  colormap?: string;
  /** Category → `#rrggbb` overrides of this field. */
  overrides?: Readonly<Record<string, string>> | null;
  /** Category shown at full alpha (others dimmed). */
  isolated?: string | null;
}

/** The name a field path shows as (`obs:cell_type` → `cell_type`, `X:CD3E` → `CD3E`). */
export function fieldLabel(path: string | null | undefined): string {
  if (!path) return "";
  const i = path.lastIndexOf(":");
  return i >= 0 ? path.slice(i + 1) : path;
}

/** Colours of `n` cells from `field` (null: every cell neutral). */
export function cellColors(n: number, field: FieldData | null, opts: ColorOptions = {}): CellColors {
  const rgba = new Uint8Array(n * 4);
  const [nr, ng, nb] = NEUTRAL_COLOR;
  const title = opts.title ?? fieldLabel(field?.path);
  const fillNeutral = () => {
    for (let i = 0; i < n; i++) {
      const o = i * 4;
      rgba[o] = nr;
      rgba[o + 1] = ng;
      rgba[o + 2] = nb;
      rgba[o + 3] = 255;
    }
  };
  if (!field || field.kind === "components") {
    fillNeutral();
    return { rgba, legend: { kind: "none", title } };
  }
  if (field.kind === "numeric" && field.values) {
    const v = field.values;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < v.length; i++) {
      const x = v[i]!;
      if (x < min) min = x;
      if (x > max) max = x;
    }
    if (!Number.isFinite(min)) {
      min = 0;
      max = 0;
    }
    const lut = colormapLut(opts.colormap);
    const span = max - min;
    const scale = span > 0 ? 255.999 / span : 0;
    for (let i = 0; i < n; i++) {
      const x = v[i]!;
      const o = i * 4;
      if (Number.isNaN(x)) {
        rgba[o] = nr;
        rgba[o + 1] = ng;
        rgba[o + 2] = nb;
      } else {
        const k = (span > 0 ? Math.min(255, Math.max(0, Math.floor((x - min) * scale))) : 128) * 3;
        rgba[o] = lut[k]!;
        rgba[o + 1] = lut[k + 1]!;
        rgba[o + 2] = lut[k + 2]!;
      }
      rgba[o + 3] = 255;
    }
    return { rgba, legend: { kind: "numeric", title, min, max, colormap: opts.colormap ?? "viridis" } };
  }
  const codes = field.codes ?? new Int32Array(n).fill(-1);
  const cats = (field.categories ?? []).map((c) => String(c));
  const hex = categoryColors(field.categories ?? [], opts.overrides);
  if (!hex) {
    fillNeutral();
    return {
      rgba,
      legend: {
        kind: "none",
        title,
        note: `${cats.length} categories: more than ${MAX_COLORED_CATEGORIES}, not coloured`,
      },
    };
  }
  const table = new Uint8Array(cats.length * 3);
  hex.forEach((h, i) => {
    table.set(parseHexColor(h) ?? NEUTRAL_COLOR, i * 3);
  });
  const iso = opts.isolated != null ? cats.indexOf(String(opts.isolated)) : -1;
  const counts = new Int32Array(cats.length);
  for (let i = 0; i < n; i++) {
    const c = codes[i]!;
    const o = i * 4;
    if (c >= 0 && c < cats.length) {
      counts[c]!++;
      rgba[o] = table[c * 3]!;
      rgba[o + 1] = table[c * 3 + 1]!;
      rgba[o + 2] = table[c * 3 + 2]!;
      rgba[o + 3] = iso >= 0 && c !== iso ? ISOLATE_DIM_ALPHA : 255;
    } else {
      rgba[o] = nr;
      rgba[o + 1] = ng;
      rgba[o + 2] = nb;
      rgba[o + 3] = iso >= 0 ? ISOLATE_DIM_ALPHA : 255;
    }
  }
  return {
    rgba,
    legend: {
      kind: "categorical",
      title,
      items: cats.map((value, i) => ({ value, color: hex[i]!, count: counts[i]! })),
    },
  };
}

/** The CSS gradient of a colormap (for the legend's colour bar). */
export function colormapGradient(name?: string): string {
  const lut = colormapLut(name);
  const stops: string[] = [];
  for (let i = 0; i <= 8; i++) {
    const k = Math.min(255, Math.round((i / 8) * 255)) * 3;
    stops.push(`rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]}) ${(i / 8) * 100}%`);
  }
  return `linear-gradient(to right, ${stops.join(", ")})`;
}

export { lutIndex };

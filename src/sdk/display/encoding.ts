/**
 * Display encoding defaults and colour rules, shared by the browser canvases (`src/ui`) and the
 * server's figure renderer: one module, so a snapshot and the canvas colour the same cells the same
 * way (client.md 5.5 and 19.3). Pure data and small pure functions; no DOM, no Node.
 */

/** The spatial encoding fields that have defaults. */
export interface SpatialDefaults {
  point_size: number;
  opacity: number;
  colormap: string;
  legend_visible: boolean;
  legend_scale: number;
  lock_view: boolean;
  show_points: boolean;
  show_image: boolean;
  show_channel_legend: boolean;
  show_minimap: boolean;
  render_mode: "points" | "points+shapes" | "shapes";
  point_marker: "circle" | "square" | "hexagon";
  boundary_style: "filled" | "outline";
  boundary_line_width: number;
  invert_x: boolean;
  invert_y: boolean;
  background: "light" | "dark";
}

/** The embedding encoding fields that have defaults. */
export interface EmbeddingDefaults {
  x_component: number;
  y_component: number;
  z_component: number;
  is_3d: boolean;
  point_size: number;
  opacity: number;
  colormap: string;
  legend_visible: boolean;
  legend_scale: number;
  lock_view: boolean;
  background: "light" | "dark";
}

/** Defaults of a spatial canvas's encoding fields (client.md 19.3). */
export const SPATIAL_ENCODING_DEFAULTS: Readonly<SpatialDefaults> = {
  point_size: 4,
  opacity: 0.85,
  colormap: "viridis",
  legend_visible: true,
  legend_scale: 1,
  lock_view: false,
  show_points: true,
  show_image: true,
  show_channel_legend: true,
  show_minimap: true,
  render_mode: "points",
  point_marker: "circle",
  boundary_style: "filled",
  boundary_line_width: 1,
  invert_x: false,
  invert_y: false,
  background: "dark",
};

/** Defaults of an embedding canvas's encoding fields (client.md 19.3). */
export const EMBEDDING_ENCODING_DEFAULTS: Readonly<EmbeddingDefaults> = {
  x_component: 0,
  y_component: 1,
  z_component: 2,
  is_3d: false,
  point_size: 4,
  opacity: 0.85,
  colormap: "viridis",
  legend_visible: true,
  legend_scale: 1,
  lock_view: false,
  background: "dark",
};

/** A column with more categories than this is not coloured: cells get `NEUTRAL_COLOR`. */
export const MAX_COLORED_CATEGORIES = 100;

/** Alpha (0–255) of the cells outside an isolated category. */
export const ISOLATE_DIM_ALPHA = 30;

/** Fill of cells that are not coloured (missing values, too many categories, no colour field). */
export const NEUTRAL_COLOR: readonly [number, number, number] = [150, 150, 150];

/**
 * The 15-colour categorical palette (the 3×5 swatch grid), assigned over the sorted category values:
 * colours are keyed by value, so a recompute that keeps a value keeps its colour.
 */
export const CATEGORICAL_PALETTE = [
  "#1f77b4",
  "#ff7f0e",
  "#2ca02c",
  "#d62728",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#bcbd22",
  "#17becf",
  "#aec7e8",
  "#ffbb78",
  "#98df8a",
  "#ff9896",
  "#c5b0d5",
  "#f7b6d2",
] as const;

/** The 8-colour Set1 palette offered for image channels (client.md 5.6). */
export const CHANNEL_PALETTE = [
  "#e41a1c",
  "#377eb8",
  "#4daf4a",
  "#984ea3",
  "#ff7f00",
  "#ffff33",
  "#a65628",
  "#f781bf",
] as const;

/** Default colours of the first channels of a fluorescence image (blue nuclei, then green, red …). */
export const DEFAULT_CHANNEL_COLORS = [
  "#0000ff",
  "#00ff00",
  "#ff0000",
  "#ff00ff",
  "#00ffff",
  "#ffff00",
] as const;

/** At most this many image channels are visible at once. */
export const MAX_VISIBLE_CHANNELS = 6;

// matplotlib's viridis (CC0), 256 RGB entries as hex.
const VIRIDIS_HEX =
  "44015444025645045745055946075a46085c460a5d460b5e470d60470e6147106347116447136548146748166848176948186a481a6c481b6d481c6e481d6f481f70482071482173482374482475482576482677482878482979472a7a472c7a472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83443b84433d84433e85423f854240864241864142874144874045884046883f47883f48893e49893e4a893e4c8a3d4d8a3d4e8a3c4f8a3c508b3b518b3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d365c8d365d8d355e8d355f8d34608d34618d33628d33638d32648e32658e31668e31678e31688e30698e306a8e2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e2c728e2c738e2b748e2b758e2a768e2a778e2a788e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e26828e26828e25838e25848e25858e24868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d21918c20928c20928c20938c1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f881fa0881fa1881fa1871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad8128ae8029af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc743fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8645cc8635ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517cd2507fd34e81d34d84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39a2da37a5db36a8db34aadc32addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e020cae11fcde11dd0e11cd2e21bd5e21ad8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51befe51cf1e51df4e61ef6e620f8e621fbe723fde725";

/** The 256-entry viridis lookup table, RGB interleaved (768 bytes). */
export const VIRIDIS_LUT: Uint8Array = (() => {
  const out = new Uint8Array(768);
  for (let i = 0; i < 768; i++) out[i] = Number.parseInt(VIRIDIS_HEX.slice(i * 2, i * 2 + 2), 16);
  return out;
})();

/** The lookup table of a colormap name (only viridis today; any other name falls back to it). */
export function colormapLut(_name?: string | null): Uint8Array {
  return VIRIDIS_LUT;
}

/** The LUT index (0–255) of value `v` over `[min, max]` (the middle entry when min = max). */
export function lutIndex(v: number, min: number, max: number): number {
  if (!(max > min)) return 128;
  const t = (v - min) / (max - min);
  return t <= 0 ? 0 : t >= 1 ? 255 : Math.floor(t * 255.999);
}

/** `#rrggbb` → `[r, g, b]` (null when malformed). */
export function parseHexColor(hex: string): [number, number, number] | null {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) return null;
  const n = Number.parseInt(m[1]!, 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** `[r, g, b]` → `#rrggbb`. */
export function toHexColor(rgb: readonly number[]): string {
  return `#${rgb
    .slice(0, 3)
    .map((v) =>
      Math.max(0, Math.min(255, Math.round(v)))
        .toString(16)
        .padStart(2, "0"),
    )
    .join("")}`;
}

/** Orders category values the way colours are assigned: numbers numerically, then strings by code point. */
export function compareCategoryValues(a: unknown, b: unknown): number {
  const na = typeof a === "number";
  const nb = typeof b === "number";
  if (na && nb) return (a as number) - (b as number);
  if (na !== nb) return na ? -1 : 1;
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/**
 * The colour of every category (in the given code order) as `#rrggbb`: the override for its value
 * when there is one, else the palette colour of its rank among the sorted values. Null when the
 * column has more than `MAX_COLORED_CATEGORIES` categories (it is not coloured).
 */
export function categoryColors(
  categories: readonly unknown[],
  overrides?: Readonly<Record<string, string>> | null,
): string[] | null {
  if (categories.length > MAX_COLORED_CATEGORIES) return null;
  const order = categories
    .map((_, i) => i)
    .sort((i, j) => compareCategoryValues(categories[i], categories[j]));
  const out = new Array<string>(categories.length);
  order.forEach((code, rank) => {
    out[code] = CATEGORICAL_PALETTE[rank % CATEGORICAL_PALETTE.length]!;
  });
  if (overrides) {
    categories.forEach((c, i) => {
      const o = overrides[String(c)];
      if (o && parseHexColor(o)) out[i] = o.toLowerCase();
    });
  }
  return out;
}

/** Any encoding object with the defaults of its kind filled in where a field is absent (or null for a default). */
export function withSpatialDefaults<T extends object>(enc: T): T & SpatialDefaults {
  return { ...SPATIAL_ENCODING_DEFAULTS, ...stripUndefined(enc) } as T & SpatialDefaults;
}

/** The embedding encoding with its defaults filled in. */
export function withEmbeddingDefaults<T extends object>(enc: T): T & EmbeddingDefaults {
  return { ...EMBEDDING_ENCODING_DEFAULTS, ...stripUndefined(enc) } as T & EmbeddingDefaults;
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Minimum zoom (log2) of the cell boundary fetch gate: cells at least `minCellPx` px across. */
export function boundaryZoomGate(meanCellSpacing: number, minCellPx = BOUNDARY_MIN_CELL_PX): number {
  return Math.log2(minCellPx / Math.max(meanCellSpacing, 1e-9));
}

/** Cells must be about this many px across before viewport-clipped boundaries are fetched. */
export const BOUNDARY_MIN_CELL_PX = 6;
/** An element with at most this many polygons is fetched whole at any zoom. */
export const BOUNDARY_POLYGON_CAP = 20_000;

/** Canvas background colours of the `background` encoding field (the canvases and figures paint these). */
export const CANVAS_BACKGROUND: Readonly<Record<"light" | "dark", string>> = {
  light: "#f4f4f2",
  dark: "#0d0e11",
};

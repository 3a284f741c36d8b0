/**
 * The frame of a figure: how a display's viewport (`target`, `zoom`) over a canvas of
 * `width_px × height_px` CSS pixels maps world coordinates onto the page, exactly as the canvases'
 * deck.gl orthographic views do. One world unit is `2^zoom` CSS px; the spatial canvas has y down
 * (`flipY`) and applies `invert_x` / `invert_y` as a mirror around the origin (the persisted target is
 * un-mirrored world); the embedding canvas has y up.
 *
 * The page: one CSS px is 1/96 in, so the SVG/PDF page is `width_px · 0.75` pt and the PNG at `dpi`
 * is `width_px · dpi / 96` pixels. Inside the SVG everything is drawn in CSS px (a `viewBox`).
 */

/** A 2-D affine `[a, b, c, d, e, f]`: `x' = a·x + b·y + c`, `y' = d·x + e·y + f`. */
export type Affine6 = [number, number, number, number, number, number];

/** The mapping of one figure. */
export interface FigureFrame {
  /** Canvas size in CSS px. */
  readonly widthPx: number;
  readonly heightPx: number;
  /** Output resolution of the PNG. */
  readonly dpi: number;
  /** CSS px per world unit (`2^zoom`). */
  readonly scale: number;
  /** World → CSS px. */
  readonly worldToPx: Affine6;
  /** CSS px → world. */
  readonly pxToWorld: Affine6;
  /** `[minx, miny, maxx, maxy]` of the world window the canvas shows. */
  readonly worldWindow: [number, number, number, number];
  /** Output PNG pixel → world (what `view_display` callers use to place clicks). */
  readonly pngPixelToWorld: Affine6;
  /** PNG size in pixels. */
  readonly pngWidth: number;
  readonly pngHeight: number;
}

/** What a frame is made from. */
export interface FrameSpec {
  target: readonly number[];
  zoom: number;
  widthPx: number;
  heightPx: number;
  dpi: number;
  /** `spatial` (y down, mirrors) or `embedding` (y up). */
  kind: "spatial" | "embedding";
  invertX?: boolean;
  invertY?: boolean;
}

/** Applies an affine to a point. */
export function apply(m: Affine6, x: number, y: number): [number, number] {
  return [m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]];
}

/** `a ∘ b` (b first). */
export function compose(a: Affine6, b: Affine6): Affine6 {
  return [
    a[0] * b[0] + a[1] * b[3],
    a[0] * b[1] + a[1] * b[4],
    a[0] * b[2] + a[1] * b[5] + a[2],
    a[3] * b[0] + a[4] * b[3],
    a[3] * b[1] + a[4] * b[4],
    a[3] * b[2] + a[4] * b[5] + a[5],
  ];
}

/** The inverse affine; throws on a singular one. */
export function invertAffine(m: Affine6): Affine6 {
  const det = m[0] * m[4] - m[1] * m[3];
  if (!(Math.abs(det) > 1e-300)) throw new Error("singular transform");
  const a = m[4] / det;
  const b = -m[1] / det;
  const d = -m[3] / det;
  const e = m[0] / det;
  return [a, b, -(a * m[2] + b * m[5]), d, e, -(d * m[2] + e * m[5])];
}

/** The frame of a viewport. */
export function figureFrame(f: FrameSpec): FigureFrame {
  const scale = 2 ** f.zoom;
  const tx = f.target[0] ?? 0;
  const ty = f.target[1] ?? 0;
  const sx = f.kind === "spatial" && f.invertX ? -1 : 1;
  // spatial: y down on screen (flipY); embedding: y up
  const sy = f.kind === "spatial" ? (f.invertY ? -1 : 1) : -1;
  const worldToPx: Affine6 = [
    sx * scale,
    0,
    f.widthPx / 2 - sx * scale * tx,
    0,
    sy * scale,
    f.heightPx / 2 - sy * scale * ty,
  ];
  const pxToWorld = invertAffine(worldToPx);
  const c = [apply(pxToWorld, 0, 0), apply(pxToWorld, f.widthPx, f.heightPx)];
  const worldWindow: [number, number, number, number] = [
    Math.min(c[0]![0], c[1]![0]),
    Math.min(c[0]![1], c[1]![1]),
    Math.max(c[0]![0], c[1]![0]),
    Math.max(c[0]![1], c[1]![1]),
  ];
  const k = f.dpi / 96;
  return {
    widthPx: f.widthPx,
    heightPx: f.heightPx,
    dpi: f.dpi,
    scale,
    worldToPx,
    pxToWorld,
    worldWindow,
    pngPixelToWorld: compose(pxToWorld, [1 / k, 0, 0, 0, 1 / k, 0]),
    pngWidth: Math.round((f.widthPx * f.dpi) / 96),
    pngHeight: Math.round((f.heightPx * f.dpi) / 96),
  };
}

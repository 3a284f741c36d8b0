/**
 * Points drawn into a bitmap instead of as SVG circles when there are too many: above
 * `VECTOR_POINT_CAP` points a scatter is an embedded PNG (a PDF of 200,000 vector circles takes minutes
 * to write and a viewer seconds to open). Discs are splatted with source-over alpha blending in plot
 * order, at the figure's own pixel size times `scale` (the dpi factor), then encoded by sharp.
 */
import sharp from "sharp";

/** A marker's shape: a disc, an axis-aligned square, or squidpy's flat-topped hexagon (Visium spots). */
export type MarkerShape = "circle" | "square" | "hex";

/** √3, for the hexagon's edges. */
const SQRT3 = Math.sqrt(3);

/**
 * Whether offset (dx, dy) from a marker's centre is inside it: a disc of radius r, a square of half
 * side r, or the hexagon with vertices at (±r, 0) and (±r/2, ±r·√3/2) (squidpy's `_make_poly` with
 * six vertices: flat top and bottom).
 */
export function insideMarker(shape: MarkerShape, dx: number, dy: number, r: number): boolean {
  if (shape === "square") return Math.abs(dx) <= r && Math.abs(dy) <= r;
  if (shape === "hex") {
    const ax = Math.abs(dx);
    const ay = Math.abs(dy);
    return ay <= (r * SQRT3) / 2 && SQRT3 * ax + ay <= SQRT3 * r;
  }
  return dx * dx + dy * dy <= r * r;
}

/** The hexagon's six vertices around (cx, cy), circumradius r (see `insideMarker`). */
export function hexagonVertices(cx: number, cy: number, r: number): [number, number][] {
  return [0, 1, 2, 3, 4, 5].map((i) => {
    const a = (Math.PI / 6) * (1 + 2 * i);
    return [cx + r * Math.sin(a), cy + r * Math.cos(a)];
  });
}

/** Scatter plots with more points than this draw them as a raster. */
export const VECTOR_POINT_CAP = 20_000;

/** Points to rasterise, in pixel coordinates of the image (before `scale`). */
export interface RasterPoints {
  readonly width: number;
  readonly height: number;
  readonly x: ArrayLike<number>;
  readonly y: ArrayLike<number>;
  /** The order to draw in (later on top); all points in index order when absent. */
  readonly order?: ArrayLike<number>;
  /** RGB of point i. */
  readonly rgb: (i: number) => readonly [number, number, number];
  /** Disc radius in px (half the side of a square, the circumradius of a hexagon). */
  readonly radius: number;
  /** Marker shape (squidpy's `circle`, `square`, `hex`). @default "circle" */
  readonly shape?: MarkerShape;
  /** Opacity 0–1. @default 1 */
  readonly alpha?: number;
  /** Pixels per px (2 for a 144 dpi figure). @default 2 */
  readonly scale?: number;
}

/** The points as a transparent RGBA PNG of (width × scale) × (height × scale) pixels. */
export async function rasterPoints(p: RasterPoints): Promise<Uint8Array> {
  const s = p.scale ?? 2;
  const w = Math.max(1, Math.round(p.width * s));
  const h = Math.max(1, Math.round(p.height * s));
  const buf = new Uint8ClampedArray(w * h * 4);
  const r = Math.max(0.5, p.radius * s);
  const ri = Math.ceil(r);
  const shape = p.shape ?? "circle";
  const a = Math.max(0, Math.min(1, p.alpha ?? 1));
  const n = p.order ? p.order.length : p.x.length;
  for (let k = 0; k < n; k++) {
    const i = p.order ? p.order[k]! : k;
    const cx = p.x[i]! * s;
    const cy = p.y[i]! * s;
    if (!Number.isFinite(cx) || !Number.isFinite(cy)) continue;
    const [cr, cg, cb] = p.rgb(i);
    const x0 = Math.max(0, Math.floor(cx - ri));
    const x1 = Math.min(w - 1, Math.ceil(cx + ri));
    const y0 = Math.max(0, Math.floor(cy - ri));
    const y1 = Math.min(h - 1, Math.ceil(cy + ri));
    for (let y = y0; y <= y1; y++) {
      const dy = y + 0.5 - cy;
      for (let x = x0; x <= x1; x++) {
        const dx = x + 0.5 - cx;
        if (!insideMarker(shape, dx, dy, r)) continue;
        const o = (y * w + x) * 4;
        const da = buf[o + 3]! / 255;
        const oa = a + da * (1 - a);
        buf[o] = (cr * a + buf[o]! * da * (1 - a)) / oa;
        buf[o + 1] = (cg * a + buf[o + 1]! * da * (1 - a)) / oa;
        buf[o + 2] = (cb * a + buf[o + 2]! * da * (1 - a)) / oa;
        buf[o + 3] = oa * 255;
      }
    }
  }
  const png = await sharp(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength), {
    raw: { width: w, height: h, channels: 4 },
  })
    .png({ compressionLevel: 6 })
    .toBuffer();
  return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
}

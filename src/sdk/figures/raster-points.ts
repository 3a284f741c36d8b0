/**
 * Points drawn into an RGBA raster instead of as vector markers: above `POINT_VECTOR_CAP` cells in
 * view (client.md 14.2: 60,000), one `<circle>` per cell would make SVGs and PDFs of tens of MB that
 * take seconds to write and to open. The raster is made at the output resolution (the PNG's pixels),
 * so the PNG looks the same either way; in the PDF the layer is an embedded image.
 *
 * Compositing is source-over on straight (non-premultiplied) 8-bit RGBA, in draw order, as deck.gl
 * draws one layer without depth test.
 */
import sharp from "sharp";
import { insideMarker } from "./plots/points-raster.js";

/** The plots' name of the non-circle forms. */
const HEX_OR_SQUARE = { square: "square", hexagon: "hex" } as const;

/** Above this many cells in view the point layer is rasterised (client.md 14.2). */
export const POINT_VECTOR_CAP = 60_000;

/** An RGBA canvas of `width × height` pixels, transparent. */
export interface RgbaRaster {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

/** A transparent raster. */
export function newRaster(width: number, height: number): RgbaRaster {
  return { width, height, data: new Uint8Array(width * height * 4) };
}

/** The marker forms of a display's `point_marker`. */
export type PointMarker = "circle" | "square" | "hexagon";

/**
 * Draws a disc, a square (half side `radius`) or a flat-topped hexagon (circumradius `radius`, as
 * squidpy draws Visium spots: `insideMarker`) centred at (cx, cy), all in raster pixels, in colour (r, g, b) with alpha `a` (0–255). A pixel is covered when its centre is inside.
 * A marker smaller than a pixel covers the pixel its centre falls in.
 */
export function drawMarker(
  img: RgbaRaster,
  cx: number,
  cy: number,
  radius: number,
  cr: number,
  cg: number,
  cb: number,
  ca: number,
  shape: PointMarker = "circle",
): void {
  if (ca <= 0) return;
  const { width, height, data } = img;
  if (radius < 0.71) {
    const x = Math.floor(cx);
    const y = Math.floor(cy);
    if (x >= 0 && y >= 0 && x < width && y < height) blend(data, (y * width + x) * 4, cr, cg, cb, ca);
    return;
  }
  const x0 = Math.max(0, Math.ceil(cx - radius - 0.5));
  const x1 = Math.min(width - 1, Math.floor(cx + radius - 0.5));
  const y0 = Math.max(0, Math.ceil(cy - radius - 0.5));
  const y1 = Math.min(height - 1, Math.floor(cy + radius - 0.5));
  const r2 = radius * radius;
  for (let y = y0; y <= y1; y++) {
    const dy = y + 0.5 - cy;
    const row = y * width;
    for (let x = x0; x <= x1; x++) {
      const dx = x + 0.5 - cx;
      if (shape === "circle" ? dx * dx + dy * dy > r2 : !insideMarker(HEX_OR_SQUARE[shape], dx, dy, radius))
        continue;
      blend(data, (row + x) * 4, cr, cg, cb, ca);
    }
  }
}

/** Source-over of (r, g, b, a) onto the straight-alpha pixel at byte offset `o` of `d`. */
export function blend(d: Uint8Array, o: number, r: number, g: number, b: number, a: number): void {
  const da = d[o + 3]!;
  if (a >= 255 || da === 0) {
    d[o] = r;
    d[o + 1] = g;
    d[o + 2] = b;
    d[o + 3] = a;
    return;
  }
  const sa = a / 255;
  const dA = (da / 255) * (1 - sa);
  const oa = sa + dA;
  d[o] = (r * sa + d[o]! * dA) / oa + 0.5;
  d[o + 1] = (g * sa + d[o + 1]! * dA) / oa + 0.5;
  d[o + 2] = (b * sa + d[o + 2]! * dA) / oa + 0.5;
  d[o + 3] = oa * 255 + 0.5;
}

/** The raster as PNG bytes. */
export async function rasterToPng(img: RgbaRaster): Promise<Uint8Array> {
  const b = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: 4 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

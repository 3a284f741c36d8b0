/**
 * Polygons drawn into an RGBA raster (`raster-points.ts`'s canvas and blending): above
 * `POINT_VECTOR_CAP` boundaries in view, one `<path>` per cell would make SVGs and PDFs as heavy as
 * per-cell markers do, so they are filled here at the output resolution and embedded as one image.
 *
 * Filling is by scanline at pixel centres with the even-odd rule (as the vector paths' `evenodd`), so
 * holes stay empty; a pixel is covered when its centre is inside. Outlines are the rings' edges drawn
 * as runs of discs `width` pixels across.
 */
import { blend, drawMarker, type RgbaRaster } from "./raster-points.js";

/** Edge crossings of one scanline (reused between calls; grown as needed). */
let crossings = new Float64Array(256);

/**
 * Fills one feature: its rings are `pts[2·starts[r] … 2·starts[r+1])` as x, y pairs in raster pixels
 * (closed implicitly), in colour (r, g, b) with alpha `a` (0–255), even-odd.
 */
export function fillPolygon(
  img: RgbaRaster,
  pts: Float64Array,
  starts: readonly number[],
  cr: number,
  cg: number,
  cb: number,
  ca: number,
): void {
  if (ca <= 0) return;
  const nv = starts[starts.length - 1]!;
  if (nv < 3) return;
  let minY = Number.POSITIVE_INFINITY;
  let maxY = Number.NEGATIVE_INFINITY;
  for (let v = 0; v < nv; v++) {
    const y = pts[v * 2 + 1]!;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  const { width, height, data } = img;
  const y0 = Math.max(0, Math.ceil(minY - 0.5));
  const y1 = Math.min(height - 1, Math.floor(maxY - 0.5));
  if (crossings.length < nv) crossings = new Float64Array(nv * 2);
  for (let y = y0; y <= y1; y++) {
    const sy = y + 0.5;
    let nc = 0;
    for (let r = 0; r + 1 < starts.length; r++) {
      const a = starts[r]!;
      const b = starts[r + 1]!;
      for (let v = a; v < b; v++) {
        const w = v + 1 < b ? v + 1 : a;
        const ya = pts[v * 2 + 1]!;
        const yb = pts[w * 2 + 1]!;
        // half-open in y, so a vertex on the scanline counts once
        if (ya <= sy === yb <= sy) continue;
        const xa = pts[v * 2]!;
        const xb = pts[w * 2]!;
        crossings[nc++] = xa + ((sy - ya) / (yb - ya)) * (xb - xa);
      }
    }
    if (nc < 2) continue;
    const xsorted = crossings.subarray(0, nc).sort();
    const row = y * width;
    for (let c = 0; c + 1 < nc; c += 2) {
      const xa = Math.max(0, Math.ceil(xsorted[c]! - 0.5));
      const xb = Math.min(width - 1, Math.floor(xsorted[c + 1]! - 0.5));
      for (let x = xa; x <= xb; x++) blend(data, (row + x) * 4, cr, cg, cb, ca);
    }
  }
}

/**
 * Strokes the rings of one feature (as `fillPolygon` takes them) with lines `width` pixels wide: discs
 * every half pixel along each edge. Where discs overlap a translucent colour blends more than once,
 * so translucent outlines come out a little denser than the vector stroke.
 */
export function strokePolygon(
  img: RgbaRaster,
  pts: Float64Array,
  starts: readonly number[],
  width: number,
  cr: number,
  cg: number,
  cb: number,
  ca: number,
): void {
  if (ca <= 0) return;
  const radius = width / 2;
  for (let r = 0; r + 1 < starts.length; r++) {
    const a = starts[r]!;
    const b = starts[r + 1]!;
    for (let v = a; v < b; v++) {
      const w = v + 1 < b ? v + 1 : a;
      const xa = pts[v * 2]!;
      const ya = pts[v * 2 + 1]!;
      const dx = pts[w * 2]! - xa;
      const dy = pts[w * 2 + 1]! - ya;
      const steps = Math.max(1, Math.ceil(Math.hypot(dx, dy) * 2));
      for (let s = 0; s < steps; s++)
        drawMarker(img, xa + (dx * s) / steps, ya + (dy * s) / steps, radius, cr, cg, cb, ca);
    }
  }
}

/**
 * Polygon rasterisation into a label image: each pixel whose centre lies inside cell i's polygon
 * (even–odd rule) gets id `ids[i]`. Pixel (row r, column c) covers [c, c+1) × [r, r+1) in pixel
 * units, so its centre is (c + 0.5, r + 0.5), the convention of spatialdata's raster elements.
 */
import { allocArray } from "../data/arrays.js";

/**
 * Rasterise polygons given in world units into a `height × width` uint32 label image, with
 * `pixelSize` world units per pixel. Rings are read from `coords`/`ringOffsets` (one ring per cell,
 * closed). Returns the labels and each cell's pixel count.
 */
export function rasterizePolygons(
  coords: Float64Array,
  ringOffsets: Int32Array,
  ids: Int32Array,
  width: number,
  height: number,
  pixelSize: number,
): { labels: Uint32Array; pixelCount: Int32Array } {
  const labels = allocArray("uint32", width * height) as Uint32Array;
  const n = ringOffsets.length - 1;
  const pixelCount = new Int32Array(n);
  const xs: number[] = [];
  const inv = 1 / pixelSize;
  for (let i = 0; i < n; i++) {
    const v0 = ringOffsets[i]!;
    const v1 = ringOffsets[i + 1]! - 1; // last vertex repeats the first
    let minY = Number.POSITIVE_INFINITY;
    let maxY = Number.NEGATIVE_INFINITY;
    for (let v = v0; v < v1; v++) {
      const y = coords[2 * v + 1]! * inv;
      minY = Math.min(minY, y);
      maxY = Math.max(maxY, y);
    }
    const r0 = Math.max(0, Math.ceil(minY - 0.5));
    const r1 = Math.min(height - 1, Math.floor(maxY - 0.5));
    const id = ids[i]!;
    for (let r = r0; r <= r1; r++) {
      const yc = r + 0.5;
      xs.length = 0;
      for (let v = v0; v < v1; v++) {
        const ay = coords[2 * v + 1]! * inv;
        const by = coords[2 * v + 3]! * inv;
        // Half-open rule: an edge counts when yc is in [min, max), so shared vertices count once.
        if (ay <= yc !== by <= yc) {
          const ax = coords[2 * v]! * inv;
          const bx = coords[2 * v + 2]! * inv;
          xs.push(ax + ((yc - ay) * (bx - ax)) / (by - ay));
        }
      }
      if (xs.length < 2) continue;
      xs.sort((p, q) => p - q);
      const row = r * width;
      for (let k = 0; k + 1 < xs.length; k += 2) {
        // Columns whose centre c + 0.5 lies in [xa, xb).
        const c0 = Math.max(0, Math.ceil(xs[k]! - 0.5));
        const c1 = Math.min(width, Math.ceil(xs[k + 1]! - 0.5));
        for (let c = c0; c < c1; c++) labels[row + c] = id;
        if (c1 > c0) pixelCount[i]! += c1 - c0;
      }
    }
  }
  return { labels, pixelCount };
}

/**
 * Choosing points with polygons: which rows of an `n × 2` coordinate array (an obsm `spatial`, point
 * coordinates) fall inside any of a list of polygons drawn on the canvas. Each polygon is one ring
 * tested with the even-odd rule (a self-intersecting lasso keeps its crossings' "outside" parts out);
 * a point is chosen when it is inside at least one polygon. A ring may be given closed or open.
 *
 * Built for a million cells: coordinates are read straight from the typed array, each polygon is
 * checked only against points inside its bounding box, and the crossing test works on a flat
 * `Float64Array` of vertices with the edge slopes precomputed once per polygon.
 */
import { BadRequestError } from "../errors.js";
import { MAX_POLYGON_VERTICES, MAX_POLYGONS } from "../input-limits.js";

/** A polygon as the API carries it: a ring of `[x, y]` vertices (3 or more). */
export type PolygonRing = readonly (readonly number[])[];

/** One ring prepared for testing: vertices, per-edge slope, bounding box. */
interface PreparedRing {
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  /** (x_j - x_i) / (y_j - y_i) of edge i → j (0 for horizontal edges, which never cross). */
  readonly slope: Float64Array;
  readonly minX: number;
  readonly minY: number;
  readonly maxX: number;
  readonly maxY: number;
}

/**
 * Check the shape of a polygon list from a request: an array of at most MAX_POLYGONS rings, each of 3
 * to MAX_POLYGON_VERTICES vertices of two finite numbers. Throws a BadRequestError naming the first
 * problem (`polygons[2][5]`).
 */
export function validatePolygons(polygons: unknown, field = "polygons"): PolygonRing[] {
  if (!Array.isArray(polygons) || polygons.length === 0)
    throw new BadRequestError(`${field} must be a non-empty array of polygons`);
  if (polygons.length > MAX_POLYGONS)
    throw new BadRequestError(
      `${field} has ${polygons.length} polygons; at most ${MAX_POLYGONS} are accepted`,
    );
  polygons.forEach((ring, i) => {
    if (!Array.isArray(ring) || ring.length < 3)
      throw new BadRequestError(`${field}[${i}] must be a ring of at least 3 [x, y] vertices`);
    if (ring.length > MAX_POLYGON_VERTICES)
      throw new BadRequestError(
        `${field}[${i}] has ${ring.length} vertices; a polygon may have at most ${MAX_POLYGON_VERTICES}`,
      );
    ring.forEach((v, j) => {
      if (
        !Array.isArray(v) ||
        v.length !== 2 ||
        typeof v[0] !== "number" ||
        typeof v[1] !== "number" ||
        !Number.isFinite(v[0]) ||
        !Number.isFinite(v[1])
      )
        throw new BadRequestError(`${field}[${i}][${j}] must be [x, y] with two finite numbers`);
    });
  });
  return polygons as PolygonRing[];
}

function prepare(ring: PolygonRing): PreparedRing {
  let n = ring.length;
  // A closed ring repeats its first vertex; the crossing test closes rings itself.
  const first = ring[0]!;
  const last = ring[n - 1]!;
  if (n > 3 && first[0] === last[0] && first[1] === last[1]) n--;
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = ring[i]![0]!;
    const y = ring[i]![1]!;
    xs[i] = x;
    ys[i] = y;
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  const slope = new Float64Array(n);
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const dy = ys[j]! - ys[i]!;
    slope[i] = dy === 0 ? 0 : (xs[j]! - xs[i]!) / dy;
  }
  return { xs, ys, slope, minX, minY, maxX, maxY };
}

/** Even-odd test of one point against a prepared ring (edges i → i-1, half-open in y). */
function inside(r: PreparedRing, x: number, y: number): boolean {
  const { xs, ys, slope } = r;
  const n = xs.length;
  let c = false;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const yi = ys[i]!;
    const yj = ys[j]!;
    if (yi > y !== yj > y && x < xs[i]! + (y - yi) * slope[i]!) c = !c;
  }
  return c;
}

/**
 * Mark the points inside any polygon: `coords` holds `n` rows of `stride` values whose first two are
 * x and y (an obsm array, row-major). Returns a mask of `n` bytes (1 = inside). Points with a NaN
 * coordinate are never inside. An optional `map` moves each polygon vertex first (for example from
 * world coordinates into an element's own system).
 */
export function selectInPolygons(
  coords: ArrayLike<number>,
  n: number,
  polygons: readonly PolygonRing[],
  opts: { stride?: number; map?: (x: number, y: number) => [number, number] } = {},
): Uint8Array {
  const stride = opts.stride ?? 2;
  if (stride < 2) throw new Error(`selectInPolygons: stride ${stride} < 2`);
  if (coords.length < n * stride)
    throw new Error(`selectInPolygons: ${coords.length} values for ${n} rows of ${stride}`);
  const map = opts.map;
  const rings = polygons.map((ring) => prepare(map ? ring.map(([x, y]) => map(x!, y!)) : ring));
  const mask = new Uint8Array(n);
  for (const r of rings) {
    const { minX, minY, maxX, maxY } = r;
    for (let i = 0, o = 0; i < n; i++, o += stride) {
      if (mask[i]) continue;
      const x = coords[o]!;
      const y = coords[o + 1]!;
      // NaN fails every comparison, so it never passes the box test.
      if (!(x >= minX && x <= maxX && y >= minY && y <= maxY)) continue;
      if (inside(r, x, y)) mask[i] = 1;
    }
  }
  return mask;
}

/**
 * Choosing cells by their geometry: the rows of a table whose cell outline (a polygon of its shapes
 * element) or spot (a circle) intersects any of a list of polygons drawn on the canvas. This is how a
 * subset chooses cells (spatialdata's `polygon_query` keeps the shapes that intersect the query), while
 * inspecting and annotating a region choose by centroid (`polygon-select.ts`); agent-mcp.md states the
 * difference. A cell whose centroid is inside is always chosen too, so a subset keeps at least the
 * cells an inspection of the same polygons counted.
 *
 * Built for a million cells: outlines come from the cached, indexed canvas shapes (`shape-index.ts`);
 * only features whose bounding box meets a query polygon's are tested, and only those whose box also
 * meets one of the query's edges pay for an edge-crossing test (the query's edges are indexed too).
 */
import Flatbush from "flatbush";
import { columnValue } from "./dataframe.js";
import type { ShapesElement } from "./elements.js";
import { own } from "./own.js";
import type { PolygonRing } from "./polygon-select.js";
import { canvasShapes, cellRows } from "./shape-index.js";
import type { SpatialData } from "./spatialdata.js";
import { elementToCanvas, regionElement } from "./world-space.js";

/** A query polygon as flat vertex arrays (closed: the last edge joins the last vertex to the first). */
interface QueryRing {
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  readonly box: readonly [number, number, number, number];
  /** The ring's edges' bounding boxes (edge i joins vertex i to vertex i+1 mod n). */
  readonly edges: Flatbush;
}

function queryRing(ring: PolygonRing): QueryRing {
  let pts = ring;
  const last = ring[ring.length - 1]!;
  if (ring.length > 3 && last[0] === ring[0]![0] && last[1] === ring[0]![1]) pts = ring.slice(0, -1);
  const n = pts.length;
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    xs[i] = pts[i]![0]!;
    ys[i] = pts[i]![1]!;
    minX = Math.min(minX, xs[i]!);
    maxX = Math.max(maxX, xs[i]!);
    minY = Math.min(minY, ys[i]!);
    maxY = Math.max(maxY, ys[i]!);
  }
  const edges = new Flatbush(n);
  for (let i = 0; i < n; i++) {
    const j = (i + 1) % n;
    edges.add(
      Math.min(xs[i]!, xs[j]!),
      Math.min(ys[i]!, ys[j]!),
      Math.max(xs[i]!, xs[j]!),
      Math.max(ys[i]!, ys[j]!),
    );
  }
  edges.finish();
  return { xs, ys, box: [minX, minY, maxX, maxY], edges };
}

/** Even-odd point-in-ring test over the vertices [v0, v1) of a flat x,y array. */
function insideFlat(coords: Float64Array, v0: number, v1: number, x: number, y: number): boolean {
  let c = false;
  for (let i = v0, j = v1 - 1; i < v1; j = i++) {
    const xi = coords[2 * i]!;
    const yi = coords[2 * i + 1]!;
    const xj = coords[2 * j]!;
    const yj = coords[2 * j + 1]!;
    if (yi > y !== yj > y && x < xi + ((y - yi) * (xj - xi)) / (yj - yi)) c = !c;
  }
  return c;
}

function insideQuery(q: QueryRing, x: number, y: number): boolean {
  const { xs, ys } = q;
  let c = false;
  for (let i = 0, j = xs.length - 1; i < xs.length; j = i++) {
    const yi = ys[i]!;
    const yj = ys[j]!;
    if (yi > y !== yj > y && x < xs[i]! + ((y - yi) * (xs[j]! - xs[i]!)) / (yj - yi)) c = !c;
  }
  return c;
}

/** Orientation of the triangle (a, b, c): >0 counter-clockwise, <0 clockwise, 0 collinear. */
function orient(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): number {
  return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/** Whether closed segments p1p2 and p3p4 share a point (touching counts). */
function segmentsMeet(
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  x3: number,
  y3: number,
  x4: number,
  y4: number,
): boolean {
  const d1 = orient(x3, y3, x4, y4, x1, y1);
  const d2 = orient(x3, y3, x4, y4, x2, y2);
  const d3 = orient(x1, y1, x2, y2, x3, y3);
  const d4 = orient(x1, y1, x2, y2, x4, y4);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  const on = (px: number, py: number, ax: number, ay: number, bx: number, by: number) =>
    px >= Math.min(ax, bx) && px <= Math.max(ax, bx) && py >= Math.min(ay, by) && py <= Math.max(ay, by);
  return (
    (d1 === 0 && on(x1, y1, x3, y3, x4, y4)) ||
    (d2 === 0 && on(x2, y2, x3, y3, x4, y4)) ||
    (d3 === 0 && on(x3, y3, x1, y1, x2, y2)) ||
    (d4 === 0 && on(x4, y4, x1, y1, x2, y2))
  );
}

/** Squared distance from (px, py) to the segment a–b. */
function segmentDistance2(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const len2 = dx * dx + dy * dy;
  let t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const ex = ax + t * dx - px;
  const ey = ay + t * dy - py;
  return ex * ex + ey * ey;
}

/** Mark rows whose circle (centre, radius on the canvas) meets any query ring. */
function selectCircles(
  sd: SpatialData,
  tableName: string,
  el: ShapesElement,
  rings: QueryRing[],
  mask: Uint8Array,
): void {
  const t = own(sd.tables, tableName);
  const rows = cellRows(el, t);
  const m = elementToCanvas(sd, tableName, el);
  const [a, b, c] = m[0]!;
  const [d, e, f] = m[1]!;
  // A similarity or uniform scale keeps circles circles; the radius scales by sqrt|det|.
  const scale = Math.sqrt(Math.abs(a! * e! - b! * d!));
  const radius = own(el.frame.columns, "radius");
  const src = el.geometry.coords;
  for (let k = 0; k < rows.length; k++) {
    const row = rows[k]!;
    if (row < 0 || mask[row]) continue;
    const x0 = src[2 * k]!;
    const y0 = src[2 * k + 1]!;
    const x = a! * x0 + b! * y0 + c!;
    const y = d! * x0 + e! * y0 + f!;
    const rv = radius ? Number(columnValue(radius, k)) : 0;
    const r = Number.isFinite(rv) && rv > 0 ? rv * scale : 0;
    for (const q of rings) {
      const [minX, minY, maxX, maxY] = q.box;
      if (x < minX - r || x > maxX + r || y < minY - r || y > maxY + r) continue;
      if (insideQuery(q, x, y)) {
        mask[row] = 1;
        break;
      }
      if (r === 0) continue;
      const r2 = r * r;
      let hit = false;
      for (const i of q.edges.search(x - r, y - r, x + r, y + r)) {
        const j = (i + 1) % q.xs.length;
        if (segmentDistance2(x, y, q.xs[i]!, q.ys[i]!, q.xs[j]!, q.ys[j]!) <= r2) {
          hit = true;
          break;
        }
      }
      if (hit) {
        mask[row] = 1;
        break;
      }
    }
  }
}

/** Mark rows whose outline (polygon or multipolygon, holes included) meets any query ring. */
function selectOutlines(
  sd: SpatialData,
  tableName: string,
  el: ShapesElement,
  rings: QueryRing[],
  mask: Uint8Array,
): void {
  const s = canvasShapes(sd, tableName, el.name);
  if (!s.index) return;
  const { coords, geomOffsets, polygonOffsets, ringOffsets, cellIndex } = s;
  for (const q of rings) {
    const [qx0, qy0, qx1, qy1] = q.box;
    for (const feature of s.index.search(qx0, qy0, qx1, qy1)) {
      const row = cellIndex[feature]!;
      if (row < 0 || mask[row]) continue;
      // The feature's rings: [r0, r1) in ringOffsets (through polygonOffsets for a multipolygon).
      let r0 = geomOffsets[feature]!;
      let r1 = geomOffsets[feature + 1]!;
      if (polygonOffsets) {
        r0 = polygonOffsets[r0]!;
        r1 = polygonOffsets[r1]!;
      }
      const v0 = ringOffsets[r0]!;
      const v1 = ringOffsets[r1]!;
      if (v1 <= v0) continue;
      // 1. A vertex of the outline inside the query (the usual case: the cell is inside or across).
      let hit = false;
      for (let v = v0; v < v1 && !hit; v++) hit = insideQuery(q, coords[2 * v]!, coords[2 * v + 1]!);
      // 2. The query inside the outline (a small lasso within one cell): its first vertex in an
      //    outline ring by even-odd over the rings of the feature (holes count as outside).
      if (!hit) {
        let inside = false;
        for (let r = r0; r < r1; r++)
          if (insideFlat(coords, ringOffsets[r]!, ringOffsets[r + 1]!, q.xs[0]!, q.ys[0]!)) inside = !inside;
        hit = inside;
      }
      // 3. Edges crossing: only the query's edges near this outline's box are tried.
      if (!hit) {
        let minX = Infinity;
        let minY = Infinity;
        let maxX = -Infinity;
        let maxY = -Infinity;
        for (let v = v0; v < v1; v++) {
          minX = Math.min(minX, coords[2 * v]!);
          maxX = Math.max(maxX, coords[2 * v]!);
          minY = Math.min(minY, coords[2 * v + 1]!);
          maxY = Math.max(maxY, coords[2 * v + 1]!);
        }
        const near = q.edges.search(minX, minY, maxX, maxY);
        for (let r = r0; r < r1 && !hit && near.length > 0; r++) {
          const a0 = ringOffsets[r]!;
          const a1 = ringOffsets[r + 1]!;
          for (let v = a0; v < a1 && !hit; v++) {
            const w = v + 1 < a1 ? v + 1 : a0;
            for (const i of near) {
              const j = (i + 1) % q.xs.length;
              const x1 = coords[2 * v]!;
              const y1 = coords[2 * v + 1]!;
              const x2 = coords[2 * w]!;
              const y2 = coords[2 * w + 1]!;
              if (segmentsMeet(x1, y1, x2, y2, q.xs[i]!, q.ys[i]!, q.xs[j]!, q.ys[j]!)) {
                hit = true;
                break;
              }
            }
          }
        }
      }
      if (hit) mask[row] = 1;
    }
  }
}

/**
 * Mark, in `mask` (one byte per row of table `tableName`), the rows whose geometry in the table's
 * shapes element (the element the table annotates: polygons or circles, placed on the canvas like the
 * viewer places them) intersects any of `polygons` (canvas world space). Returns false, marking
 * nothing, when the table annotates no shapes element (then only centroids can be tested).
 */
export function markIntersecting(
  sd: SpatialData,
  tableName: string,
  polygons: readonly PolygonRing[],
  mask: Uint8Array,
): boolean {
  const region = regionElement(sd, tableName);
  if (!region || region.family !== "shapes") return false;
  const el = region.element as ShapesElement;
  const rings = polygons.map(queryRing);
  try {
    if (el.geometry.type === "point") selectCircles(sd, tableName, el, rings, mask);
    else selectOutlines(sd, tableName, el, rings, mask);
  } catch {
    // The element has no path onto the canvas (no transformation into the world system): the cells'
    // outlines cannot be placed, so only their centroids are tested.
    return false;
  }
  return true;
}

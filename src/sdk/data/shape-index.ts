/**
 * Cell-boundary polygons in canvas world space with a spatial index, for the service's GeoArrow
 * route: each polygon or multipolygon feature of a shapes element, moved by `elementToCanvas`,
 * rounded to 2 decimals (the spec's precision), with its bounding box in a flatbush index and the
 * row of the cell it outlines in the active table.
 *
 * Building is O(vertices) once; the result is cached per committed shapes element object, keyed by
 * the placement matrix and the table object, so an unchanged session reuses it and any commit that
 * replaces the element, moves it (a new points-to-global affine) or replaces the table rebuilds it.
 */
import Flatbush from "flatbush";
import { BadRequestError, NotFoundError } from "../errors.js";
import type { AffineMatrix } from "./affine.js";
import { type Column, columnValue, nRows } from "./dataframe.js";
import type { ShapesElement } from "./elements.js";
import { stringAt } from "./lazy-strings.js";
import { own } from "./own.js";
import { ANNOTATIONS_ELEMENT } from "./shape-annotations.js";
import type { SpatialData } from "./spatialdata.js";
import type { Table } from "./table.js";
import { elementToCanvas, regionNames } from "./world-space.js";

/** A shapes element placed on the canvas and indexed. */
export interface CanvasShapes {
  readonly type: "polygon" | "multipolygon";
  /** Interleaved x,y in canvas world space, rounded to 2 decimals. */
  readonly coords: Float64Array;
  /** Feature → first polygon (multipolygon) or first ring (polygon); n+1 entries. */
  readonly geomOffsets: Int32Array;
  /** Polygon → first ring (multipolygon only). */
  readonly polygonOffsets: Int32Array | null;
  /** Ring → first vertex. */
  readonly ringOffsets: Int32Array;
  /** Row of each feature's cell in the active table, -1 when none. */
  readonly cellIndex: Int32Array;
  /** Bounding boxes of the features (null for an element without features). */
  readonly index: Flatbush | null;
  readonly count: number;
}

interface CacheEntry {
  key: string;
  table: Table | undefined;
  value: CanvasShapes;
}
const cache = new WeakMap<ShapesElement, CacheEntry>();

const round2 = (v: number) => Math.round(v * 100) / 100;

/**
 * Row of each feature of `el` in table `t`: features are matched on their index label against the
 * table's instance key, among the rows whose region key names `el` (every row when the table
 * annotates one element). -1 when the table does not annotate `el` or has no such row.
 */
export function cellRows(el: ShapesElement, t: Table | undefined): Int32Array {
  const n = nRows(el.frame);
  const out = new Int32Array(n).fill(-1);
  const ann = t?.annotation;
  const regions = regionNames(t);
  if (!t || !ann || !regions.includes(el.name)) return out;
  const inst: Column | undefined = own(t.obs.columns, ann.instanceKey);
  const regionCol: Column | undefined = own(t.obs.columns, ann.regionKey);
  if (!inst) return out;
  const rows = new Map<string, number>();
  const nObs = nRows(t.obs);
  for (let i = 0; i < nObs; i++) {
    if (regions.length > 1 && (!regionCol || String(columnValue(regionCol, i)) !== el.name)) continue;
    const v = columnValue(inst, i);
    if (v !== null && !rows.has(String(v))) rows.set(String(v), i);
  }
  for (let f = 0; f < n; f++) {
    const r = rows.get(stringAt(el.frame.index, f) ?? "");
    if (r !== undefined) out[f] = r;
  }
  return out;
}

function build(el: ShapesElement, m: AffineMatrix, t: Table | undefined): CanvasShapes {
  const g = el.geometry;
  if (g.type === "point") throw new NotFoundError(`shapes element "${el.name}" holds circles, not polygons`);
  const [a, b, c] = m[0]!;
  const [d, e, f] = m[1]!;
  const src = g.coords;
  const coords = new Float64Array(src.length);
  for (let k = 0; k < src.length; k += 2) {
    const x = src[k]!;
    const y = src[k + 1]!;
    coords[k] = round2(a! * x + b! * y + c!);
    coords[k + 1] = round2(d! * x + e! * y + f!);
  }
  const geomOffsets = g.geomOffsets!;
  const ringOffsets = g.ringOffsets!;
  const polygonOffsets = g.type === "multipolygon" ? g.polygonOffsets! : null;
  const count = geomOffsets.length - 1;
  let index: Flatbush | null = null;
  if (count > 0) {
    index = new Flatbush(count);
    for (let i = 0; i < count; i++) {
      // Vertices of feature i: from its first ring's first vertex to its last ring's end.
      let r0 = geomOffsets[i]!;
      let r1 = geomOffsets[i + 1]!;
      if (polygonOffsets) {
        r0 = polygonOffsets[r0]!;
        r1 = polygonOffsets[r1]!;
      }
      const v0 = ringOffsets[r0]!;
      const v1 = ringOffsets[r1]!;
      let minX = Infinity;
      let minY = Infinity;
      let maxX = -Infinity;
      let maxY = -Infinity;
      for (let v = v0; v < v1; v++) {
        const x = coords[2 * v]!;
        const y = coords[2 * v + 1]!;
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
      // A feature without vertices sits at the origin (flatbush needs finite boxes).
      if (v1 <= v0) index.add(0, 0, 0, 0);
      else index.add(minX, minY, maxX, maxY);
    }
    index.finish();
  }
  return {
    type: g.type,
    coords,
    geomOffsets,
    polygonOffsets,
    ringOffsets,
    cellIndex: cellRows(el, t),
    index,
    count,
  };
}

/**
 * Shapes element `name` of `sd` on the canvas of table `tableName`, built or reused from the cache.
 * NotFoundError (404) when the element is absent, the annotations element, not polygonal, or has no
 * path into the world system.
 */
export function canvasShapes(sd: SpatialData, tableName: string | null, name: string): CanvasShapes {
  if (name === ANNOTATIONS_ELEMENT)
    throw new NotFoundError(`"${ANNOTATIONS_ELEMENT}" holds drawn annotations, not cell boundaries`);
  const el = own(sd.shapes, name);
  if (!el) {
    const have = Object.keys(sd.shapes).filter((n) => n !== ANNOTATIONS_ELEMENT);
    throw new NotFoundError(`no shapes element "${name}"${have.length ? ` (have: ${have.join(", ")})` : ""}`);
  }
  if (el.geometry.type === "point")
    throw new NotFoundError(`shapes element "${name}" holds circles, not polygons`);
  let m: AffineMatrix;
  try {
    m = elementToCanvas(sd, tableName, el);
  } catch (err) {
    throw new NotFoundError(
      `shapes element "${name}" has no transformation into the world coordinate system (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  const t = tableName ? own(sd.tables, tableName) : undefined;
  const key = m.flat().join(",");
  const hit = cache.get(el);
  if (hit && hit.key === key && hit.table === t) return hit.value;
  const value = build(el, m, t);
  cache.set(el, { key, table: t, value });
  return value;
}

/** A bbox `[minX, minY, maxX, maxY]` in canvas world space. */
export type BBox = readonly [number, number, number, number];

/** Parse `minx,miny,maxx,maxy` (4 finite numbers, min ≤ max), or throw a BadRequestError. */
export function parseBBox(text: string): BBox {
  const parts = text.split(",");
  const nums = parts.map((p) => (p.trim() === "" ? Number.NaN : Number(p)));
  if (nums.length !== 4 || nums.some((v) => !Number.isFinite(v)))
    throw new BadRequestError(`bbox must be minx,miny,maxx,maxy: four finite numbers (got "${text}")`);
  const [x0, y0, x1, y1] = nums as [number, number, number, number];
  if (x0 > x1 || y0 > y1) throw new BadRequestError(`bbox has min > max (got "${text}")`);
  return [x0, y0, x1, y1];
}

/**
 * Features whose bounding box intersects `bbox` (all features when bbox is null), ascending by
 * feature position in the element, the first `limit` of them when given.
 */
export function queryShapes(s: CanvasShapes, bbox: BBox | null, limit?: number): Int32Array {
  let ids: Int32Array;
  if (!s.index) ids = new Int32Array(0);
  else if (!bbox) {
    ids = new Int32Array(s.count);
    for (let i = 0; i < s.count; i++) ids[i] = i;
  } else ids = Int32Array.from(s.index.search(bbox[0], bbox[1], bbox[2], bbox[3])).sort();
  return limit !== undefined && ids.length > limit ? ids.subarray(0, limit) : ids;
}

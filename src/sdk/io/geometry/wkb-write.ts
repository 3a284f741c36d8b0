/**
 * Flat GeoArrow-style buffers → Well-Known Binary (ISO, little endian, 2-D), one value per feature.
 * All values are views into one buffer, sized exactly before writing.
 */
import type { Geometry } from "../../data/elements.js";

/** Number of features in a geometry. */
export function geometryCount(g: Geometry): number {
  if (g.type === "point") return g.coords.length / 2;
  if (!g.geomOffsets) throw new Error(`${g.type} geometry without geomOffsets`);
  return g.geomOffsets.length - 1;
}

/** Encode every feature of `g` as WKB (Point, Polygon or MultiPolygon). */
export function encodeWkbColumn(g: Geometry): Uint8Array[] {
  const n = geometryCount(g);
  const { coords } = g;
  if (g.type === "point") {
    const buf = new ArrayBuffer(21 * n);
    const view = new DataView(buf);
    const out: Uint8Array[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const o = 21 * i;
      view.setUint8(o, 1);
      view.setUint32(o + 1, 1, true);
      view.setFloat64(o + 5, coords[2 * i]!, true);
      view.setFloat64(o + 13, coords[2 * i + 1]!, true);
      out[i] = new Uint8Array(buf, o, 21);
    }
    return out;
  }
  const geom = g.geomOffsets!;
  const rings = g.ringOffsets;
  if (!rings) throw new Error(`${g.type} geometry without ringOffsets`);
  const polys = g.type === "multipolygon" ? g.polygonOffsets : undefined;
  if (g.type === "multipolygon" && !polys) throw new Error("multipolygon geometry without polygonOffsets");
  // Ring range of polygon p (multipolygon) or of feature p (polygon).
  const polyRings = (p: number): [number, number] =>
    polys ? [polys[p]!, polys[p + 1]!] : [geom[p]!, geom[p + 1]!];
  const polySize = (p: number): number => {
    const [r0, r1] = polyRings(p);
    let s = 9 + 4 * (r1 - r0);
    s += 16 * (rings[r1]! - rings[r0]!);
    return s;
  };
  const sizes = new Array<number>(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    let s: number;
    if (polys) {
      s = 9;
      for (let p = geom[i]!; p < geom[i + 1]!; p++) s += polySize(p);
    } else s = polySize(i);
    sizes[i] = s;
    total += s;
  }
  const buf = new ArrayBuffer(total);
  const view = new DataView(buf);
  let o = 0;
  const writePolygon = (p: number): void => {
    const [r0, r1] = polyRings(p);
    view.setUint8(o, 1);
    view.setUint32(o + 1, 3, true);
    view.setUint32(o + 5, r1 - r0, true);
    o += 9;
    for (let r = r0; r < r1; r++) {
      const v0 = rings[r]!;
      const v1 = rings[r + 1]!;
      view.setUint32(o, v1 - v0, true);
      o += 4;
      for (let v = v0; v < v1; v++) {
        view.setFloat64(o, coords[2 * v]!, true);
        view.setFloat64(o + 8, coords[2 * v + 1]!, true);
        o += 16;
      }
    }
  };
  const out: Uint8Array[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const start = o;
    if (polys) {
      view.setUint8(o, 1);
      view.setUint32(o + 1, 6, true);
      view.setUint32(o + 5, geom[i + 1]! - geom[i]!, true);
      o += 9;
      for (let p = geom[i]!; p < geom[i + 1]!; p++) writePolygon(p);
    } else writePolygon(i);
    out[i] = new Uint8Array(buf, start, sizes[i]!);
  }
  return out;
}

/** GeoParquet `geometry_types` name of a geometry type. */
export function geoParquetTypeName(g: Geometry): "Point" | "Polygon" | "MultiPolygon" {
  return g.type === "point" ? "Point" : g.type === "polygon" ? "Polygon" : "MultiPolygon";
}

/** Bounding box `[minx, miny, maxx, maxy]` of all coordinates (NaN skipped); `undefined` when empty. */
export function geometryBbox(g: Geometry): [number, number, number, number] | undefined {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  const c = g.coords;
  for (let i = 0; i + 1 < c.length; i += 2) {
    const x = c[i]!;
    const y = c[i + 1]!;
    if (Number.isNaN(x) || Number.isNaN(y)) continue;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  return x0 === Infinity ? undefined : [x0, y0, x1, y1];
}

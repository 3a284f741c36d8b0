/**
 * Well-Known Binary → flat GeoArrow-style buffers (`Geometry` of the data model).
 *
 * Two passes over the bytes: the first counts features, polygons, rings and vertices (and settles
 * the column's type), then every buffer is allocated once and the second pass fills it, so no JS
 * object is made per vertex. Handles both byte orders per geometry, ISO WKB Z/M/ZM type codes
 * (1000/2000/3000 offsets) and EWKB flags (Z 0x80000000, M 0x40000000, SRID 0x20000000); Z and M
 * values are dropped, x and y kept. A column mixing Polygon and MultiPolygon becomes multipolygon.
 */
import { allocArray } from "../../data/arrays.js";
import type { Geometry, GeometryType } from "../../data/elements.js";

/** WKB base type codes → names, for error messages. */
const TYPE_NAMES: Record<number, string> = {
  0: "Geometry",
  1: "Point",
  2: "LineString",
  3: "Polygon",
  4: "MultiPoint",
  5: "MultiLineString",
  6: "MultiPolygon",
  7: "GeometryCollection",
  8: "CircularString",
  9: "CompoundCurve",
  10: "CurvePolygon",
  11: "MultiCurve",
  12: "MultiSurface",
  13: "Curve",
  14: "Surface",
  15: "PolyhedralSurface",
  16: "TIN",
  17: "Triangle",
};

const POINT = 1;
const POLYGON = 3;
const MULTIPOLYGON = 6;

/** Name of a WKB base type code (`LineString`, …). */
export function wkbTypeName(code: number): string {
  return TYPE_NAMES[code] ?? `unknown WKB type ${code}`;
}

/** Read position inside one feature's bytes. */
interface Cursor {
  view: DataView;
  pos: number;
  /** Row of the feature (for messages). */
  row: number;
  where: string;
}

/** A parsed geometry header. */
interface Header {
  little: boolean;
  code: number;
  /** Number of ordinates per vertex (2, 3 or 4). */
  dims: number;
}

function need(c: Cursor, bytes: number): void {
  if (c.pos + bytes > c.view.byteLength) {
    throw new Error(
      `${c.where}: truncated WKB in row ${c.row} (needs ${bytes} more bytes at offset ${c.pos}, the value has ${c.view.byteLength})`,
    );
  }
}

function readU32(c: Cursor, little: boolean): number {
  need(c, 4);
  const v = c.view.getUint32(c.pos, little);
  c.pos += 4;
  return v;
}

function readHeader(c: Cursor): Header {
  need(c, 5);
  const order = c.view.getUint8(c.pos);
  if (order > 1)
    throw new Error(`${c.where}: invalid WKB byte order ${order} in row ${c.row} at offset ${c.pos}`);
  const little = order === 1;
  c.pos += 1;
  const raw = readU32(c, little);
  // EWKB (PostGIS) flags live in the high bits; ISO codes use thousands.
  const ewkbZ = (raw & 0x80000000) !== 0;
  const ewkbM = (raw & 0x40000000) !== 0;
  const ewkbSrid = (raw & 0x20000000) !== 0;
  const base = raw & 0x0fffffff;
  const iso = Math.floor(base / 1000);
  const code = base % 1000;
  if (iso > 3) throw new Error(`${c.where}: invalid WKB type code ${raw} in row ${c.row}`);
  const hasZ = ewkbZ || iso === 1 || iso === 3;
  const hasM = ewkbM || iso === 2 || iso === 3;
  if (ewkbSrid) {
    need(c, 4);
    c.pos += 4;
  }
  return { little, code, dims: 2 + (hasZ ? 1 : 0) + (hasM ? 1 : 0) };
}

function unsupported(c: Cursor, code: number, inside?: string): Error {
  const ctx = inside ? ` inside a ${inside}` : "";
  return new Error(
    `${c.where}: unsupported geometry type ${wkbTypeName(code)}${ctx} in row ${c.row} (supported: Point, Polygon, MultiPolygon)`,
  );
}

/** Totals of the counting pass. */
interface Counts {
  polys: number;
  rings: number;
  verts: number;
}

function countPolygonBody(c: Cursor, h: Header, n: Counts): void {
  const nRings = readU32(c, h.little);
  n.polys += 1;
  n.rings += nRings;
  for (let r = 0; r < nRings; r++) {
    const nv = readU32(c, h.little);
    const bytes = nv * h.dims * 8;
    need(c, bytes);
    c.pos += bytes;
    n.verts += nv;
  }
}

/** Decoded WKB of a whole column (`values[i] === null` is a missing geometry). */
export function decodeWkbColumn(values: readonly (Uint8Array | null | undefined)[], where = "WKB"): Geometry {
  const nFeat = values.length;
  const counts: Counts = { polys: 0, rings: 0, verts: 0 };
  let sawPoint = false;
  let sawPolygon = false;
  let sawMulti = false;
  const cursor: Cursor = { view: new DataView(new ArrayBuffer(0)), pos: 0, row: 0, where };
  const at = (i: number): Cursor | undefined => {
    const b = values[i];
    if (!b) return undefined;
    cursor.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    cursor.pos = 0;
    cursor.row = i;
    return cursor;
  };

  // Pass 1: type and sizes.
  for (let i = 0; i < nFeat; i++) {
    const c = at(i);
    if (!c) continue;
    const h = readHeader(c);
    if (h.code === POINT) {
      need(c, h.dims * 8);
      sawPoint = true;
    } else if (h.code === POLYGON) {
      sawPolygon = true;
      countPolygonBody(c, h, counts);
    } else if (h.code === MULTIPOLYGON) {
      sawMulti = true;
      const nPoly = readU32(c, h.little);
      for (let p = 0; p < nPoly; p++) {
        const ph = readHeader(c);
        if (ph.code !== POLYGON) throw unsupported(c, ph.code, "MultiPolygon");
        countPolygonBody(c, ph, counts);
      }
    } else {
      throw unsupported(c, h.code);
    }
  }
  if (sawPoint && (sawPolygon || sawMulti)) {
    throw new Error(
      `${where}: the column mixes Point and Polygon geometries, which one shapes element cannot hold`,
    );
  }
  const type: GeometryType = sawPoint
    ? "point"
    : sawMulti
      ? "multipolygon"
      : sawPolygon
        ? "polygon"
        : "polygon";

  if (type === "point") {
    const coords = allocArray("float64", nFeat * 2) as Float64Array;
    for (let i = 0; i < nFeat; i++) {
      const c = at(i);
      if (!c) {
        coords[2 * i] = Number.NaN;
        coords[2 * i + 1] = Number.NaN;
        continue;
      }
      const h = readHeader(c);
      coords[2 * i] = c.view.getFloat64(c.pos, h.little);
      coords[2 * i + 1] = c.view.getFloat64(c.pos + 8, h.little);
    }
    return { type, coords };
  }

  // Pass 2: fill once-allocated buffers.
  const coords = allocArray("float64", counts.verts * 2) as Float64Array;
  const ringOffsets = allocArray("int32", counts.rings + 1) as Int32Array;
  const geomOffsets = allocArray("int32", nFeat + 1) as Int32Array;
  const polygonOffsets =
    type === "multipolygon" ? (allocArray("int32", counts.polys + 1) as Int32Array) : undefined;
  let vert = 0;
  let ring = 0;
  let poly = 0;
  const fillPolygonBody = (c: Cursor, h: Header): void => {
    const nRings = readU32(c, h.little);
    for (let r = 0; r < nRings; r++) {
      const nv = readU32(c, h.little);
      const step = h.dims * 8;
      let p = c.pos;
      for (let v = 0; v < nv; v++) {
        coords[2 * vert] = c.view.getFloat64(p, h.little);
        coords[2 * vert + 1] = c.view.getFloat64(p + 8, h.little);
        vert++;
        p += step;
      }
      c.pos = p;
      ring++;
      ringOffsets[ring] = vert;
    }
    poly++;
    if (polygonOffsets) polygonOffsets[poly] = ring;
  };
  for (let i = 0; i < nFeat; i++) {
    const c = at(i);
    if (c) {
      const h = readHeader(c);
      if (h.code === POLYGON) fillPolygonBody(c, h);
      else {
        const nPoly = readU32(c, h.little);
        for (let p = 0; p < nPoly; p++) fillPolygonBody(c, readHeader(c));
      }
    }
    geomOffsets[i + 1] = type === "multipolygon" ? poly : ring;
  }
  return polygonOffsets
    ? { type, coords, geomOffsets, polygonOffsets, ringOffsets }
    : { type, coords, geomOffsets, ringOffsets };
}

/** Decode one WKB value (convenience for tests and single features). */
export function decodeWkb(bytes: Uint8Array, where = "WKB"): Geometry {
  return decodeWkbColumn([bytes], where);
}

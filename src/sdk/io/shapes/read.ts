/**
 * Read a SpatialData shapes element into flat geometry buffers plus a frame:
 * - formats 0.2 / 0.3: `shapes.parquet`, GeoParquet (1.0.0 from geopandas, or 0.1.0 from sfarrow)
 *   with WKB geometry; the pandas index becomes the frame index, a `radius` column makes circles;
 * - format 0.1 (spatialdata ≤ 0.0.15): zarr arrays `coords`, `offset0..N`, `Index` and, for circles,
 *   `radius`, with the geometry type in `spatialdata_attrs.geos`.
 */
import * as zarr from "zarrita";
import { allocArray, dense, dtypeOf, strings, type TypedArray } from "../../data/arrays.js";
import { type Column, dataFrame } from "../../data/dataframe.js";
import type { Geometry, GeometryType, ShapesElement } from "../../data/elements.js";
import { decodeWkbColumn } from "../geometry/wkb.js";
import { openParquetDataset, readDatasetFrame } from "../parquet/dataset.js";
import { type ByteStore, storeKey } from "../parquet/source.js";
import { parseElementTransformations, spatialdataAttrs } from "../points/element-attrs.js";

/** The parts of the GeoParquet `geo` metadata a reader needs. */
export interface GeoParquetInfo {
  /** `version` (1.x) or `schema_version` (0.1.0). */
  readonly version: string | undefined;
  readonly primaryColumn: string;
  readonly encoding: string;
  readonly geometryTypes: readonly string[];
}

/** Parse and check the `geo` key/value metadata of a GeoParquet file. */
export function parseGeoMetadata(raw: string | undefined, where: string): GeoParquetInfo {
  if (!raw) throw new Error(`${where}: not GeoParquet (no "geo" key/value metadata)`);
  let geo: {
    version?: unknown;
    schema_version?: unknown;
    primary_column?: unknown;
    columns?: Record<string, { encoding?: unknown; geometry_types?: unknown }>;
  };
  try {
    geo = JSON.parse(raw);
  } catch (err) {
    throw new Error(`${where}: invalid GeoParquet "geo" metadata (${(err as Error).message})`);
  }
  const primary = geo.primary_column;
  if (typeof primary !== "string") throw new Error(`${where}: GeoParquet metadata has no primary_column`);
  const col = geo.columns?.[primary];
  if (!col) throw new Error(`${where}: GeoParquet metadata does not describe column "${primary}"`);
  const encoding = typeof col.encoding === "string" ? col.encoding : "";
  if (encoding.toUpperCase() !== "WKB") {
    throw new Error(
      `${where}: GeoParquet column "${primary}" uses encoding "${encoding}"; only WKB is supported`,
    );
  }
  const version =
    typeof geo.version === "string"
      ? geo.version
      : typeof geo.schema_version === "string"
        ? geo.schema_version
        : undefined;
  const types = Array.isArray(col.geometry_types)
    ? col.geometry_types.filter((t): t is string => typeof t === "string")
    : [];
  return { version, primaryColumn: primary, encoding, geometryTypes: types };
}

/**
 * Read the shapes element at group `path` (`/shapes/cells`) whose group attrs are `attrs`.
 */
export async function readShapes(
  store: ByteStore,
  path: string,
  attrs: Readonly<Record<string, unknown>>,
  name: string,
): Promise<ShapesElement> {
  const where = storeKey(path);
  const sd = spatialdataAttrs(attrs);
  const transformations = parseElementTransformations(attrs, where);
  if (sd.version === "0.1" || sd.geos !== undefined) {
    const { geometry, frame } = await readShapesV01(store, path, sd);
    return { kind: "shapes", name, transformations, geometry, frame };
  }
  const { geometry, frame } = await readGeoParquet(store, storeKey(path, "shapes.parquet"));
  return { kind: "shapes", name, transformations, geometry, frame };
}

/**
 * Read a GeoParquet file (or dataset folder) at `key` with WKB geometry: the geometry plus a frame
 * of every other column, indexed by the pandas index (a `radius` column marks circles).
 */
export async function readGeoParquet(
  store: ByteStore,
  key: string,
): Promise<{ geometry: Geometry; frame: ShapesElement["frame"]; geo: GeoParquetInfo }> {
  const ds = await openParquetDataset(store, key, "file-first");
  const geo = parseGeoMetadata(ds.kv.geo, ds.key);
  const { frame, binary } = await readDatasetFrame(ds, { binaryColumns: [geo.primaryColumn] });
  const geometry = decodeWkbColumn(
    binary[geo.primaryColumn]!.values,
    `${ds.key} column "${geo.primaryColumn}"`,
  );
  return { geometry, frame, geo };
}

/** shapely GeometryType codes as format 0.1 stores them in `geos.type`. */
const SHAPELY_TYPES: Record<number, GeometryType | string> = {
  0: "point",
  1: "LineString",
  2: "LinearRing",
  3: "polygon",
  4: "MultiPoint",
  5: "MultiLineString",
  6: "multipolygon",
  7: "GeometryCollection",
};

/** The geometry type of a format 0.1 element, from `geos: {name, type}` (or `geometry_name/_type`). */
function v01Type(sd: Record<string, unknown>, where: string): GeometryType {
  const geos = sd.geos as Record<string, unknown> | undefined;
  if (!geos || typeof geos !== "object")
    throw new Error(`${where}: shapes format 0.1 without spatialdata_attrs.geos`);
  const code = geos.type ?? geos.geometry_type;
  const nameRaw = geos.name ?? geos.geometry_name;
  let t: string | undefined;
  if (typeof code === "number") t = SHAPELY_TYPES[code] ?? `type ${code}`;
  else if (typeof nameRaw === "string") t = nameRaw.toLowerCase();
  if (t === "point" || t === "polygon" || t === "multipolygon") return t;
  throw new Error(
    `${where}: unsupported shapes geometry ${String(t ?? JSON.stringify(geos))} (supported: Point, Polygon, MultiPolygon)`,
  );
}

async function readArray(
  store: ByteStore,
  path: string,
  name: string,
): Promise<{ data: unknown; shape: number[] }> {
  const loc = zarr.root(store).resolve(storeKey(path, name));
  let arr: zarr.Array<zarr.DataType, ByteStore>;
  try {
    arr = await zarr.open(loc, { kind: "array" });
  } catch (err) {
    throw new Error(`${storeKey(path, name)}: cannot open zarr array (${(err as Error).message})`);
  }
  const chunk = await zarr.get(arr);
  return { data: chunk.data, shape: [...chunk.shape] };
}

function toInt32(data: unknown, where: string): Int32Array {
  const src = data as ArrayLike<number | bigint>;
  const out = allocArray("int32", src.length) as Int32Array;
  for (let i = 0; i < src.length; i++) {
    const v = Number(src[i]);
    if (!Number.isInteger(v) || v < 0 || v > 0x7fffffff)
      throw new Error(`${where}: offset ${String(src[i])} at ${i} is not valid`);
    out[i] = v;
  }
  return out;
}

function checkOffsets(o: Int32Array, end: number, where: string): void {
  if (o.length === 0 || o[0] !== 0 || o[o.length - 1] !== end) {
    throw new Error(`${where}: offsets must start at 0 and end at ${end} (got ${o[0]}…${o[o.length - 1]})`);
  }
  for (let i = 1; i < o.length; i++)
    if (o[i]! < o[i - 1]!) throw new Error(`${where}: offsets decrease at ${i}`);
}

/** Read format 0.1 (zarr arrays). */
async function readShapesV01(
  store: ByteStore,
  path: string,
  sd: Record<string, unknown>,
): Promise<{ geometry: Geometry; frame: ShapesElement["frame"] }> {
  const where = storeKey(path);
  const type = v01Type(sd, where);
  const c = await readArray(store, path, "coords");
  if (c.shape.length !== 2 || c.shape[1]! < 2)
    throw new Error(`${where}/coords: expected shape (n, 2), got (${c.shape.join(", ")})`);
  const nVerts = c.shape[0]!;
  const dims = c.shape[1]!;
  const src = c.data as ArrayLike<number>;
  const coords = allocArray("float64", nVerts * 2) as Float64Array;
  for (let i = 0; i < nVerts; i++) {
    coords[2 * i] = Number(src[i * dims]);
    coords[2 * i + 1] = Number(src[i * dims + 1]);
  }
  const idx = await readArray(store, path, "Index");
  const indexValues = Array.from(idx.data as ArrayLike<unknown>, (v) =>
    v === null || v === undefined ? null : String(v),
  );
  const n = indexValues.length;
  const columns: Record<string, Column> = {};
  let geometry: Geometry;
  if (type === "point") {
    if (nVerts !== n) throw new Error(`${where}: ${nVerts} points but ${n} index labels`);
    geometry = { type, coords };
    const r = await readArray(store, path, "radius");
    const rd = r.data as TypedArray;
    if (rd.length !== n) throw new Error(`${where}/radius: ${rd.length} values for ${n} circles`);
    const shared = allocArray(dtypeOf(rd), n);
    (shared as unknown as { set(a: ArrayLike<unknown>): void }).set(rd as unknown as ArrayLike<unknown>);
    columns.radius = dense(shared);
  } else {
    const nOff = type === "polygon" ? 2 : 3;
    const offs: Int32Array[] = [];
    for (let i = 0; i < nOff; i++) {
      const o = await readArray(store, path, `offset${i}`);
      offs.push(toInt32(o.data, `${where}/offset${i}`));
    }
    const ringOffsets = offs[0]!;
    checkOffsets(ringOffsets, nVerts, `${where}/offset0`);
    const nRings = ringOffsets.length - 1;
    if (type === "polygon") {
      const geomOffsets = offs[1]!;
      checkOffsets(geomOffsets, nRings, `${where}/offset1`);
      if (geomOffsets.length - 1 !== n)
        throw new Error(`${where}: ${geomOffsets.length - 1} polygons but ${n} index labels`);
      geometry = { type, coords, geomOffsets, ringOffsets };
    } else {
      const polygonOffsets = offs[1]!;
      checkOffsets(polygonOffsets, nRings, `${where}/offset1`);
      const geomOffsets = offs[2]!;
      checkOffsets(geomOffsets, polygonOffsets.length - 1, `${where}/offset2`);
      if (geomOffsets.length - 1 !== n)
        throw new Error(`${where}: ${geomOffsets.length - 1} multipolygons but ${n} index labels`);
      geometry = { type, coords, geomOffsets, polygonOffsets, ringOffsets };
    }
  }
  return { geometry, frame: dataFrame(strings(indexValues), columns, "_index") };
}

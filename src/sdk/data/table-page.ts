/**
 * One page of a tabular part of a SpatialData object (`GET /table?path=&offset=&limit=`): a table's obs
 * or var frame, or the attribute frame of a shapes or points element, as JSON-safe rows for the data
 * inspector. Only the rows of the page are touched, so paging a million transcripts costs the page.
 *
 * Paths: `obs`, `var` (the active table), `tables:<name>:obs`, `tables:<name>:var`, `shapes:<name>`,
 * `points:<name>`. Columns are positional: `columns[i]` describes `row[i]` of every row.
 */

import { BadRequestError, NotFoundError } from "../errors.js";
import { numberAt, type TypedArray } from "./arrays.js";
import { type Column, columnValue, type DataFrame, nRows } from "./dataframe.js";
import type { ShapesElement } from "./elements.js";
import { stringAt } from "./lazy-strings.js";
import { own } from "./own.js";
import type { SpatialData } from "./spatialdata.js";

/** Default page length. */
export const TABLE_PAGE_DEFAULT_LIMIT = 100;
/** Largest page length; a larger `limit` is capped to it (the answer's `limit` says so). */
export const TABLE_PAGE_MAX_LIMIT = 1000;

/** A JSON-safe cell value. */
export type CellValue = string | number | boolean | null;

/** A page of rows (the spec's "Table page"). */
export interface TablePage {
  total_rows: number;
  offset: number;
  /** The page length applied (the request's, capped to `TABLE_PAGE_MAX_LIMIT`). */
  limit: number;
  /** Name of the frame's index (`_index`, `cell_id` …). */
  index_name: string;
  /** Row labels of the page. */
  index: (string | null)[];
  columns: { name: string; dtype: string }[];
  /** One array per row, positional with `columns`. */
  rows: CellValue[][];
}

/** What a table path names. */
type Target = { frame: DataFrame; shapes?: ShapesElement };

/** Pandas-style names of nullable dtypes. */
const NULLABLE_NAMES: Record<string, string> = {
  bool: "boolean",
  int8: "Int8",
  int16: "Int16",
  int32: "Int32",
  int64: "Int64",
  uint8: "UInt8",
  uint16: "UInt16",
  uint32: "UInt32",
  uint64: "UInt64",
  float32: "Float32",
  float64: "Float64",
};

/** The dtype a column is listed with: numpy names, `string`, `category`, pandas nullable names. */
export function columnDtype(col: Column): string {
  switch (col.kind) {
    case "dense":
      return col.dtype;
    case "string":
      return "string";
    case "categorical":
      return "category";
    case "nullable":
      return NULLABLE_NAMES[col.dtype] ?? col.dtype;
  }
}

/** A value made JSON-safe: NaN → null, ±Infinity → "Infinity"/"-Infinity", bigint → number or string. */
export function jsonSafe(v: string | number | boolean | bigint | null): CellValue {
  if (typeof v === "bigint")
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : String(v);
  if (typeof v === "number") {
    if (Number.isNaN(v)) return null;
    if (!Number.isFinite(v)) return String(v);
  }
  return v;
}

/** Resolve a table path to its frame (400 for a malformed path, 404 for a missing table or element). */
function resolveTarget(sd: SpatialData, active: string | null, path: string): Target {
  const table = (name: string | null, slot: "obs" | "var"): Target => {
    if (name === null) throw new NotFoundError("the session has no table");
    const t = own(sd.tables, name);
    if (!t) throw new NotFoundError(`no table "${name}"`);
    return { frame: t[slot] };
  };
  if (path === "obs" || path === "var") return table(active, path);
  const m = /^tables:(.+):(obs|var)$/s.exec(path);
  if (m) return table(m[1]!, m[2] as "obs" | "var");
  const e = /^(shapes|points):(.+)$/s.exec(path);
  if (e) {
    const name = e[2]!;
    if (e[1] === "shapes") {
      const el = own(sd.shapes, name);
      if (!el) throw new NotFoundError(`no shapes element "${name}"`);
      return { frame: el.frame, shapes: el };
    }
    const el = own(sd.points, name);
    if (!el) throw new NotFoundError(`no points element "${name}"`);
    return { frame: el.frame };
  }
  throw new BadRequestError(
    `invalid table path ${JSON.stringify(path)}: expected obs, var, tables:<name>:obs, tables:<name>:var, shapes:<name> or points:<name>`,
  );
}

/**
 * Largest feature (in vertices) written out as WKT; a bigger one is summarised in a few words
 * (`POLYGON (1 rings, 40000 vertices)`), so a page of 50 rows stays small whatever the shapes hold.
 */
export const WKT_MAX_VERTICES = 1000;

/** A coordinate as WKT text (at most 3 decimals: enough for a micrometre grid, short to read). */
function coord(v: number): string {
  return String(Math.round(v * 1000) / 1000);
}

/** The WKT of rings `[first, end)`: `(x y, x y, …), (…)`. */
function ringsWkt(coords: ArrayLike<number>, ro: TypedArray, first: number, end: number): string {
  const rings: string[] = [];
  for (let r = first; r < end; r++) {
    const pts: string[] = [];
    for (let v = numberAt(ro, r); v < numberAt(ro, r + 1); v++)
      pts.push(`${coord(coords[2 * v]!)} ${coord(coords[2 * v + 1]!)}`);
    rings.push(`(${pts.join(", ")})`);
  }
  return rings.join(", ");
}

/**
 * A shapes feature's geometry as WKT (`POINT (x y)` for circles, `POLYGON ((…))`,
 * `MULTIPOLYGON (((…)), ((…)))`), or a summary in a few words past `WKT_MAX_VERTICES`.
 */
function geometryText(s: ShapesElement, i: number): string {
  const g = s.geometry;
  if (g.type === "point") return `POINT (${coord(g.coords[2 * i]!)} ${coord(g.coords[2 * i + 1]!)})`;
  const go = g.geomOffsets!;
  const ro = g.ringOffsets!;
  let firstRing = numberAt(go, i);
  let endRing = numberAt(go, i + 1);
  let parts = 1;
  const po = g.polygonOffsets;
  if (g.type === "multipolygon") {
    parts = endRing - firstRing;
    firstRing = numberAt(po!, numberAt(go, i));
    endRing = numberAt(po!, numberAt(go, i + 1));
  }
  const vertices = numberAt(ro, endRing) - numberAt(ro, firstRing);
  const rings = endRing - firstRing;
  if (vertices > WKT_MAX_VERTICES)
    return g.type === "multipolygon"
      ? `MULTIPOLYGON (${parts} polygons, ${rings} rings, ${vertices} vertices)`
      : `POLYGON (${rings} rings, ${vertices} vertices)`;
  if (g.type !== "multipolygon") return `POLYGON (${ringsWkt(g.coords, ro, firstRing, endRing)})`;
  const polys: string[] = [];
  for (let p = numberAt(go, i); p < numberAt(go, i + 1); p++)
    polys.push(`(${ringsWkt(g.coords, ro, numberAt(po!, p), numberAt(po!, p + 1))})`);
  return `MULTIPOLYGON (${polys.join(", ")})`;
}

/**
 * One page of the frame `path` names (see the module comment). `offset` past the end gives no rows;
 * `limit` is capped to `TABLE_PAGE_MAX_LIMIT`. A shapes element adds a last `geometry` column (dtype
 * `geometry`) with each feature as WKT.
 */
export function tablePage(
  sd: SpatialData,
  active: string | null,
  path: string,
  offset = 0,
  limit = TABLE_PAGE_DEFAULT_LIMIT,
): TablePage {
  if (!Number.isInteger(offset) || offset < 0)
    throw new BadRequestError(`offset must be an integer >= 0, got ${offset}`);
  if (!Number.isInteger(limit) || limit < 0)
    throw new BadRequestError(`limit must be an integer >= 0, got ${limit}`);
  const { frame, shapes } = resolveTarget(sd, active, path);
  const applied = Math.min(limit, TABLE_PAGE_MAX_LIMIT);
  const total = nRows(frame);
  const start = Math.min(offset, total);
  const end = Math.min(total, start + applied);
  const cols = frame.columnOrder.map((name) => ({ name, col: frame.columns[name]! }));
  const rows: CellValue[][] = [];
  for (let i = start; i < end; i++) {
    const row = cols.map(({ col }) => jsonSafe(columnValue(col, i)));
    if (shapes) row.push(geometryText(shapes, i));
    rows.push(row);
  }
  const columns = cols.map(({ name, col }) => ({ name, dtype: columnDtype(col) }));
  if (shapes) columns.push({ name: "geometry", dtype: "geometry" });
  return {
    total_rows: total,
    offset,
    limit: applied,
    index_name: frame.indexName,
    index: Array.from({ length: end - start }, (_, k) => stringAt(frame.index, start + k)),
    columns,
    rows,
  };
}

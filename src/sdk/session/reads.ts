/**
 * What a client reads off a session's committed object, one function a read, each behind the
 * readiness gate (409 while loading or after a failed load) and each deciding where its answer comes
 * from: the HTTP routes, the MCP tools and scripts call these and only serialise the result. A field's
 * gene comes from the checkpoint's column-major mirror when the session has a current one, else from
 * X: the session decides that (`Session.geneValues`), no adapter passes a reader down.
 */
import type { Table as ArrowTable } from "apache-arrow";
import { type ElementInventory, elementInventory } from "../data/element-inventory.js";
import { obsValueCounts, type ValueCount } from "../data/obs-values.js";
import { readPointsTransform } from "../data/points-transform.js";
import { canvasShapes, parseBBox, queryShapes } from "../data/shape-index.js";
import type { Table } from "../data/table.js";
import { TABLE_PAGE_DEFAULT_LIMIT, type TablePage, tablePage } from "../data/table-page.js";
import { searchVarNames, VAR_SEARCH_DEFAULT_LIMIT, VAR_SEARCH_MAX_LIMIT } from "../data/var-search.js";
import { BadRequestError, NotFoundError } from "../errors.js";
import { fieldBatch } from "../io/arrow/field-batch.js";
import { geoArrowTable } from "../io/arrow/geoarrow.js";
import { requireReady } from "./readiness.js";
import type { Session } from "./session.js";

/** Defaults and bounds of the reads, for adapters that declare them in their own schemas. */
export { TABLE_PAGE_DEFAULT_LIMIT, VAR_SEARCH_DEFAULT_LIMIT, VAR_SEARCH_MAX_LIMIT };

/** The active table of a ready session (404 when the object has none). */
function activeTable(s: Session, what: string): Table {
  requireReady(s, what);
  const t = s.activeTable ? s.data.tables[s.activeTable] : undefined;
  if (!t) throw new NotFoundError(`session ${s.id} has no table`);
  return t;
}

/** The values of obs column `column` of the active table with their counts. */
export function obsValues(s: Session, column: string): ValueCount[] {
  return obsValueCounts(activeTable(s, "obs values"), column);
}

/** Gene (var) names of the active table matching `q`, at most `limit` of them. */
export function varNames(s: Session, q = "", limit = VAR_SEARCH_DEFAULT_LIMIT): string[] {
  return searchVarNames(activeTable(s, "var names").var.index, q, limit);
}

/** The session's elements and tables; `sizes` adds their sizes. */
export function elements(s: Session, opts: { sizes?: boolean } = {}): ElementInventory {
  requireReady(s, "elements");
  return elementInventory(s.data, s.activeTable, opts);
}

/** One page of the frame a field path names (`obs`, `var`, `tables:<t>:obs`, `shapes:<name>` …). */
export function tableRows(s: Session, path: string, offset = 0, limit = TABLE_PAGE_DEFAULT_LIMIT): TablePage {
  requireReady(s, "tables");
  return tablePage(s.data, s.activeTable, path, offset, limit);
}

/**
 * One field as an Arrow table (docs/api/data.md): `X:<gene>` from the checkpoint's mirror when it is
 * current, else from X.
 */
export function fieldArrow(s: Session, path: string): Promise<ArrowTable> {
  requireReady(s, "its data");
  return fieldBatch(s.data, path, {
    activeTable: s.activeTable,
    geneReader: (table, gene) => s.geneValues(table, gene),
  });
}

/** A limit given as text (a query string), or undefined; 400 unless a non-negative integer. */
function parseLimit(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(Number(text)))
    throw new BadRequestError(`limit must be a non-negative integer (got "${text}")`);
  return Number(text);
}

/**
 * The cell-boundary polygons of shapes element `element` in canvas world space as a GeoArrow table,
 * those whose box meets `bbox` (`minx,miny,maxx,maxy`, all when absent), the first `limit` of them.
 */
export function shapesArrow(
  s: Session,
  element: string,
  opts: { bbox?: string | undefined; limit?: string | number | undefined } = {},
): ArrowTable {
  requireReady(s, "its shapes");
  const box = opts.bbox === undefined ? null : parseBBox(String(opts.bbox));
  const n = parseLimit(opts.limit === undefined ? undefined : String(opts.limit));
  const shapes = canvasShapes(s.data, s.activeTable, element);
  return geoArrowTable(shapes, queryShapes(shapes, box, n));
}

/** The points-to-global affine of the active table's region element. */
export function pointsTransform(s: Session): ReturnType<typeof readPointsTransform> {
  requireReady(s, "the points transform");
  return readPointsTransform(s.data, s.activeTable);
}

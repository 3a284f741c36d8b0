/**
 * One page of a dataframe kept in a table's `uns` (`uns:<path>` of the active table,
 * `tables:<name>:uns:<path>`), in the shape of the table page (`TablePage`): what an agent reads of
 * results such as `rank_genes_groups/names` or `rank_genes_groups/scores` (one column per group, one
 * row per rank). A path naming a dict is a 400 that lists the dict's keys, so the tree can be walked.
 */
import { BadRequestError, NotFoundError } from "../errors.js";
import { columnValue, type DataFrame, nRows } from "./dataframe.js";
import { stringAt } from "./lazy-strings.js";
import { own } from "./own.js";
import type { SpatialData } from "./spatialdata.js";
import { type CellValue, columnDtype, jsonSafe, TABLE_PAGE_MAX_LIMIT, type TablePage } from "./table-page.js";
import { isUnsDict, unsGet } from "./uns.js";

/** The uns path of a table path (`uns:<path>`, `tables:<t>:uns:<path>`), or null for another path. */
export function parseUnsPath(
  path: string,
  active: string | null,
): { table: string | null; key: string } | null {
  const a = /^uns:(.+)$/s.exec(path);
  if (a) return { table: active, key: a[1]! };
  const t = /^tables:(.+?):uns:(.+)$/s.exec(path);
  return t ? { table: t[1]!, key: t[2]! } : null;
}

/** Rows `offset … offset + limit` of the uns dataframe at `key` of `table` (limit capped as table pages). */
export function unsFramePage(
  sd: SpatialData,
  table: string | null,
  key: string,
  offset: number,
  limit: number,
): TablePage {
  if (table === null) throw new NotFoundError("the session has no table");
  const t = own(sd.tables, table);
  if (!t) throw new NotFoundError(`no table "${table}"`);
  const node = unsGet(t.uns, key);
  if (node === undefined) {
    const top = Object.keys(t.uns.entries).slice(0, 50);
    throw new NotFoundError(
      `table "${table}" has no uns "${key}" (uns holds: ${top.join(", ") || "nothing"})`,
    );
  }
  if (isUnsDict(node))
    throw new BadRequestError(
      `uns "${key}" is a dict, not a dataframe: name one of its entries (${Object.keys(node.entries)
        .slice(0, 50)
        .map((k) => `${key}/${k}`)
        .join(", ")})`,
    );
  if (node === null || typeof node !== "object" || node.kind !== "dataframe")
    throw new BadRequestError(`uns "${key}" is not a dataframe; get_table pages dataframes only`);
  const frame: DataFrame = node;
  const applied = Math.min(limit, TABLE_PAGE_MAX_LIMIT);
  const total = nRows(frame);
  const start = Math.min(offset, total);
  const end = Math.min(total, start + applied);
  const cols = frame.columnOrder.map((name) => ({ name, col: frame.columns[name]! }));
  const rows: CellValue[][] = [];
  for (let i = start; i < end; i++) rows.push(cols.map(({ col }) => jsonSafe(columnValue(col, i))));
  return {
    total_rows: total,
    offset,
    limit: applied,
    index_name: frame.indexName,
    index: Array.from({ length: end - start }, (_, k) => stringAt(frame.index, start + k)),
    columns: cols.map(({ name, col }) => ({ name, dtype: columnDtype(col) })),
    rows,
  };
}

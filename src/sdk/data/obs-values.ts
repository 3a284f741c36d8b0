/**
 * The distinct values of an obs column with their counts (`GET /obs/{column}/values`): what a
 * category picker, a legend or a filter shows. A categorical lists every category in its own order,
 * unused ones with count 0 (a legend keeps its colours stable); string and boolean columns list their
 * distinct values sorted; a numeric column lists its distinct values ascending while there are at most
 * `maxDistinct` of them (cluster ids stored as integers), and is refused beyond (a continuous column
 * has no useful value list). Missing values (NaN, null, code -1) come last as `value: null`.
 */

import { BadRequestError, NotFoundError } from "../errors.js";
import { numberAt, shortFloat32 } from "./arrays.js";
import { type Column, columnKind } from "./dataframe.js";
import { own } from "./own.js";
import type { Table } from "./table.js";

/** A value and how many rows hold it. */
export interface ValueCount {
  value: string | number | boolean | null;
  count: number;
}

/** Default cap on the distinct values of a numeric column. */
export const MAX_NUMERIC_DISTINCT = 1000;

/** Order of plain values: numbers numerically, false before true, strings by code point. */
function compare(a: string | number | boolean, b: string | number | boolean): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Count every row's value of a non-categorical column (null for missing). */
function countPlain(
  col: Exclude<Column, { kind: "categorical" }>,
): Map<string | number | boolean | null, number> {
  const counts = new Map<string | number | boolean | null, number>();
  const add = (v: string | number | boolean | null) => counts.set(v, (counts.get(v) ?? 0) + 1);
  if (col.kind === "string") {
    for (const v of col.values) add(v);
    return counts;
  }
  const isBool = col.dtype === "bool";
  const isF32 = col.dtype === "float32";
  const n = col.data.length;
  for (let i = 0; i < n; i++) {
    if (col.kind === "nullable" && col.mask[i]) {
      add(null);
      continue;
    }
    const x = numberAt(col.data, i);
    if (isBool) add(x !== 0);
    else if (Number.isNaN(x)) add(null);
    // JSON has no infinities: they are listed as the strings "Infinity" and "-Infinity".
    else if (!Number.isFinite(x)) add(String(x));
    else add(isF32 ? shortFloat32(x) : x);
  }
  return counts;
}

/**
 * The values of obs column `column` of `table` with their counts (see the module comment). A
 * `NotFoundError` (404) when the column does not exist; a `BadRequestError` (400) for a numeric column
 * with more than `maxDistinct` distinct values.
 */
export function obsValueCounts(
  table: Table,
  column: string,
  opts: { maxDistinct?: number } = {},
): ValueCount[] {
  const col = own(table.obs.columns, column);
  if (!col || !table.obs.columnOrder.includes(column)) throw new NotFoundError(`no obs column "${column}"`);
  if (col.kind === "categorical") {
    const cats = col.categories;
    const nCats = cats.kind === "string" ? cats.values.length : cats.data.length;
    const counts = new Float64Array(nCats);
    let missing = 0;
    for (const code of col.codes) {
      if (code >= 0 && code < nCats) counts[code]!++;
      else missing++;
    }
    const out: ValueCount[] = [];
    for (let i = 0; i < nCats; i++) {
      const value = cats.kind === "string" ? (cats.values[i] ?? null) : numberAt(cats.data, i);
      out.push({ value, count: counts[i]! });
    }
    if (missing) out.push({ value: null, count: missing });
    return out;
  }
  const counts = countPlain(col);
  const kind = columnKind(col);
  const max = opts.maxDistinct ?? MAX_NUMERIC_DISTINCT;
  if ((kind === "numeric" || kind === "nullable") && counts.size - (counts.has(null) ? 1 : 0) > max) {
    throw new BadRequestError(
      `obs column "${column}" is numeric with more than ${max} distinct values; value lists are for categorical, string, boolean or integer-coded columns (read the column itself through /data/obs:${column})`,
    );
  }
  const out: ValueCount[] = [];
  let missing = 0;
  for (const [value, count] of counts) {
    if (value === null) missing = count;
    else out.push({ value, count });
  }
  out.sort((a, b) => compare(a.value as string | number | boolean, b.value as string | number | boolean));
  if (missing) out.push({ value: null, count: missing });
  return out;
}

/** Reading squidpy's `gr` results out of uns for the `pl` plots (keys as squidpy 1.8.3 writes them). */
import type { DenseArray } from "../../sdk/data/arrays.js";
import { columnValue, type DataFrame } from "../../sdk/data/dataframe.js";
import type { Table } from "../../sdk/data/table.js";
import type { UnsValue } from "../../sdk/data/uns.js";

/** A dense numeric array node, or an error naming where it should be. */
export function denseAt(v: UnsValue | undefined, what: string, op: string, writer: string): DenseArray {
  if (!v || typeof v !== "object" || (v as { kind?: string }).kind !== "dense")
    throw new Error(`${op}: no ${what}; run ${writer} first`);
  return v as DenseArray;
}

/** A data frame node, or an error naming where it should be. */
export function frameAt(v: UnsValue | undefined, what: string, op: string, writer: string): DataFrame {
  if (!v || typeof v !== "object" || (v as { kind?: string }).kind !== "dataframe")
    throw new Error(`${op}: no ${what}; run ${writer} first`);
  return v as DataFrame;
}

/** A dense array's values as numbers. */
export function numbers(a: DenseArray): Float64Array {
  return Float64Array.from(a.data as unknown as ArrayLike<number>, Number);
}

/** A frame column's values as numbers (NaN for missing). */
export function frameNumbers(f: DataFrame, col: string): Float64Array {
  const c = f.columns[col];
  if (!c) throw new Error(`frame has no column "${col}"`);
  return Float64Array.from({ length: f.index.values.length }, (_, i) => {
    const v = columnValue(c, i);
    return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : Number.NaN;
  });
}

/** A frame column's values as strings. */
export function frameStrings(f: DataFrame, col: string): string[] {
  const c = f.columns[col];
  if (!c) throw new Error(`frame has no column "${col}"`);
  return Array.from({ length: f.index.values.length }, (_, i) => String(columnValue(c, i) ?? ""));
}

/** uns entry `key` of a table. */
export function unsEntry(t: Table, key: string): UnsValue | undefined {
  return Object.hasOwn(t.uns.entries, key) ? t.uns.entries[key] : undefined;
}

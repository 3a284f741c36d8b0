/**
 * Helpers of the service's own operations: find the active table and an obs column, with errors that
 * name what is missing. Not an operations module (the plugin descriptor does not list it).
 */
import type { Categorical, StringArray } from "../../sdk/data/arrays.js";
import type { Column } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";

/** The table `name` of `sd`, or an error naming it and the tables there are. */
export function activeTable(sd: SpatialData, name: string): Table {
  const t = Object.hasOwn(sd.tables, name) ? sd.tables[name] : undefined;
  if (!t) {
    const have = Object.keys(sd.tables);
    throw new Error(`no table "${name}" (tables: ${have.length ? have.join(", ") : "none"})`);
  }
  return t;
}

/** The obs column `column` of table `table`, or an error naming both. */
export function obsColumn(t: Table, table: string, column: string): Column {
  const col = Object.hasOwn(t.obs.columns, column) ? t.obs.columns[column] : undefined;
  if (!col) throw new Error(`table "${table}" has no obs column "${column}"`);
  return col;
}

/** The obs column `column` as a categorical, or an error saying what it is instead. */
export function categoricalColumn(t: Table, table: string, column: string): Categorical {
  const col = obsColumn(t, table, column);
  if (col.kind !== "categorical")
    throw new Error(`obs column "${column}" of table "${table}" is ${col.kind}, not categorical`);
  return col;
}

/** The category labels of a categorical as strings (numeric categories printed as numbers). */
export function categoryLabels(cats: Categorical["categories"]): string[] {
  if (cats.kind === "string") return cats.values.map((v) => v ?? "");
  return Array.from(cats.data as ArrayLike<number | bigint>, (v) => String(v));
}

/** A string array value of `values`. */
export function stringArray(values: readonly string[]): StringArray {
  return { kind: "string", shape: [values.length], values };
}

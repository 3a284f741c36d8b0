/**
 * DataFrame: an ordered set of typed 1-d columns sharing a string index, as AnnData's obs and var.
 */
import {
  type Categorical,
  type DenseArray,
  type NullableArray,
  type StringArray,
  shortFloat32,
  strings,
} from "./arrays.js";
import { stringAt, stringCount } from "./lazy-strings.js";

/** One column of a frame. A dense column of dtype `bool` is a boolean column. */
export type Column = DenseArray | StringArray | NullableArray | Categorical;

/** What a user sees a column as: the kinds listed by `tessera inspect` and the service. */
export type ColumnKind = "numeric" | "categorical" | "string" | "boolean" | "nullable";

/** A frame of columns; `columnOrder` keeps the on-disk order. */
export interface DataFrame {
  readonly kind: "dataframe";
  /** Name of the index column (`_index` in anndata files; often `index` or `cell_id`). */
  readonly indexName: string;
  /** Row labels. */
  readonly index: StringArray;
  readonly columnOrder: readonly string[];
  readonly columns: Readonly<Record<string, Column>>;
}

/** Build a frame; columns keep the order of `columns`' keys unless `order` is given. */
export function dataFrame(
  index: readonly string[] | StringArray,
  columns: Record<string, Column> = {},
  indexName = "_index",
  order?: readonly string[],
): DataFrame {
  const idx = Array.isArray(index) ? strings(index as string[]) : (index as StringArray);
  const columnOrder = order ?? Object.keys(columns);
  for (const name of columnOrder) {
    const col = columns[name];
    if (!col) throw new Error(`dataFrame: column "${name}" is listed in the order but missing`);
    const n = columnLength(col);
    const rows = stringCount(idx);
    if (n !== rows) throw new Error(`dataFrame: column "${name}" has ${n} rows, the index has ${rows}`);
  }
  return { kind: "dataframe", indexName, index: idx, columnOrder, columns };
}

/** Number of rows of a frame. */
export function nRows(df: DataFrame): number {
  return stringCount(df.index);
}

/** Number of values of a 1-d column. */
export function columnLength(col: Column): number {
  switch (col.kind) {
    case "dense":
      return col.data.length;
    case "string":
      return stringCount(col);
    case "nullable":
      return col.data.length;
    case "categorical":
      return col.codes.length;
  }
}

/** The user-facing kind of a column. */
export function columnKind(col: Column): ColumnKind {
  switch (col.kind) {
    case "dense":
      return col.dtype === "bool" ? "boolean" : "numeric";
    case "string":
      return "string";
    case "nullable":
      return col.dtype === "bool" ? "boolean" : "nullable";
    case "categorical":
      return "categorical";
  }
}

/** A new frame with a column added or replaced (others shared, not copied). */
export function withColumn(df: DataFrame, name: string, col: Column): DataFrame {
  const order = df.columnOrder.includes(name) ? df.columnOrder : [...df.columnOrder, name];
  return dataFrame(df.index, { ...df.columns, [name]: col }, df.indexName, order);
}

/** A new frame without a column. */
export function withoutColumn(df: DataFrame, name: string): DataFrame {
  const { [name]: _dropped, ...rest } = df.columns;
  return dataFrame(
    df.index,
    rest,
    df.indexName,
    df.columnOrder.filter((c) => c !== name),
  );
}

/** Value `i` of a column as a plain JS value (category label for categoricals, null for missing). */
export function columnValue(col: Column, i: number): string | number | boolean | bigint | null {
  switch (col.kind) {
    case "dense": {
      const v = col.data[i]!;
      if (col.dtype === "float32") return shortFloat32(v as number);
      return col.dtype === "bool" ? v !== 0 : v;
    }
    case "string":
      return stringAt(col, i);
    case "nullable": {
      if (col.mask[i]) return null;
      const v = col.data[i]!;
      return col.dtype === "bool" ? v !== 0 : v;
    }
    case "categorical": {
      const code = col.codes[i]!;
      if (code < 0) return null;
      const cats = col.categories;
      return cats.kind === "string" ? stringAt(cats, code) : (cats.data[code] as number);
    }
  }
}

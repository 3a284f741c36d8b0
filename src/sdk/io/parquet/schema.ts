/**
 * What each top-level parquet column becomes in the model: a dtype for numbers, strings, raw bytes
 * (WKB) or a categorical, decided from the parquet schema plus pandas' `pandas` key/value metadata.
 */
import type { FileMetaData, SchemaElement } from "hyparquet";
import type { DType } from "../../data/arrays.js";

/** How a parquet column is read into the model. */
export type ParquetColumnKind = "numeric" | "bool" | "string" | "binary" | "temporal" | "nested";

/** One top-level column of a parquet file. */
export interface ParquetColumnInfo {
  readonly name: string;
  readonly kind: ParquetColumnKind;
  /** Numeric dtype (`numeric` columns; `bool` for booleans). */
  readonly dtype?: DType;
  /** pandas stored the column as a categorical (`pandas_type: "categorical"`). */
  readonly categorical?: { readonly ordered: boolean };
}

/** pandas' description of a frame written through pyarrow (the `pandas` key/value metadata). */
export interface PandasMetadata {
  /** Index columns stored as columns (`__index_level_0__`, `__null_dask_index__`, a named index). */
  readonly indexColumns: readonly string[];
  /** A RangeIndex stored as metadata only. */
  readonly rangeIndex?: {
    readonly start: number;
    readonly stop: number;
    readonly step: number;
    readonly name: string | null;
  };
  /** Column name → pandas_type / metadata. */
  readonly columns: Readonly<Record<string, { pandasType: string; ordered?: boolean }>>;
}

/** Parse the `pandas` key/value metadata; `undefined` when absent or malformed. */
export function parsePandasMetadata(kv: Readonly<Record<string, string>>): PandasMetadata | undefined {
  const raw = kv.pandas;
  if (!raw) return undefined;
  let json: {
    index_columns?: unknown[];
    columns?: {
      name?: unknown;
      field_name?: unknown;
      pandas_type?: unknown;
      metadata?: { ordered?: unknown } | null;
    }[];
  };
  try {
    json = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const indexColumns: string[] = [];
  let rangeIndex: PandasMetadata["rangeIndex"];
  for (const ic of json.index_columns ?? []) {
    if (typeof ic === "string") indexColumns.push(ic);
    else if (ic && typeof ic === "object" && (ic as { kind?: unknown }).kind === "range") {
      const r = ic as { start?: number; stop?: number; step?: number; name?: string | null };
      rangeIndex = { start: r.start ?? 0, stop: r.stop ?? 0, step: r.step ?? 1, name: r.name ?? null };
    }
  }
  const columns: Record<string, { pandasType: string; ordered?: boolean }> = {};
  for (const c of json.columns ?? []) {
    const field =
      typeof c.field_name === "string" ? c.field_name : typeof c.name === "string" ? c.name : undefined;
    if (!field || typeof c.pandas_type !== "string") continue;
    columns[field] = { pandasType: c.pandas_type, ordered: c.metadata?.ordered === true };
  }
  return { indexColumns, ...(rangeIndex ? { rangeIndex } : {}), columns };
}

/** Top-level columns of a parquet file, in file order. */
export function describeColumns(md: FileMetaData, kv: Readonly<Record<string, string>>): ParquetColumnInfo[] {
  const pandas = parsePandasMetadata(kv);
  const out: ParquetColumnInfo[] = [];
  const schema = md.schema;
  for (let i = 1; i < schema.length; i++) {
    const el = schema[i]!;
    if (el.num_children) {
      out.push({ name: el.name, kind: "nested" });
      i += countDescendants(schema, i);
      continue;
    }
    const info = describeLeaf(el);
    const p = pandas?.columns[el.name];
    out.push(
      p?.pandasType === "categorical" ? { ...info, categorical: { ordered: p.ordered === true } } : info,
    );
  }
  return out;
}

function countDescendants(schema: readonly SchemaElement[], i: number): number {
  let n = 0;
  let pending = schema[i]!.num_children ?? 0;
  let j = i;
  while (pending > 0) {
    j++;
    n++;
    pending--;
    pending += schema[j]?.num_children ?? 0;
  }
  return n;
}

function describeLeaf(el: SchemaElement): ParquetColumnInfo {
  const name = el.name;
  const lt = el.logical_type;
  const ct = el.converted_type;
  switch (el.type) {
    case "BOOLEAN":
      return { name, kind: "bool", dtype: "bool" };
    case "INT32": {
      if (ct === "DATE" || ct === "TIME_MILLIS" || lt?.type === "DATE" || lt?.type === "TIME")
        return { name, kind: "temporal" };
      if (ct === "DECIMAL" || lt?.type === "DECIMAL") return { name, kind: "numeric", dtype: "float64" };
      const bits =
        lt?.type === "INTEGER" ? lt.bitWidth : ct?.endsWith("_8") ? 8 : ct?.endsWith("_16") ? 16 : 32;
      const unsigned = lt?.type === "INTEGER" ? !lt.isSigned : ct?.startsWith("UINT_") === true;
      const dtype: DType =
        bits === 8
          ? unsigned
            ? "uint8"
            : "int8"
          : bits === 16
            ? unsigned
              ? "uint16"
              : "int16"
            : unsigned
              ? "uint32"
              : "int32";
      return { name, kind: "numeric", dtype };
    }
    case "INT64": {
      if (
        lt?.type === "TIMESTAMP" ||
        lt?.type === "TIME" ||
        ct?.startsWith("TIMESTAMP") ||
        ct === "TIME_MICROS"
      ) {
        return { name, kind: "temporal" };
      }
      if (ct === "DECIMAL" || lt?.type === "DECIMAL") return { name, kind: "numeric", dtype: "float64" };
      const unsigned = lt?.type === "INTEGER" ? !lt.isSigned : ct === "UINT_64";
      return { name, kind: "numeric", dtype: unsigned ? "uint64" : "int64" };
    }
    case "INT96":
      return { name, kind: "temporal" };
    case "FLOAT":
      return { name, kind: "numeric", dtype: "float32" };
    case "DOUBLE":
      return { name, kind: "numeric", dtype: "float64" };
    case "FIXED_LEN_BYTE_ARRAY":
      if (lt?.type === "FLOAT16") return { name, kind: "numeric", dtype: "float32" };
      if (ct === "DECIMAL" || lt?.type === "DECIMAL") return { name, kind: "numeric", dtype: "float64" };
      if (lt?.type === "UUID") return { name, kind: "string" };
      return { name, kind: "binary" };
    case "BYTE_ARRAY":
      if (
        ct === "UTF8" ||
        ct === "ENUM" ||
        ct === "JSON" ||
        lt?.type === "STRING" ||
        lt?.type === "ENUM" ||
        lt?.type === "JSON"
      ) {
        return { name, kind: "string" };
      }
      if (ct === "DECIMAL" || lt?.type === "DECIMAL") return { name, kind: "numeric", dtype: "float64" };
      return { name, kind: "binary" };
    default:
      return { name, kind: "nested" };
  }
}

/**
 * Writing a DataFrame (plus raw byte columns such as WKB geometry) to parquet bytes with
 * hyparquet-writer, with pandas' `pandas` key/value metadata so that pandas/dask/geopandas restore
 * the index, and our reader restores categoricals.
 *
 * Categorical columns are written as dictionary-encoded UTF-8 string columns marked
 * `pandas_type: "categorical"`, and the file carries the Arrow schema (`ARROW:schema`, as pyarrow
 * writes it) with a dictionary type for them: without it pyarrow reads plain strings that contradict
 * the pandas metadata, and dask's `read_parquet` (so spatialdata's points reader) refuses the file
 * ("Not all columns are categoricals"). This package reads them back as `Categorical` with categories
 * in order of first appearance (unused categories are not stored).
 */
import {
  Binary,
  Bool,
  type DataType,
  Dictionary,
  Field,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  Schema,
  Table,
  tableToIPC,
  Uint8,
  Uint16,
  Uint64,
  Utf8,
} from "apache-arrow";
import type { KeyValue, SchemaElement } from "hyparquet";
import { parquetWriteBuffer } from "hyparquet-writer";
import type { DType } from "../../data/arrays.js";
import { type Column, columnValue, type DataFrame, nRows } from "../../data/dataframe.js";

/** A column to write that is not part of the frame (WKB geometry). */
export interface ExtraColumn {
  readonly name: string;
  readonly values: readonly (Uint8Array | null)[];
}

/** How to store the frame's index. */
export type IndexMode =
  /** Always as a column with this name (dask: `__null_dask_index__`) when the index is unnamed. */
  | { readonly column: string }
  /** As pandas/geopandas do: a RangeIndex 0..n-1 as metadata only, otherwise `__index_level_0__`. */
  | "pandas";

/** Options of {@link writeFrameParquet}. */
export interface FrameWriteOptions {
  readonly index: IndexMode;
  /** Columns written before the frame's columns (geometry). */
  readonly leading?: readonly ExtraColumn[];
  /** More key/value metadata (`geo`). */
  readonly kv?: readonly KeyValue[];
  readonly codec?: "SNAPPY" | "UNCOMPRESSED";
}

interface Prepared {
  element: SchemaElement;
  data: unknown[] | ArrayLike<unknown>;
  pandasType: string;
  numpyType: string;
  metadata: Record<string, unknown> | null;
  /** The column's Arrow type, as pyarrow should read it back (see `ARROW:schema`). */
  arrowType: DataType;
}

const INT_LOGICAL: Partial<Record<DType, { bits: number; signed: boolean }>> = {
  int8: { bits: 8, signed: true },
  int16: { bits: 16, signed: true },
  uint8: { bits: 8, signed: false },
  uint16: { bits: 16, signed: false },
};

const ARROW_INT: Partial<Record<DType, () => DataType>> = {
  int8: () => new Int8(),
  int16: () => new Int16(),
  uint8: () => new Uint8(),
  uint16: () => new Uint16(),
};

function prepareColumn(name: string, col: Column): Prepared {
  const opt = { name, repetition_type: "OPTIONAL" as const };
  switch (col.kind) {
    case "string":
      return {
        element: { ...opt, type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } },
        data: col.values as (string | null)[],
        pandasType: "unicode",
        numpyType: "object",
        metadata: null,
        arrowType: new Utf8(),
      };
    case "categorical": {
      const n = col.codes.length;
      const values = new Array<unknown>(n);
      for (let i = 0; i < n; i++) values[i] = columnValue(col, i);
      const nCats =
        col.categories.kind === "string" ? col.categories.values.length : col.categories.data.length;
      const codesType = nCats <= 127 ? "int8" : nCats <= 32767 ? "int16" : "int32";
      const inner =
        col.categories.kind === "string" ? undefined : prepareNumeric(name, col.categories.dtype, values);
      return {
        element: inner?.element ?? {
          ...opt,
          type: "BYTE_ARRAY",
          converted_type: "UTF8",
          logical_type: { type: "STRING" },
        },
        data: inner?.data ?? values,
        pandasType: "categorical",
        numpyType: codesType,
        metadata: { num_categories: nCats, ordered: col.ordered },
        arrowType: new Dictionary(
          inner?.arrowType ?? new Utf8(),
          codesType === "int8" ? new Int8() : codesType === "int16" ? new Int16() : new Int32(),
          0, // the id is given when the schema is assembled (unique per file)
          col.ordered,
        ),
      };
    }
    case "dense":
    case "nullable": {
      if (col.kind === "dense" && col.shape.length > 1) throw new Error(`column "${name}" is not 1-d`);
      const n = col.data.length;
      let data: unknown[] | ArrayLike<unknown> = col.data as ArrayLike<unknown>;
      if (col.kind === "nullable" || col.dtype === "bool") {
        const arr = new Array<unknown>(n);
        for (let i = 0; i < n; i++) arr[i] = columnValue(col, i);
        data = arr;
      }
      const p = prepareNumeric(name, col.dtype, data);
      if (col.kind === "nullable") {
        // pandas' masked extension dtypes (Int64, boolean) on read.
        const ext =
          col.dtype === "bool"
            ? "boolean"
            : col.dtype.replace(/^u?int/, (m) => (m === "uint" ? "UInt" : "Int"));
        return { ...p, numpyType: ext };
      }
      return p;
    }
  }
}

function prepareNumeric(name: string, dtype: DType, data: unknown[] | ArrayLike<unknown>): Prepared {
  const opt = { name, repetition_type: "OPTIONAL" as const };
  const base = { data, numpyType: dtype, pandasType: dtype, metadata: null };
  switch (dtype) {
    case "float64":
      return { ...base, element: { ...opt, type: "DOUBLE" }, arrowType: new Float64() };
    case "float32":
      return { ...base, element: { ...opt, type: "FLOAT" }, arrowType: new Float32() };
    case "int64":
      return { ...base, element: { ...opt, type: "INT64" }, arrowType: new Int64() };
    case "uint64": {
      const d = ArrayBuffer.isView(data)
        ? new BigInt64Array(
            (data as BigUint64Array).buffer,
            (data as BigUint64Array).byteOffset,
            (data as BigUint64Array).length,
          )
        : data;
      return {
        ...base,
        data: d,
        element: {
          ...opt,
          type: "INT64",
          converted_type: "UINT_64",
          logical_type: { type: "INTEGER", bitWidth: 64, isSigned: false },
        },
        arrowType: new Uint64(),
      };
    }
    case "int32":
      return { ...base, element: { ...opt, type: "INT32" }, arrowType: new Int32() };
    case "uint32": {
      // Stored as int64 so that values ≥ 2^31 survive every reader.
      const arr = Array.from(data as ArrayLike<number | null>, (v) => (v === null ? null : BigInt(v)));
      return {
        ...base,
        data: arr,
        pandasType: "int64",
        numpyType: "int64",
        element: { ...opt, type: "INT64" },
        arrowType: new Int64(),
      };
    }
    case "bool":
      return {
        ...base,
        data: Array.from(data as ArrayLike<unknown>, (v) => (v === null ? null : Boolean(v))),
        element: { ...opt, type: "BOOLEAN" },
        arrowType: new Bool(),
      };
    default: {
      const l = INT_LOGICAL[dtype]!;
      const ct = `${l.signed ? "INT" : "UINT"}_${l.bits}` as SchemaElement["converted_type"];
      return {
        ...base,
        element: {
          ...opt,
          type: "INT32",
          converted_type: ct,
          logical_type: { type: "INTEGER", bitWidth: l.bits, isSigned: l.signed },
        },
        arrowType: ARROW_INT[dtype]!(),
      };
    }
  }
}

/** Whether every index label is a canonical decimal integer (then it is stored as int64). */
function integerIndex(values: readonly (string | null)[]): BigInt64Array | undefined {
  const out = new BigInt64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined || !/^(0|-?[1-9][0-9]{0,18})$/.test(v)) return undefined;
    const b = BigInt(v);
    if (b > 9223372036854775807n || b < -9223372036854775808n) return undefined;
    out[i] = b;
  }
  return out;
}

/** `start + i·step` for i < n as int64 (written as 32-bit halves: no BigInt per row). */
function rangeInts(n: number, start: number, step: number): BigInt64Array {
  const out = new BigInt64Array(n);
  const half = new Uint32Array(out.buffer);
  const little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  for (let i = 0; i < n; i++) {
    const v = start + i * step;
    const hi = Math.floor(v / 2 ** 32);
    half[2 * i + (little ? 0 : 1)] = v - hi * 2 ** 32;
    half[2 * i + (little ? 1 : 0)] = hi;
  }
  return out;
}

function isRange(values: readonly (string | null)[]): boolean {
  for (let i = 0; i < values.length; i++) if (values[i] !== String(i)) return false;
  return true;
}

/**
 * The `ARROW:schema` value pyarrow writes: the IPC-serialised Arrow schema (a stream holding only the schema
 * message), base64. It carries the pandas metadata too, as pyarrow's does.
 */
function arrowSchemaBase64(prepared: readonly Prepared[], pandas: string): string {
  const fields = prepared.map((p, i) => {
    const t = p.arrowType;
    // Each dictionary needs an id unique within the schema: the column's position.
    const type = t instanceof Dictionary ? new Dictionary(t.dictionary, t.indices, i, t.isOrdered) : t;
    return new Field(p.element.name, type, true);
  });
  const schema = new Schema(fields, new Map([["pandas", pandas]]));
  const bytes = tableToIPC(new Table(schema), "stream");
  return Buffer.from(bytes).toString("base64");
}

/** Encode a frame (and leading byte columns) as one parquet file. */
export function writeFrameParquet(frame: DataFrame, options: FrameWriteOptions): Uint8Array {
  const n = nRows(frame);
  const prepared: Prepared[] = [];
  for (const extra of options.leading ?? []) {
    if (extra.values.length !== n)
      throw new Error(`column "${extra.name}" has ${extra.values.length} rows, the frame ${n}`);
    prepared.push({
      element: { name: extra.name, type: "BYTE_ARRAY", repetition_type: "OPTIONAL" },
      data: extra.values as (Uint8Array | null)[],
      pandasType: "bytes",
      numpyType: "object",
      metadata: null,
      arrowType: new Binary(),
    });
  }
  for (const name of frame.columnOrder) prepared.push(prepareColumn(name, frame.columns[name]!));

  // Index. A range-backed index (`lazy-strings.ts`) is written from its start and step, never as strings.
  const range = frame.index.backing?.kind === "range" ? frame.index.backing : null;
  const named = frame.indexName !== "_index" && frame.indexName !== "";
  const indexColumns: unknown[] = [];
  let indexName: string | null = named ? frame.indexName : null;
  if (
    options.index === "pandas" &&
    !named &&
    (range ? range.start === 0 && range.step === 1 : isRange(frame.index.values))
  ) {
    indexColumns.push({ kind: "range", name: null, start: 0, stop: n, step: 1 });
  } else {
    const colName = named
      ? frame.indexName
      : options.index === "pandas"
        ? "__index_level_0__"
        : options.index.column;
    const ints = range ? rangeInts(n, range.start, range.step) : integerIndex(frame.index.values);
    prepared.push({
      element: ints
        ? { name: colName, type: "INT64", repetition_type: "OPTIONAL" }
        : {
            name: colName,
            type: "BYTE_ARRAY",
            converted_type: "UTF8",
            logical_type: { type: "STRING" },
            repetition_type: "OPTIONAL",
          },
      data: ints ?? (frame.index.values as (string | null)[]),
      pandasType: ints ? "int64" : "unicode",
      numpyType: ints ? "int64" : "object",
      metadata: null,
      arrowType: ints ? new Int64() : new Utf8(),
    });
    indexColumns.push(colName);
    indexName = named ? frame.indexName : null;
  }
  const names = new Set<string>();
  for (const p of prepared) {
    if (names.has(p.element.name)) throw new Error(`two columns are named "${p.element.name}"`);
    names.add(p.element.name);
  }
  const pandas = {
    index_columns: indexColumns,
    column_indexes: [
      {
        name: null,
        field_name: null,
        pandas_type: "unicode",
        numpy_type: "object",
        metadata: { encoding: "UTF-8" },
      },
    ],
    columns: prepared.map((p) => ({
      name: indexColumns.includes(p.element.name) ? indexName : p.element.name,
      field_name: p.element.name,
      pandas_type: p.pandasType,
      numpy_type: p.numpyType,
      metadata: p.metadata,
    })),
    creator: { library: "tessera", version: "0.1.0" },
    pandas_version: "2.2.3",
  };
  const schema: SchemaElement[] = [
    { name: "schema", num_children: prepared.length },
    ...prepared.map((p) => p.element),
  ];
  const buf = parquetWriteBuffer({
    columnData: prepared.map((p) => ({ name: p.element.name, data: p.data as never })),
    schema,
    codec: options.codec ?? "SNAPPY",
    kvMetadata: [
      { key: "pandas", value: JSON.stringify(pandas) },
      { key: "ARROW:schema", value: arrowSchemaBase64(prepared, JSON.stringify(pandas)) },
      ...(options.kv ?? []),
    ],
    createdBy: "tessera (hyparquet-writer 0.17)",
  });
  return new Uint8Array(buf);
}

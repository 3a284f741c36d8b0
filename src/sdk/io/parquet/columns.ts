/**
 * Reading parquet columns into the model's column values: numbers into one shared typed array per
 * column (int64 kept exact as BigInt64Array), strings into string arrays, pandas categoricals into
 * `Categorical` (categories in dictionary-page order), booleans into `bool`, raw bytes (WKB) as is.
 * Several files (the parts of a dask dataset) are concatenated in the order given.
 */
import type { ColumnData, DecodedArray } from "hyparquet";
import { parquetRead } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import {
  allocArray,
  type Categorical,
  type DenseArray,
  type DType,
  dense,
  type NullableArray,
  type StringArray,
  strings,
  type TypedArray,
} from "../../data/arrays.js";
import type { Column } from "../../data/dataframe.js";
import { readDictionaries } from "./dictionary.js";
import { describeColumns, type ParquetColumnInfo } from "./schema.js";
import type { ParquetSource } from "./source.js";

/** Raw byte values of a binary column (WKB geometry), `null` where missing. */
export interface BinaryColumn {
  readonly kind: "binary";
  readonly values: readonly (Uint8Array | null)[];
}

/** What a parquet column is read as. */
export type ParquetColumnValue = Column | BinaryColumn;

const utf8 = new TextDecoder();

/** Options of hyparquet reads: raw bytes for geometry, JSON kept as text, every compressor. */
const READ_OPTIONS = {
  compressors,
  utf8: false,
  parsers: {
    geometryFromBytes: (b: Uint8Array) => b,
    geographyFromBytes: (b: Uint8Array) => b,
    jsonFromBytes: (b: Uint8Array) => (b ? utf8.decode(b) : b),
  },
} as const;

/** Columns of the first file of a dataset (all parts of a dask dataset share one schema). */
export function columnInfos(src: ParquetSource): ParquetColumnInfo[] {
  return describeColumns(src.metadata, src.kv);
}

/** A column being filled across parts. */
interface Sink {
  readonly info: ParquetColumnInfo;
  numbers?: TypedArray;
  mask?: Uint8Array;
  values?: unknown[];
}

/**
 * Read `names` from every source (in order) and concatenate them. Throws, naming the file, when a
 * column is missing in some part or has a type the model cannot hold (nested lists/structs).
 */
export async function readParquetColumns(
  sources: readonly ParquetSource[],
  names: readonly string[],
): Promise<Record<string, ParquetColumnValue>> {
  if (sources.length === 0) throw new Error("readParquetColumns: no parquet file given");
  const total = sources.reduce((n, s) => n + s.numRows, 0);
  const first = columnInfos(sources[0]!);
  const sinks = new Map<string, Sink>();
  for (const name of names) {
    const info = first.find((c) => c.name === name);
    if (!info) throw new Error(`${sources[0]!.key}: no column "${name}"`);
    if (info.kind === "nested") {
      throw new Error(
        `${sources[0]!.key}: column "${name}" is a nested (list/struct) column, which is not supported here`,
      );
    }
    sinks.set(name, newSink(info, total));
  }
  let base = 0;
  for (const src of sources) {
    const infos = columnInfos(src);
    for (const name of names) {
      if (!infos.some((c) => c.name === name))
        throw new Error(`${src.key}: no column "${name}" (the other parts have it)`);
    }
    if (names.length > 0 && src.numRows > 0) {
      const chunks: ColumnData[] = [];
      try {
        await parquetRead({
          file: src.file,
          metadata: src.metadata,
          columns: [...names],
          onChunk: (c) => chunks.push(c),
          ...READ_OPTIONS,
        });
      } catch (err) {
        throw new Error(`${src.key}: cannot read parquet columns (${(err as Error).message})`);
      }
      for (const c of chunks) fill(sinks.get(c.columnName)!, c.columnData, base + c.rowStart);
    }
    base += src.numRows;
  }
  const out: Record<string, ParquetColumnValue> = {};
  for (const [name, sink] of sinks) out[name] = await finish(sink, sources, name);
  return out;
}

function newSink(info: ParquetColumnInfo, total: number): Sink {
  if ((info.kind === "numeric" || info.kind === "bool") && !info.categorical) {
    return { info, numbers: allocArray(info.dtype!, total) };
  }
  return { info, values: new Array<unknown>(total).fill(null) };
}

function fill(sink: Sink, data: DecodedArray, offset: number): void {
  const n = data.length;
  const out = sink.numbers;
  if (out) {
    // Fast path: hyparquet gave a typed array of the same kind (required columns).
    if (!Array.isArray(data) && data.constructor === out.constructor) {
      (out as unknown as { set(a: ArrayLike<unknown>, o: number): void }).set(
        data as ArrayLike<unknown>,
        offset,
      );
      return;
    }
    const isBig = out instanceof BigInt64Array || out instanceof BigUint64Array;
    const isFloat = out instanceof Float32Array || out instanceof Float64Array;
    const o = out as unknown as Record<number, number | bigint>;
    for (let i = 0; i < n; i++) {
      const v = (data as ArrayLike<unknown>)[i];
      if (v === null || v === undefined) {
        if (isFloat) o[offset + i] = Number.NaN;
        else {
          sink.mask ??= allocArray("uint8", out.length) as Uint8Array;
          sink.mask[offset + i] = 1;
        }
      } else if (isBig) o[offset + i] = typeof v === "bigint" ? v : BigInt(v as number);
      else o[offset + i] = typeof v === "boolean" ? (v ? 1 : 0) : Number(v);
    }
    return;
  }
  const values = sink.values!;
  const kind = sink.info.kind;
  for (let i = 0; i < n; i++) {
    const v = (data as ArrayLike<unknown>)[i];
    if (v === null || v === undefined) continue;
    if (kind === "temporal") values[offset + i] = v instanceof Date ? v.toISOString() : String(v);
    else if (kind === "string" && v instanceof Uint8Array) values[offset + i] = utf8.decode(v);
    else values[offset + i] = v;
  }
}

async function finish(
  sink: Sink,
  sources: readonly ParquetSource[],
  name: string,
): Promise<ParquetColumnValue> {
  const { info } = sink;
  if (sink.numbers) {
    const dtype = info.dtype as DType;
    if (sink.mask) {
      const col: NullableArray = { kind: "nullable", dtype, data: sink.numbers, mask: sink.mask };
      return col;
    }
    return dense(sink.numbers, undefined, dtype);
  }
  const values = sink.values!;
  if (info.kind === "binary" && !info.categorical)
    return { kind: "binary", values: values as (Uint8Array | null)[] };
  if (info.categorical) return toCategorical(values, sources, name, info);
  return strings(values as (string | null)[]);
}

/** Codes and categories of a pandas categorical; categories follow the dictionary pages. */
async function toCategorical(
  values: readonly unknown[],
  sources: readonly ParquetSource[],
  name: string,
  info: ParquetColumnInfo,
): Promise<Categorical> {
  const lookup = new Map<unknown, number>();
  const cats: unknown[] = [];
  const add = (v: unknown): number => {
    let code = lookup.get(v);
    if (code === undefined) {
      code = cats.length;
      cats.push(v);
      lookup.set(v, code);
    }
    return code;
  };
  for (const src of sources) {
    for (const dict of await readDictionaries(src, name)) for (const v of dict ?? []) if (v !== null) add(v);
  }
  const codes = allocArray("int32", values.length) as Int32Array;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    codes[i] = v === null || v === undefined ? -1 : add(v);
  }
  let categories: DenseArray | StringArray;
  if (info.kind === "string" || cats.every((c) => typeof c === "string")) {
    categories = strings(cats.map((c) => String(c)));
  } else {
    const dtype = info.dtype ?? "float64";
    const arr = allocArray(dtype, cats.length) as unknown as Record<number, number | bigint>;
    const big = dtype === "int64" || dtype === "uint64";
    cats.forEach((c, i) => {
      arr[i] = big ? BigInt(c as number | bigint) : Number(c);
    });
    categories = dense(arr as unknown as TypedArray, undefined, dtype);
  }
  return { kind: "categorical", codes, categories, ordered: info.categorical?.ordered === true };
}

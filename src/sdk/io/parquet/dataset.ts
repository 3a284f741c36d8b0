/**
 * Parquet datasets as SpatialData stores hold them: one file (`shapes.parquet`) or a dask folder of
 * parts (`points.parquet/part.0.parquet … part.N.parquet`), read into a DataFrame whose index comes
 * from pandas' metadata (`__null_dask_index__`, `__index_level_0__`, a named index or a RangeIndex).
 */
import { numberAt, type StringArray, strings, type TypedArray } from "../../data/arrays.js";
import { type Column, columnValue, type DataFrame, dataFrame } from "../../data/dataframe.js";
import { rangeStrings } from "../../data/lazy-strings.js";
import { type BinaryColumn, columnInfos, type ParquetColumnValue, readParquetColumns } from "./columns.js";
import { type PandasMetadata, type ParquetColumnInfo, parsePandasMetadata } from "./schema.js";
import { type ByteStore, type ParquetSource, probeParquet, storeKey } from "./source.js";

/** One file or the numbered parts of a dask dataset, in part order. */
export interface ParquetDataset {
  /** Key of the file or folder. */
  readonly key: string;
  readonly parts: readonly ParquetSource[];
  readonly numRows: number;
  /** Columns of the first part, in file order. */
  readonly columns: readonly ParquetColumnInfo[];
  /** Key/value metadata of the first part. */
  readonly kv: Readonly<Record<string, string>>;
}

/** Which layout to try first: a dask folder (points) or a single file (shapes). */
export type ParquetLayout = "folder-first" | "file-first";

/**
 * Open `key` as a dask folder (`key/part.0.parquet`, `part.1.parquet` … read until the first
 * missing number) or as a single file, trying `layout` first (one request saved in the common case).
 * Throws naming the key when neither exists.
 */
export async function openParquetDataset(
  store: ByteStore,
  key: string,
  layout: ParquetLayout = "folder-first",
): Promise<ParquetDataset> {
  const k = storeKey(key);
  const parts: ParquetSource[] = [];
  const single = layout === "file-first" ? await probeParquet(store, k) : undefined;
  if (single) parts.push(single);
  else {
    for (let i = 0; ; i++) {
      const part = await probeParquet(store, storeKey(k, `part.${i}.parquet`));
      if (!part) break;
      parts.push(part);
    }
  }
  if (parts.length === 0 && layout === "folder-first") {
    const file = await probeParquet(store, k);
    if (file) parts.push(file);
  }
  if (parts.length === 0)
    throw new Error(`${k}: no parquet data (neither a file nor a folder with part.0.parquet)`);
  const first = parts[0]!;
  return {
    key: k,
    parts,
    numRows: parts.reduce((n, p) => n + p.numRows, 0),
    columns: columnInfos(first),
    kv: first.kv,
  };
}

/** Index column names pandas/dask/geopandas/sfarrow use for an unnamed index. */
const UNNAMED_INDEX = ["__null_dask_index__", "__index_level_0__", "X__index_level_0__"];

/** Options of {@link readParquetFrame}. */
export interface ParquetFrameOptions {
  /** Columns to return as raw bytes beside the frame (a WKB geometry column). */
  readonly binaryColumns?: readonly string[];
}

/** A dataset read as a frame, plus its raw byte columns. */
export interface ParquetFrame {
  readonly frame: DataFrame;
  readonly binary: Readonly<Record<string, BinaryColumn>>;
  readonly dataset: ParquetDataset;
}

/** Where a dataset's index comes from. */
export interface IndexSource {
  /** Column holding the index, if any. */
  readonly column?: string;
  /** The frame's index name (`_index` for an unnamed index). */
  readonly name: string;
  /** A RangeIndex stored in metadata only. */
  readonly range?: PandasMetadata["rangeIndex"];
}

/** Decide which column (or RangeIndex) is the index of a dataset. */
export function findIndex(ds: ParquetDataset): IndexSource {
  const pandas = parsePandasMetadata(ds.kv);
  const names = new Set(ds.columns.map((c) => c.name));
  const fromPandas = pandas?.indexColumns.find((c) => names.has(c));
  if (fromPandas)
    return { column: fromPandas, name: UNNAMED_INDEX.includes(fromPandas) ? "_index" : fromPandas };
  if (pandas?.rangeIndex && ds.parts.length === 1)
    return { name: pandas.rangeIndex.name ?? "_index", range: pandas.rangeIndex };
  const unnamed = UNNAMED_INDEX.find((c) => names.has(c));
  if (unnamed) return { column: unnamed, name: "_index" };
  return { name: "_index" };
}

/**
 * Read a whole dataset into a frame. Every column except the index and `binaryColumns` becomes a
 * frame column; the index is converted to strings (int64 ids exactly).
 */
export async function readParquetFrame(
  store: ByteStore,
  key: string,
  options: ParquetFrameOptions = {},
): Promise<ParquetFrame> {
  const ds = await openParquetDataset(store, key);
  return readDatasetFrame(ds, options);
}

/** {@link readParquetFrame} on an already opened dataset. */
export async function readDatasetFrame(
  ds: ParquetDataset,
  options: ParquetFrameOptions = {},
): Promise<ParquetFrame> {
  const binaryNames = options.binaryColumns ?? [];
  for (const b of binaryNames) {
    if (!ds.columns.some((c) => c.name === b)) throw new Error(`${ds.key}: no column "${b}"`);
  }
  const idx = findIndex(ds);
  const names = ds.columns.map((c) => c.name);
  const values = await readParquetColumns(ds.parts, names);
  const binary: Record<string, BinaryColumn> = {};
  const columns: Record<string, Column> = {};
  const order: string[] = [];
  for (const name of names) {
    const v = values[name]!;
    if (binaryNames.includes(name)) {
      if (v.kind !== "binary")
        throw new Error(`${ds.key}: column "${name}" holds ${v.kind} values, not bytes`);
      binary[name] = v;
      continue;
    }
    if (name === idx.column) continue;
    if (v.kind === "binary") {
      throw new Error(`${ds.key}: column "${name}" holds raw bytes, which a frame cannot hold`);
    }
    columns[name] = v;
    order.push(name);
  }
  const index = buildIndex(ds, idx, idx.column ? values[idx.column] : undefined);
  return { frame: dataFrame(index, columns, idx.name, order), binary, dataset: ds };
}

function buildIndex(ds: ParquetDataset, idx: IndexSource, col: ParquetColumnValue | undefined): StringArray {
  const n = ds.numRows;
  if (col) {
    if (col.kind === "string") return col;
    if (col.kind === "binary") throw new Error(`${ds.key}: index column "${idx.column}" holds raw bytes`);
    // An integer index evenly spaced (dask's `__null_dask_index__` 0 … n−1 for points) is a range:
    // no string per row.
    const even = col.kind === "dense" && col.dtype !== "bool" ? evenlySpaced(col.data) : null;
    if (even) return rangeStrings(n, even.start, even.step);
    const out = new Array<string | null>(n);
    for (let i = 0; i < n; i++) {
      const v = columnValue(col, i);
      out[i] = v === null ? null : String(v);
    }
    return strings(out);
  }
  const start = idx.range?.start ?? 0;
  const step = idx.range?.step ?? 1;
  return rangeStrings(n, start, step);
}

/** `start` and `step` of integer values `start + i·step` (exact below 2^53), else null. */
function evenlySpaced(data: TypedArray): { start: number; step: number } | null {
  if (data instanceof Float32Array || data instanceof Float64Array || data.length === 0) return null;
  const start = numberAt(data, 0);
  const step = data.length > 1 ? numberAt(data, 1) - start : 1;
  if (step <= 0 || !Number.isSafeInteger(start + step * (data.length - 1))) return null;
  for (let i = 1; i < data.length; i++) if (numberAt(data, i) !== start + i * step) return null;
  return { start, step };
}

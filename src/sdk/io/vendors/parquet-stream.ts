/**
 * A vendor's large parquet file (Xenium transcripts and boundaries: millions of rows with a text id
 * per row) read one row group at a time, each column chunk handed to the caller as it is decoded and
 * then dropped. Reading the whole file at once kept every decoded value — one object per row per
 * text column — alive until the end, and at half a million cells the collector spent more time
 * walking them than the reader spent decoding (see docs/readers.md, "Speed"). Here a chunk's values
 * die young: the caller turns them into typed arrays and category codes straight away.
 */
import { basename, dirname } from "node:path";
import { type DecodedArray, parquetRead } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { DataError } from "../data-error.js";
import { describeColumns, type ParquetColumnInfo } from "../parquet/schema.js";
import { openParquet } from "../parquet/source.js";
import { FsStore } from "../store/fs-store.js";

/** An opened file: its rows, its column names, and a reader of its row groups. */
export interface ParquetStream {
  readonly file: string;
  readonly nRows: number;
  readonly columns: readonly string[];
  /** What each column holds (text, numbers of a dtype, …), by the file's schema. */
  readonly infos: readonly ParquetColumnInfo[];
  /**
   * Call `onChunk(column, values, rowStart)` for every chunk of `columns`, row group after row group,
   * each column's chunks in row order. Text values come as UTF-8 bytes (`Uint8Array`), numbers as
   * typed arrays or number arrays, missing values as null/undefined.
   */
  forEachChunk(
    columns: readonly string[],
    onChunk: (column: string, values: DecodedArray, rowStart: number) => void,
    signal?: AbortSignal,
  ): Promise<void>;
}

/** Open `file` for chunked reading; a DataError names it when it is not a readable parquet file. */
export async function openParquetStream(file: string): Promise<ParquetStream> {
  let src: Awaited<ReturnType<typeof openParquet>>;
  try {
    src = await openParquet(new FsStore(dirname(file)), `/${basename(file)}`);
  } catch (err) {
    throw new DataError(`${file}: not a readable parquet file (${(err as Error).message})`, { cause: err });
  }
  const infos = describeColumns(src.metadata, src.kv);
  const columns = infos.map((c) => c.name);
  return {
    file,
    nRows: src.numRows,
    columns,
    infos,
    async forEachChunk(names, onChunk, signal) {
      for (const n of names)
        if (!columns.includes(n))
          throw new DataError(`${file}: no column "${n}" (columns: ${columns.join(", ")})`);
      let start = 0;
      for (const rg of src.metadata.row_groups) {
        signal?.throwIfAborted();
        const end = start + Number(rg.num_rows);
        try {
          await parquetRead({
            file: src.file,
            metadata: src.metadata,
            columns: [...names],
            rowStart: start,
            rowEnd: end,
            compressors,
            utf8: false,
            onChunk: (c) => onChunk(c.columnName, c.columnData, c.rowStart),
          });
        } catch (err) {
          if (err instanceof DataError) throw err;
          throw new DataError(`${file}: cannot read rows ${start}–${end} (${(err as Error).message})`, {
            cause: err,
          });
        }
        start = end;
      }
    },
  };
}

const utf8 = new TextDecoder();

/** Distinct values a chunk's identity cache holds at most. */
const SEEN_MAX = 1 << 16;

/** A decoded text value as a string ("" when missing). */
export function textOf(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (v instanceof Uint8Array) return utf8.decode(v);
  return String(v);
}

/**
 * Text values to category codes, one chunk at a time: categories in order of first appearance.
 * Dictionary-encoded pages hand out the same byte array for every row of one value, so a chunk's
 * lookups go by identity first and decode a value only once per chunk.
 */
export class CodeBuilder {
  readonly codes: Int32Array;
  readonly categories: string[] = [];
  private readonly lookup = new Map<string, number>();

  constructor(n: number) {
    this.codes = new Int32Array(n);
  }

  /** Code the values of one chunk starting at row `rowStart`. */
  add(values: DecodedArray, rowStart: number): void {
    const seen = new Map<unknown, number>();
    const n = values.length;
    for (let i = 0; i < n; i++) {
      const v = (values as ArrayLike<unknown>)[i];
      let c = seen.get(v);
      if (c === undefined) {
        const s = textOf(v);
        c = this.lookup.get(s);
        if (c === undefined) {
          c = this.categories.length;
          this.categories.push(s);
          this.lookup.set(s, c);
        }
        // Bounded: plain-encoded pages give every row its own array, and then identity never repeats.
        if (seen.size < SEEN_MAX && v !== null && v !== undefined) seen.set(v, c);
      }
      this.codes[rowStart + i] = c;
    }
  }
}

/** Numbers of one chunk written into `out` at `rowStart` (missing values as NaN). */
export function putNumbers(out: Float32Array | Float64Array, values: DecodedArray, rowStart: number): void {
  if (!Array.isArray(values) && (values as { constructor: unknown }).constructor === out.constructor) {
    out.set(values as Float32Array & Float64Array, rowStart);
    return;
  }
  const n = values.length;
  for (let i = 0; i < n; i++) {
    const v = (values as ArrayLike<unknown>)[i];
    out[rowStart + i] = v === null || v === undefined ? Number.NaN : Number(v);
  }
}

/**
 * A vendor's tabular file as named columns, whatever it was written as: parquet (10x, or re-written by
 * R's arrow) or CSV/TSV, gzipped or not. Columns come back typed (numbers, strings, categoricals
 * where parquet stores them so); int64 ids stay exact (BigInt) in parquet.
 */
import { basename, dirname } from "node:path";
import { strings } from "../../data/arrays.js";
import type { Column } from "../../data/dataframe.js";
import { DataError } from "../data-error.js";
import { columnInfos, readParquetColumns } from "../parquet/columns.js";
import { openParquet } from "../parquet/source.js";
import { FsStore } from "../store/fs-store.js";
import { readDelimited, typedColumn } from "./text.js";

/** Columns of a file, in file order. */
export interface FileColumns {
  readonly file: string;
  readonly nRows: number;
  readonly order: readonly string[];
  readonly columns: Readonly<Record<string, Column>>;
}

/** Options of {@link readFrameFile}. */
export interface FrameFileOptions {
  /** Only these columns (absent ones are an error naming the file); default every column. */
  readonly columns?: readonly string[];
  /** Columns kept as text in CSV files even when numeric (ids). */
  readonly textColumns?: readonly string[];
}

/** Read a parquet or delimited text file (told apart by its magic bytes, not its name). */
export async function readFrameFile(file: string, opts: FrameFileOptions = {}): Promise<FileColumns> {
  if (/\.parquet$/i.test(file)) {
    const store = new FsStore(dirname(file));
    let src: Awaited<ReturnType<typeof openParquet>>;
    try {
      src = await openParquet(store, `/${basename(file)}`);
    } catch (err) {
      throw new DataError(`${file}: not a readable parquet file (${(err as Error).message})`, { cause: err });
    }
    const all = columnInfos(src)
      .filter((c) => c.kind !== "nested")
      .map((c) => c.name);
    const names = opts.columns ?? all;
    for (const n of names)
      if (!all.includes(n)) throw new DataError(`${file}: no column "${n}" (columns: ${all.join(", ")})`);
    let values: Awaited<ReturnType<typeof readParquetColumns>>;
    try {
      values = await readParquetColumns([src], names);
    } catch (err) {
      throw new DataError(`${file}: ${(err as Error).message}`, { cause: err });
    }
    const columns: Record<string, Column> = {};
    for (const n of names) {
      const v = values[n]!;
      columns[n] =
        v.kind === "binary" ? strings(v.values.map((b) => (b ? Buffer.from(b).toString("utf8") : null))) : v;
    }
    return { file, nRows: src.numRows, order: names, columns };
  }
  const t = await readDelimited(file);
  const header = t.header ?? [];
  const names = opts.columns ?? header;
  const columns: Record<string, Column> = {};
  for (const n of names) {
    const i = header.indexOf(n);
    if (i < 0) throw new DataError(`${file}: no column "${n}" (columns: ${header.join(", ")})`);
    columns[n] = opts.textColumns?.includes(n) ? strings(t.columns[i]!) : typedColumn(t.columns[i]!);
  }
  return { file, nRows: t.nRows, order: names, columns };
}

/** A column's values as float64 (NaN where missing), or a DataError naming the file. */
export function numericColumn(fc: FileColumns, name: string): Float64Array {
  const c = fc.columns[name];
  if (!c) throw new DataError(`${fc.file}: no column "${name}" (columns: ${fc.order.join(", ")})`);
  if (c.kind === "dense" || c.kind === "nullable") {
    const out = new Float64Array(c.data.length);
    for (let i = 0; i < out.length; i++)
      out[i] = c.kind === "nullable" && c.mask[i] ? Number.NaN : Number(c.data[i]!);
    return out;
  }
  throw new DataError(`${fc.file}: column "${name}" is not numeric`);
}

/** A column's values as text (ids), whatever type it was stored as. */
export function textColumn(fc: FileColumns, name: string): string[] {
  const c = fc.columns[name];
  if (!c) throw new DataError(`${fc.file}: no column "${name}" (columns: ${fc.order.join(", ")})`);
  switch (c.kind) {
    case "string":
      return c.values.map((v) => v ?? "");
    case "dense":
    case "nullable":
      return Array.from(c.data as ArrayLike<number | bigint>, (v) => String(v));
    case "categorical": {
      const cats =
        c.categories.kind === "string"
          ? c.categories.values
          : Array.from(c.categories.data as ArrayLike<number>, String);
      return Array.from(c.codes, (k) => (k < 0 ? "" : String(cats[k] ?? "")));
    }
  }
}

/** The first existing file among `names` in `dir` (tried in order), or null. */
export function firstFile(
  dir: string,
  names: readonly string[],
  exists: (p: string) => boolean,
): string | null {
  for (const n of names) if (exists(`${dir}/${n}`)) return `${dir}/${n}`;
  return null;
}

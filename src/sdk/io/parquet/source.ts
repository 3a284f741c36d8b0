/**
 * Opening a parquet file that sits in a zarr store as a raw key (parquet files are not zarr nodes).
 *
 * The file is read footer first through the store's `getRange` (suffix reads), so over HTTP only the
 * footer and the column chunks a caller asks for are fetched. Stores without `getRange` fall back to
 * one `get` of the whole file.
 */
import { type AsyncBuffer, type FileMetaData, parquetMetadata } from "hyparquet";
import type { AbsolutePath, Readable } from "zarrita";

/** A zarrita-compatible store: `get(key)` and optionally `getRange(key, range)`. */
export type ByteStore = Readable;

/** An opened parquet file: its key, a range-reading buffer and its parsed footer. */
export interface ParquetSource {
  /** Store key of the file (`/points/x/points.parquet/part.0.parquet`). */
  readonly key: string;
  /** Range reader over the file, for hyparquet. */
  readonly file: AsyncBuffer;
  /** Parsed footer (GeoParquet columns are NOT re-typed: WKB stays raw bytes). */
  readonly metadata: FileMetaData;
  /** Key/value metadata of the footer (`pandas`, `geo`, `ARROW:schema` …). */
  readonly kv: Readonly<Record<string, string>>;
  /** Number of rows. */
  readonly numRows: number;
}

const MAGIC = 0x31524150; // "PAR1" little endian

/** Join a group path and a relative key into an absolute store key (`/a/b/c`). */
export function storeKey(...parts: string[]): AbsolutePath {
  const segs = parts.flatMap((p) => p.split("/")).filter((s) => s.length > 0 && s !== ".");
  return `/${segs.join("/")}` as AbsolutePath;
}

/** Errors a filesystem store raises for a key whose path runs through a file or names a folder. */
function isNotAFile(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "EISDIR" || code === "ENOTDIR" || code === "ENOENT";
}

function toArrayBuffer(u8: Uint8Array): ArrayBuffer {
  if (u8.byteOffset === 0 && u8.byteLength === u8.buffer.byteLength && u8.buffer instanceof ArrayBuffer) {
    return u8.buffer;
  }
  return u8.slice().buffer as ArrayBuffer;
}

/**
 * Open the parquet file at `key`, or return `undefined` when there is no file there (missing key, or
 * a folder). Throws, naming the key, when bytes exist but are not a readable parquet file.
 */
export async function probeParquet(store: ByteStore, key: string): Promise<ParquetSource | undefined> {
  const k = storeKey(key);
  const getRange = store.getRange?.bind(store);
  if (!getRange) {
    let bytes: Uint8Array | undefined;
    try {
      bytes = await store.get(k);
    } catch (err) {
      if (isNotAFile(err)) return undefined;
      throw new Error(`${k}: cannot read parquet file (${(err as Error).message})`);
    }
    if (!bytes) return undefined;
    const metadata = parseFooter(k, bytes, bytes.byteLength);
    const buf = toArrayBuffer(bytes);
    const file: AsyncBuffer = { byteLength: buf.byteLength, slice: (s, e) => buf.slice(s, e) };
    return makeSource(k, file, metadata);
  }
  let tail: Uint8Array | undefined;
  try {
    tail = await getRange(k, { suffixLength: 8 });
  } catch (err) {
    if (isNotAFile(err)) return undefined;
    throw new Error(`${k}: cannot read parquet file (${(err as Error).message})`);
  }
  if (!tail) return undefined;
  if (tail.byteLength < 8 || new DataView(tail.buffer, tail.byteOffset, 8).getUint32(4, true) !== MAGIC) {
    throw new Error(`${k}: not a parquet file or truncated (no "PAR1" magic at the end)`);
  }
  const metaLen = new DataView(tail.buffer, tail.byteOffset, 8).getUint32(0, true);
  let footer: Uint8Array | undefined;
  try {
    footer = await getRange(k, { suffixLength: metaLen + 8 });
  } catch (err) {
    throw new Error(`${k}: corrupt parquet footer: metadata length ${metaLen} (${(err as Error).message})`);
  }
  if (!footer || footer.byteLength !== metaLen + 8) {
    throw new Error(`${k}: corrupt parquet footer: metadata length ${metaLen} exceeds the file`);
  }
  const metadata = parseFooter(k, footer, metaLen + 8);
  // A suffix read does not tell the file size. Everything the footer points at ends where the
  // footer begins (column chunks, page indexes, bloom filters), so that end plus the footer is the
  // size of every well-formed file; hyparquet only uses it as a default slice end.
  const byteLength = dataEnd(metadata) + metaLen + 8;
  const file: AsyncBuffer = {
    byteLength,
    async slice(start: number, end?: number): Promise<ArrayBuffer> {
      const stop = end ?? byteLength;
      const got = await getRange(k, { offset: start, length: stop - start });
      if (!got || got.byteLength < stop - start) {
        throw new Error(`${k}: truncated parquet file (bytes ${start}–${stop} missing)`);
      }
      return toArrayBuffer(got);
    },
  };
  return makeSource(k, file, metadata);
}

/** Open the parquet file at `key`; throws naming the key when it is missing or unreadable. */
export async function openParquet(store: ByteStore, key: string): Promise<ParquetSource> {
  const src = await probeParquet(store, key);
  if (!src) throw new Error(`${storeKey(key)}: parquet file not found`);
  return src;
}

function parseFooter(key: string, bytes: Uint8Array, length: number): FileMetaData {
  if (length < 12) throw new Error(`${key}: not a parquet file (only ${length} bytes)`);
  try {
    return parquetMetadata(bytes, { geoparquet: false });
  } catch (err) {
    throw new Error(`${key}: corrupt parquet footer (${(err as Error).message})`);
  }
}

/** End offset of the last byte the footer points at. */
function dataEnd(md: FileMetaData): number {
  let end = 4;
  for (const rg of md.row_groups) {
    for (const c of rg.columns) {
      const m = c.meta_data;
      if (m) {
        const start = Number(m.dictionary_page_offset ?? m.data_page_offset);
        end = Math.max(end, start + Number(m.total_compressed_size));
        if (m.bloom_filter_offset !== undefined) {
          end = Math.max(end, Number(m.bloom_filter_offset) + (m.bloom_filter_length ?? 0));
        }
      }
      if (c.column_index_offset !== undefined) {
        end = Math.max(end, Number(c.column_index_offset) + (c.column_index_length ?? 0));
      }
      if (c.offset_index_offset !== undefined) {
        end = Math.max(end, Number(c.offset_index_offset) + (c.offset_index_length ?? 0));
      }
    }
  }
  return end;
}

function makeSource(key: string, file: AsyncBuffer, metadata: FileMetaData): ParquetSource {
  const kv: Record<string, string> = {};
  for (const { key: k, value } of metadata.key_value_metadata ?? []) if (value !== undefined) kv[k] = value;
  return { key, file, metadata, kv, numRows: Number(metadata.num_rows) };
}

/**
 * Parsing of the zip container structures (end of central directory, ZIP64 records, central directory, local
 * headers). Pure functions over bytes plus one reader-driven routine; browser-safe.
 *
 * Reference: PKWARE APPNOTE.TXT 6.3 §4.3 (we support single-disk archives, STORED and DEFLATE entries).
 * @module
 */
import type { RangeReader, ReadOptions } from "./range-reader.js";

/** Compression method numbers used by zarr zips. */
export const STORED = 0;
/** Compression method number of DEFLATE. */
export const DEFLATE = 8;

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;

/** Fixed sizes of the records. */
const EOCD_SIZE = 22;
const ZIP64_LOCATOR_SIZE = 20;
const ZIP64_EOCD_SIZE = 56;
const CENTRAL_SIZE = 46;
/** Size of the fixed part of a local file header. */
export const LOCAL_HEADER_SIZE = 30;
/** Largest distance of the EOCD from the end: record + maximal comment. */
const MAX_EOCD_SEARCH = EOCD_SIZE + 0xffff;
/**
 * How much of the tail to read when opening: the EOCD with the longest possible comment plus the ZIP64 locator and
 * record (65 633 bytes), rounded up to 66 KiB. The central directory of an archive with a few hundred entries comes
 * with it, saving a round trip over HTTP; a larger directory costs one more read.
 */
export const TAIL_BYTES = 66 * 1024;

/** One central-directory record. */
export interface ZipEntry {
  /** Entry name as stored (UTF-8 decoded), including any root prefix. */
  name: string;
  /** Position in the central directory (0-based). */
  index: number;
  /** Compression method (0 STORED, 8 DEFLATE, others unsupported). */
  method: number;
  /** General-purpose bit flags (bit 0 = encrypted). */
  flags: number;
  /** CRC-32 of the uncompressed data. */
  crc32: number;
  /** Bytes of (compressed) data in the file. */
  compressedSize: number;
  /** Bytes after decompression. */
  uncompressedSize: number;
  /** Offset of the entry's local file header. */
  localHeaderOffset: number;
  /** Byte length of the encoded name (the local header repeats it). */
  nameLength: number;
  /** Byte length of the central-directory extra field (a hint for the local one). */
  extraLength: number;
  /** True for names ending in `/` (explicit directory entries). */
  isDirectory: boolean;
}

/** The parsed directory of a zip file. */
export interface ZipDirectory {
  /** Total file size. */
  fileSize: number;
  /** Every central-directory record, in order (duplicates included). */
  entries: ZipEntry[];
  /** Offset and size of the central directory. */
  cdOffset: number;
  /** Size of the central directory in bytes. */
  cdSize: number;
  /** Whether ZIP64 end records were present. */
  zip64: boolean;
  /** The archive comment (UTF-8 decoded). */
  comment: string;
}

const utf8 = new TextDecoder("utf-8");

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function u64(location: string, dv: DataView, at: number, what: string): number {
  const v = dv.getBigUint64(at, true);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${location}: ZIP64 ${what} ${v} is too large`);
  return Number(v);
}

/** Position (within `tail`) of the EOCD record that ends exactly at the end of the file, or -1. */
export function findEocd(tail: Uint8Array): number {
  const dv = view(tail);
  const last = tail.byteLength - EOCD_SIZE;
  const first = Math.max(0, tail.byteLength - MAX_EOCD_SEARCH);
  for (let i = last; i >= first; i--) {
    // A match must also have a comment length that reaches exactly to the end; this rejects the signature bytes
    // occurring by chance inside data or a comment.
    if (
      dv.getUint32(i, true) === SIG_EOCD &&
      i + EOCD_SIZE + dv.getUint16(i + 20, true) === tail.byteLength
    ) {
      return i;
    }
  }
  return -1;
}

/** Apply a ZIP64 extended-information extra field (0x0001) to the saturated fields of an entry. */
function applyZip64Extra(location: string, extra: DataView, e: ZipEntry): void {
  let p = 0;
  while (p + 4 <= extra.byteLength) {
    const tag = extra.getUint16(p, true);
    const size = extra.getUint16(p + 2, true);
    const body = p + 4;
    if (body + size > extra.byteLength) break;
    if (tag === 0x0001) {
      // Only the fields saturated in the fixed record are present, in this order.
      let q = body;
      const take = (what: string): number => {
        if (q + 8 > body + size)
          throw new Error(`${location}: entry "${e.name}": ZIP64 extra field too short`);
        const v = u64(location, extra, q, what);
        q += 8;
        return v;
      };
      if (e.uncompressedSize === 0xffffffff) e.uncompressedSize = take("uncompressed size");
      if (e.compressedSize === 0xffffffff) e.compressedSize = take("compressed size");
      if (e.localHeaderOffset === 0xffffffff) e.localHeaderOffset = take("local header offset");
      return;
    }
    p = body + size;
  }
}

/**
 * Parse `count` central-directory records from `cd` (which starts at file offset `cdOffset`).
 * Throws on a bad signature, a record running past the directory, or a count mismatch.
 */
export function parseCentralDirectory(
  location: string,
  cd: Uint8Array,
  count: number,
  cdOffset: number,
): ZipEntry[] {
  const dv = view(cd);
  const entries: ZipEntry[] = [];
  let p = 0;
  while (p < cd.byteLength) {
    if (p + CENTRAL_SIZE > cd.byteLength) {
      throw new Error(
        `${location}: central directory record at byte ${cdOffset + p} is cut short (corrupt zip)`,
      );
    }
    if (dv.getUint32(p, true) !== SIG_CENTRAL) {
      throw new Error(
        `${location}: bad central directory signature at byte ${cdOffset + p} (corrupt zip or wrong directory offset)`,
      );
    }
    const nameLength = dv.getUint16(p + 28, true);
    const extraLength = dv.getUint16(p + 30, true);
    const commentLength = dv.getUint16(p + 32, true);
    const end = p + CENTRAL_SIZE + nameLength + extraLength + commentLength;
    if (end > cd.byteLength) {
      throw new Error(
        `${location}: central directory record at byte ${cdOffset + p} runs past the directory`,
      );
    }
    const name = utf8.decode(cd.subarray(p + CENTRAL_SIZE, p + CENTRAL_SIZE + nameLength));
    const e: ZipEntry = {
      name,
      index: entries.length,
      flags: dv.getUint16(p + 8, true),
      method: dv.getUint16(p + 10, true),
      crc32: dv.getUint32(p + 16, true),
      compressedSize: dv.getUint32(p + 20, true),
      uncompressedSize: dv.getUint32(p + 24, true),
      localHeaderOffset: dv.getUint32(p + 42, true),
      nameLength,
      extraLength,
      isDirectory: name.endsWith("/"),
    };
    const extraStart = p + CENTRAL_SIZE + nameLength;
    applyZip64Extra(location, new DataView(cd.buffer, cd.byteOffset + extraStart, extraLength), e);
    if (e.localHeaderOffset + LOCAL_HEADER_SIZE > cdOffset) {
      throw new Error(
        `${location}: entry "${name}" points at byte ${e.localHeaderOffset}, past the central directory (corrupt zip)`,
      );
    }
    entries.push(e);
    p = end;
  }
  if (entries.length !== count) {
    throw new Error(
      `${location}: central directory holds ${entries.length} entries, the end record says ${count} (corrupt zip)`,
    );
  }
  return entries;
}

/**
 * Read and parse the directory of the zip behind `reader`: one tail read (EOCD, ZIP64 records and, for small
 * archives, the central directory) plus at most one read for a central directory that did not fit in the tail.
 */
export async function readZipDirectory(reader: RangeReader, opts?: ReadOptions): Promise<ZipDirectory> {
  const loc = reader.location;
  let tail: Uint8Array;
  let fileSize: number;
  if (reader.readSuffix) {
    ({ bytes: tail, size: fileSize } = await reader.readSuffix(TAIL_BYTES, opts));
  } else {
    fileSize = await reader.size(opts);
    const n = Math.min(fileSize, TAIL_BYTES);
    tail = await reader.read(fileSize - n, n, opts);
  }
  if (fileSize < EOCD_SIZE) throw new Error(`${loc}: too small to be a zip file (${fileSize} bytes)`);
  const tailStart = fileSize - tail.byteLength;
  const at = findEocd(tail);
  if (at < 0) {
    throw new Error(`${loc}: no zip end-of-central-directory record found (not a zip file, or truncated)`);
  }
  const dv = view(tail);
  const eocdPos = tailStart + at;
  if (dv.getUint16(at + 4, true) !== 0 || dv.getUint16(at + 6, true) !== 0) {
    throw new Error(`${loc}: multi-part (spanned) zip archives are not supported`);
  }
  let count = dv.getUint16(at + 10, true);
  let cdSize = dv.getUint32(at + 12, true);
  let cdOffset = dv.getUint32(at + 16, true);
  const comment = utf8.decode(tail.subarray(at + EOCD_SIZE));
  let cdEnd = eocdPos;
  let zip64 = false;

  const loc64 = at - ZIP64_LOCATOR_SIZE;
  if (loc64 >= 0 && dv.getUint32(loc64, true) === SIG_ZIP64_LOCATOR) {
    zip64 = true;
    const recOffset = u64(loc, dv, loc64 + 8, "end record offset");
    if (recOffset + ZIP64_EOCD_SIZE > eocdPos - ZIP64_LOCATOR_SIZE) {
      throw new Error(`${loc}: ZIP64 end record offset ${recOffset} is outside the file (corrupt zip)`);
    }
    const rec =
      recOffset >= tailStart
        ? tail.subarray(recOffset - tailStart, recOffset - tailStart + ZIP64_EOCD_SIZE)
        : await reader.read(recOffset, ZIP64_EOCD_SIZE, opts);
    const rv = view(rec);
    if (rv.getUint32(0, true) !== SIG_ZIP64_EOCD) {
      throw new Error(
        `${loc}: bad ZIP64 end-of-central-directory signature at byte ${recOffset} (corrupt zip)`,
      );
    }
    count = u64(loc, rv, 32, "entry count");
    cdSize = u64(loc, rv, 40, "central directory size");
    cdOffset = u64(loc, rv, 48, "central directory offset");
    cdEnd = recOffset;
  }
  if (cdOffset + cdSize > cdEnd) {
    throw new Error(
      `${loc}: central directory (offset ${cdOffset}, ${cdSize} bytes) lies outside the ${fileSize}-byte file ` +
        `(truncated or corrupt zip)`,
    );
  }
  const cd =
    cdOffset >= tailStart
      ? tail.subarray(cdOffset - tailStart, cdOffset - tailStart + cdSize)
      : await reader.read(cdOffset, cdSize, opts);
  const entries = parseCentralDirectory(loc, cd, count, cdOffset);
  return { fileSize, entries, cdOffset, cdSize, zip64, comment };
}

/**
 * Offset of an entry's data, from its local header (`header` = bytes read at `entry.localHeaderOffset`, at least
 * 30 long). `limit` is where entry data must end (the central directory's offset).
 */
export function localDataOffset(
  location: string,
  header: Uint8Array,
  entry: ZipEntry,
  limit: number,
): number {
  if (header.byteLength < LOCAL_HEADER_SIZE) {
    throw new Error(`${location}: local header of "${entry.name}" is cut short (truncated zip)`);
  }
  const dv = view(header);
  if (dv.getUint32(0, true) !== SIG_LOCAL) {
    throw new Error(
      `${location}: bad local header signature for "${entry.name}" at byte ${entry.localHeaderOffset} (corrupt zip)`,
    );
  }
  const dataOffset =
    entry.localHeaderOffset + LOCAL_HEADER_SIZE + dv.getUint16(26, true) + dv.getUint16(28, true);
  if (dataOffset + entry.compressedSize > limit) {
    throw new Error(
      `${location}: data of "${entry.name}" (${entry.compressedSize} bytes at ${dataOffset}) runs into the ` +
        `central directory (corrupt zip)`,
    );
  }
  return dataOffset;
}

/**
 * A read-only zarr store over a `.zarr.zip`, reading only the bytes it needs through a {@link RangeReader}
 * (local file or HTTP). Browser-safe.
 *
 * Opening reads the tail and the central directory; each `get` then reads one local header plus the entry's data
 * (usually in a single read), and `getRange` on a STORED entry reads just the requested bytes.
 * @module
 */
import { DataError } from "../data-error.js";
import { inflateRaw } from "./inflate.js";
import { normalizePrefix, relativeKey, resolveRange } from "./keys.js";
import type { RangeReader } from "./range-reader.js";
import type { AbsolutePath, GetOptions, RangeQuery, ReadableStore, StoreEntry } from "./types.js";
import {
  DEFLATE,
  LOCAL_HEADER_SIZE,
  localDataOffset,
  readZipDirectory,
  STORED,
  type ZipDirectory,
  type ZipEntry,
} from "./zip-format.js";

/** Options of {@link ZipStore.open}. */
export interface ZipStoreOptions {
  /**
   * Folder inside the archive that is the zarr root, e.g. `"data.zarr/"`. Omit to detect it
   * ({@link detectRootPrefix}); pass `""` to use the archive root as is.
   */
  prefix?: string;
  /** Aborts the directory reads. */
  signal?: AbortSignal;
  /** Largest DEFLATE entry inflated, in bytes (default {@link MAX_INFLATED_BYTES}). */
  maxInflatedBytes?: number;
}

/**
 * Largest DEFLATE entry a store inflates (declared uncompressed size): an entry is inflated whole in
 * memory, so a zip bomb (a few MB declaring gigabytes) is refused before a byte is allocated.
 */
export const MAX_INFLATED_BYTES = 512 * 2 ** 20;

/**
 * Highest compression ratio DEFLATE can reach is about 1032:1; an entry declaring more (plus a small
 * allowance for tiny entries) has a directory that lies about it.
 */
const MAX_DEFLATE_RATIO = 1032;

/**
 * Why an entry name cannot be a store key (zip-slip names: absolute, `..` or `.` segments, empty
 * segments, backslashes, NUL), or null. Such entries are left out of the store.
 */
export function unsafeEntryName(name: string): string | null {
  if (name.includes("\0")) return "it contains a NUL byte";
  if (name.includes("\\")) return "it contains a backslash";
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return "it is an absolute path";
  const parts = (name.endsWith("/") ? name.slice(0, -1) : name).split("/");
  if (parts.some((p) => p === ".." || p === "." || p === "")) return 'it has an empty, "." or ".." segment';
  return null;
}

/** Zarr metadata (and consolidated metadata) file names that mark a folder as a zarr root. */
const ROOT_MARKERS = ["zarr.json", ".zgroup", ".zarray", ".zattrs", ".zmetadata", "zmetadata"];

/** Extra bytes read after a local header's name on the first `get`, to catch the local extra field in one read. */
const LOCAL_EXTRA_SLACK = 64;

/**
 * The folder that holds the zarr root. While every file sits under one single top folder and the current level has
 * no zarr metadata, descend into that folder; the result is `""` (archive root) or `"a.zarr/"`. Explicit directory
 * entries and macOS `__MACOSX/` resource folders are ignored.
 */
export function detectRootPrefix(names: Iterable<string>): string {
  let files = [...names].filter((n) => !n.endsWith("/") && !n.startsWith("__MACOSX/"));
  let prefix = "";
  for (;;) {
    if (files.some((n) => ROOT_MARKERS.includes(n))) return prefix;
    const first = files[0]?.split("/")[0];
    if (first === undefined || !files.every((n) => n.startsWith(`${first}/`))) return "";
    const cut = first.length + 1;
    prefix += `${first}/`;
    files = files.map((n) => n.slice(cut));
  }
}

/** A read-only zarr store backed by a zip archive. */
export class ZipStore implements ReadableStore {
  /** The zip file's path or URL. */
  readonly location: string;
  /** The reader used for every byte access. */
  readonly reader: RangeReader;
  /** Parsed central directory (every record, duplicates included, in archive order). */
  readonly directory: ZipDirectory;
  /** Root folder stripped from entry names (`""` or e.g. `"data.zarr/"`). */
  readonly prefix: string;
  /** Store key (relative, prefix stripped) → the entry that wins: the LAST central-directory record of a name. */
  readonly entries: ReadonlyMap<string, ZipEntry>;
  /** Entries left out because their name is no store key (zip-slip names), with the reason. */
  readonly skipped: readonly { name: string; reason: string }[];
  readonly #dataOffsets = new Map<number, Promise<number>>();
  readonly #maxInflated: number;

  private constructor(reader: RangeReader, directory: ZipDirectory, prefix: string, maxInflated: number) {
    this.location = reader.location;
    this.reader = reader;
    this.directory = directory;
    this.prefix = prefix;
    this.#maxInflated = maxInflated;
    const map = new Map<string, ZipEntry>();
    const skipped: { name: string; reason: string }[] = [];
    for (const e of directory.entries) {
      const unsafe = unsafeEntryName(e.name);
      if (unsafe) {
        skipped.push({ name: e.name, reason: unsafe });
        continue;
      }
      if (e.isDirectory || !e.name.startsWith(prefix)) continue;
      const key = e.name.slice(prefix.length);
      if (key === "") continue;
      // zarr-python's ZipStore appends a new record when a key is rewritten: later records supersede earlier ones.
      map.set(key, e);
    }
    this.entries = map;
    this.skipped = skipped;
  }

  /** Read the archive's directory and return a store over it. Throws a located Error for a corrupt zip. */
  static async open(reader: RangeReader, opts: ZipStoreOptions = {}): Promise<ZipStore> {
    const directory = await readZipDirectory(reader, { signal: opts.signal });
    const names = directory.entries.map((e) => e.name).filter((n) => unsafeEntryName(n) === null);
    let prefix = opts.prefix ?? detectRootPrefix(names);
    if (prefix !== "" && !prefix.endsWith("/")) prefix += "/";
    return new ZipStore(reader, directory, prefix, opts.maxInflatedBytes ?? MAX_INFLATED_BYTES);
  }

  /** The winning entry for a store key (`"/a/b"` or `"a/b"`), if any. */
  entry(key: string): ZipEntry | undefined {
    return this.entries.get(relativeKey(key));
  }

  #checkReadable(e: ZipEntry): void {
    if (e.flags & 1)
      throw new Error(`${this.location}: entry "${e.name}" is encrypted, which is not supported`);
    if (e.method !== STORED && e.method !== DEFLATE) {
      throw new Error(
        `${this.location}: entry "${e.name}" uses compression method ${e.method} (only STORED/DEFLATE)`,
      );
    }
    if (e.method === STORED && e.compressedSize !== e.uncompressedSize) {
      throw new DataError(
        `${this.location}: STORED entry "${e.name}" has compressed size ${e.compressedSize} ≠ size ${e.uncompressedSize}`,
      );
    }
    if (e.method === DEFLATE) {
      if (e.uncompressedSize > this.#maxInflated)
        throw new DataError(
          `${this.location}: entry "${e.name}" declares ${e.uncompressedSize} bytes uncompressed (${e.compressedSize} compressed); entries over ${this.#maxInflated} bytes are not inflated (a zip bomb, or store it uncompressed)`,
        );
      if (e.uncompressedSize > MAX_DEFLATE_RATIO * e.compressedSize + 4096)
        throw new DataError(
          `${this.location}: entry "${e.name}" declares ${e.uncompressedSize} bytes from ${e.compressedSize} compressed, more than DEFLATE can produce (corrupt or forged directory)`,
        );
    }
  }

  /** Data offset of an entry: reads its local header once, then cached. */
  #dataOffset(e: ZipEntry, signal?: AbortSignal): Promise<number> {
    let p = this.#dataOffsets.get(e.index);
    if (!p) {
      const len = Math.min(
        LOCAL_HEADER_SIZE + e.nameLength + LOCAL_EXTRA_SLACK,
        this.directory.cdOffset - e.localHeaderOffset,
      );
      p = this.reader
        .read(e.localHeaderOffset, len, { signal })
        .then((header) => localDataOffset(this.location, header, e, this.directory.cdOffset));
      this.#dataOffsets.set(e.index, p);
      p.catch(() => this.#dataOffsets.delete(e.index));
    }
    return p;
  }

  /** The raw (possibly compressed) bytes of an entry, with its local header read in the same request when unknown. */
  async #raw(e: ZipEntry, signal?: AbortSignal): Promise<Uint8Array> {
    const known = this.#dataOffsets.get(e.index);
    if (known) return this.reader.read(await known, e.compressedSize, { signal });
    // First access: read header + name + a little slack + data in one go (one request over HTTP).
    const limit = this.directory.cdOffset;
    const len = Math.min(
      LOCAL_HEADER_SIZE + e.nameLength + LOCAL_EXTRA_SLACK + e.compressedSize,
      limit - e.localHeaderOffset,
    );
    const buf = await this.reader.read(e.localHeaderOffset, len, { signal });
    const dataOffset = localDataOffset(this.location, buf, e, limit);
    this.#dataOffsets.set(e.index, Promise.resolve(dataOffset));
    const start = dataOffset - e.localHeaderOffset;
    if (start + e.compressedSize <= buf.byteLength) return buf.subarray(start, start + e.compressedSize);
    return this.reader.read(dataOffset, e.compressedSize, { signal });
  }

  async #decode(e: ZipEntry, raw: Uint8Array): Promise<Uint8Array> {
    if (e.method === STORED) return raw;
    try {
      return await inflateRaw(raw, e.uncompressedSize);
    } catch (err) {
      throw new DataError(`${this.location}: cannot inflate entry "${e.name}": ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** The whole value of `key`, or `undefined` if the archive has no such entry. */
  async get(key: AbsolutePath, opts?: GetOptions): Promise<Uint8Array | undefined> {
    const e = this.entry(key);
    if (!e) return undefined;
    this.#checkReadable(e);
    return this.#decode(e, await this.#raw(e, opts?.signal));
  }

  /** A byte range of `key`: read directly for STORED entries; DEFLATE entries are inflated whole, then sliced. */
  async getRange(key: AbsolutePath, range: RangeQuery, opts?: GetOptions): Promise<Uint8Array | undefined> {
    const e = this.entry(key);
    if (!e) return undefined;
    this.#checkReadable(e);
    const [start, end] = resolveRange(range, e.uncompressedSize);
    if (e.method === DEFLATE) return (await this.get(key, opts))?.subarray(start, end);
    const dataOffset = await this.#dataOffset(e, opts?.signal);
    return this.reader.read(dataOffset + start, end - start, { signal: opts?.signal });
  }

  /** Every (de-duplicated) key under `prefix` with its compressed size in the archive, sorted by key. */
  async list(prefix?: string): Promise<StoreEntry[]> {
    const want = normalizePrefix(prefix);
    const out: StoreEntry[] = [];
    for (const [key, e] of this.entries) if (key.startsWith(want)) out.push({ key, size: e.compressedSize });
    out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return out;
  }
}

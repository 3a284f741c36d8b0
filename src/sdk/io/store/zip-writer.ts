/**
 * Deterministic, crash-safe writing of `.zarr.zip` checkpoints (Node only), with yazl.
 *
 * Layout rules (see docs/formats/zip.md): every entry STORED (no compression, so chunks can be range-read), a
 * fixed DOS timestamp and no extra timestamp field (identical input → identical bytes, in any time zone), ZIP64
 * when needed, and the entry order root `zarr.json`, other metadata breadth-first, then everything else
 * lexicographically — so the central directory lists metadata first.
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { Readable } from "node:stream";
import yazl from "yazl";
import { absoluteKey } from "./keys.js";
import { recordPendingWrite } from "./pending-writes.js";
import type { ReadableStore } from "./types.js";

/** An entry's bytes, given directly or produced on demand (called once, when the entry's turn comes). */
export type ZipEntrySource = Uint8Array | (() => Promise<Uint8Array>);

/** One file to put in the archive. */
export interface ZipWriteEntry {
  /** Name inside the archive (relative, `/`-separated, no `..`). */
  name: string;
  /** Its bytes. */
  data: ZipEntrySource;
}

/** Options of `writeZip`. */
export interface WriteZipOptions {
  /** Write ZIP64 records even when not needed (for tests; yazl switches to ZIP64 by itself past 4 GiB/65535). */
  forceZip64Format?: boolean;
  /**
   * Entry timestamp. Default: 1980-01-01 00:00:00, the DOS epoch. Only the DOS date/time fields are written, so
   * the bytes do not depend on the time zone of the machine.
   */
  mtime?: Date;
  /** Keep the given entry order instead of the metadata-first order ({@link compareZarrEntryNames}). */
  keepOrder?: boolean;
  /**
   * The server's work dir: the temporary file is recorded in its ledger while it exists, so a restart after a
   * crash removes it (see `pending-writes.ts`).
   */
  workDir?: string;
}

/** Result of `writeZip`. */
export interface WrittenZip {
  /** Final path of the archive. */
  path: string;
  /** Size in bytes. */
  bytes: number;
  /** Hex SHA-256 of the archive bytes (computed while streaming them). */
  sha256: string;
}

/** Metadata file names that go before chunk data. */
const METADATA_NAMES = new Set(["zarr.json", ".zgroup", ".zattrs", ".zarray", ".zmetadata", "zmetadata"]);

/** Unread bytes allowed between producer and file before the producer waits (bounds memory for lazy sources). */
const HIGH_WATER = 16 * 1024 * 1024;
/** yazl's `addBuffer` limit; larger entries are streamed in slices. */
const MAX_BUFFER = 0x3fffffff;

/** The part of yazl's internal entry record that {@link releaseWrittenEntries} touches (yazl 3.3.1, pinned). */
interface YazlEntry {
  state: number;
  doFileDataPump: (() => void) | null;
}
/** yazl's `Entry.FILE_DATA_DONE`: the entry's bytes have gone to the output stream. */
const YAZL_FILE_DATA_DONE = 3;

/**
 * yazl keeps every entry record until the central directory is written, and each buffered entry's pump
 * closure holds its bytes: a 1.4 GB checkpoint held 1.4 GB until the end. Once an entry's data is out, yazl never
 * calls its pump again, so dropping the closure frees the bytes. Returns the entries still in flight.
 */
function releaseWrittenEntries(pending: YazlEntry[]): YazlEntry[] {
  const left: YazlEntry[] = [];
  for (const e of pending) {
    if (e.state >= YAZL_FILE_DATA_DONE) e.doFileDataPump = null;
    else left.push(e);
  }
  return left;
}

function rank(name: string): number {
  if (name === "zarr.json") return 0;
  const base = name.slice(name.lastIndexOf("/") + 1);
  return METADATA_NAMES.has(base) ? 1 : 2;
}

function depth(name: string): number {
  let n = 0;
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) === 47) n++;
  return n;
}

/**
 * Order of entries in a checkpoint: the root `zarr.json` first; then the other metadata files (`zarr.json`, and
 * v2 `.zgroup`/`.zattrs`/`.zarray`) breadth-first — shallower paths first, ties lexicographic; then every other
 * key lexicographically.
 */
export function compareZarrEntryNames(a: string, b: string): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) {
    const d = depth(a) - depth(b);
    if (d !== 0) return d;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function checkName(file: string, name: string, seen: Set<string>): void {
  if (
    name === "" ||
    name.startsWith("/") ||
    name.endsWith("/") ||
    name.includes("\\") ||
    name.includes("\0")
  ) {
    throw new Error(`${file}: invalid zip entry name ${JSON.stringify(name)}`);
  }
  if (name.split("/").some((s) => s === ".." || s === "." || s === "")) {
    throw new Error(`${file}: invalid zip entry name ${JSON.stringify(name)} (empty, "." or ".." segment)`);
  }
  if (seen.has(name)) throw new Error(`${file}: duplicate zip entry name ${JSON.stringify(name)}`);
  seen.add(name);
}

async function fsyncDir(dir: string): Promise<void> {
  try {
    const dh = await fsp.open(dir, "r");
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch {
    // Some platforms (Windows) cannot fsync a directory; the rename itself is still atomic there.
  }
}

/**
 * Write a zip of `entries` to `file`, atomically: the bytes go to `.<name>.<random>.tmp` (hidden) in the same folder, are
 * fsynced, then renamed over `file`. On any failure (an entry source throwing, a disk error) the temp file is
 * removed and a previous file at `file` is left untouched.
 */
export async function writeZip(
  file: string,
  entries: readonly ZipWriteEntry[],
  opts: WriteZipOptions = {},
): Promise<WrittenZip> {
  const finalPath = path.resolve(file);
  const seen = new Set<string>();
  for (const e of entries) checkName(finalPath, e.name, seen);
  const ordered = opts.keepOrder
    ? [...entries]
    : [...entries].sort((a, b) => compareZarrEntryNames(a.name, b.name));
  const mtime = opts.mtime ?? new Date(1980, 0, 1, 0, 0, 0);
  const forceZip64Format = opts.forceZip64Format ?? false;
  const entryOpts = { compress: false, mtime, forceDosTimestamp: true, forceZip64Format };

  await fsp.mkdir(path.dirname(finalPath), { recursive: true });
  const tmp = path.join(
    path.dirname(finalPath),
    `.${path.basename(finalPath)}.${randomBytes(6).toString("hex")}.tmp`,
  );
  const forget = await recordPendingWrite(opts.workDir, tmp);
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(tmp, "wx");
  } catch (err) {
    await forget();
    throw err;
  }
  let closed = false;
  const hash = createHash("sha256");
  let written = 0;
  let queued = 0;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  const zip = new yazl.ZipFile();
  const out = zip.outputStream as Readable;
  const fail = (err: unknown): void => {
    failure ??= err;
    out.destroy(err instanceof Error ? err : new Error(String(err)));
    notify();
  };
  zip.on("error", fail);

  const consumer = (async () => {
    try {
      for await (const chunk of out) {
        const buf = chunk as Buffer;
        hash.update(buf);
        let off = 0;
        while (off < buf.length) {
          const { bytesWritten } = await fh.write(buf, off, buf.length - off);
          off += bytesWritten;
        }
        written += buf.length;
        notify();
      }
    } catch (err) {
      failure ??= err;
      throw err;
    } finally {
      notify();
    }
  })();
  consumer.catch(() => {});

  const yazlEntries = (zip as unknown as { entries: YazlEntry[] }).entries;
  let inFlight: YazlEntry[] = [];
  try {
    for (const e of ordered) {
      if (failure) break;
      inFlight = releaseWrittenEntries(inFlight);
      const data = typeof e.data === "function" ? await e.data() : e.data;
      if (failure) break;
      if (!(data instanceof Uint8Array)) {
        throw new Error(`${finalPath}: entry "${e.name}": source did not produce a Uint8Array`);
      }
      const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      if (buf.length <= MAX_BUFFER) {
        zip.addBuffer(buf, e.name, entryOpts);
      } else {
        const slices = function* () {
          for (let o = 0; o < buf.length; o += 64 * 1024 * 1024) yield buf.subarray(o, o + 64 * 1024 * 1024);
        };
        zip.addReadStreamLazy(e.name, { ...entryOpts, size: buf.length }, (cb) =>
          cb(null, Readable.from(slices())),
        );
      }
      inFlight.push(yazlEntries[yazlEntries.length - 1]!);
      queued += buf.length + 30 + Buffer.byteLength(e.name);
      while (!failure && queued - written > HIGH_WATER)
        await new Promise<void>((r) => {
          wake = r;
        });
    }
    if (failure) throw failure;
    zip.end({ forceZip64Format, comment: "" });
    await consumer;
    if (failure) throw failure;
    await fh.sync();
    await fh.close();
    closed = true;
    await fsp.rename(tmp, finalPath);
    await fsyncDir(path.dirname(finalPath));
    return { path: finalPath, bytes: written, sha256: hash.digest("hex") };
  } catch (err) {
    failure ??= err;
    out.destroy();
    await consumer.catch(() => {});
    if (!closed) await fh.close().catch(() => {});
    await fsp.rm(tmp, { force: true }).catch(() => {});
    const msg = err instanceof Error ? err.message : String(err);
    throw new Error(msg.startsWith(finalPath) ? msg : `${finalPath}: writing the zip failed: ${msg}`, {
      cause: err,
    });
  } finally {
    await forget();
  }
}

/**
 * Zip every key of a listable store (an `FsStore` working directory or a `MemoryStore`) into `file`, reading each
 * value only when its turn comes.
 */
export async function writeZipFromStore(
  file: string,
  store: ReadableStore & Required<Pick<ReadableStore, "list">>,
  opts: WriteZipOptions = {},
): Promise<WrittenZip> {
  const keys = await store.list();
  const entries: ZipWriteEntry[] = keys.map(({ key }) => ({
    name: key,
    data: async () => {
      const v = await store.get(absoluteKey(key));
      if (!v) throw new Error(`${store.location}: key "${key}" disappeared while zipping`);
      return v;
    },
  }));
  return writeZip(file, entries, opts);
}

/** `"<prefix>-<first 12 hex digits of sha256>.sdata.zarr.zip"`: the content-addressed checkpoint file name. */
export function contentHashName(prefix: string, sha256: string): string {
  if (!/^[0-9a-f]{12,}$/i.test(sha256))
    throw new Error(`contentHashName: not a hex digest: ${JSON.stringify(sha256)}`);
  return `${prefix}-${sha256.slice(0, 12).toLowerCase()}.sdata.zarr.zip`;
}

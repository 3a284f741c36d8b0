/**
 * A zarr directory store on the local file system (Node only).
 * @module
 */
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { keySegments, normalizePrefix, resolveRange } from "./keys.js";
import type { AbsolutePath, GetOptions, RangeQuery, StoreEntry, WritableStore } from "./types.js";

/** Error codes that mean "this key is not a file here" rather than a real I/O failure. */
const MISSING = new Set(["ENOENT", "ENOTDIR", "EISDIR"]);

function isMissing(err: unknown): boolean {
  return typeof err === "object" && err !== null && MISSING.has((err as NodeJS.ErrnoException).code ?? "");
}

/**
 * Directory store: key `"/a/b/c"` is the file `<root>/a/b/c`.
 * Keys containing `..` (or other segments that could leave the root) are rejected with an Error.
 */
export class FsStore implements WritableStore {
  /** Absolute path of the store's root folder. */
  readonly location: string;

  /** @param root folder of the store (need not exist yet when only writing). */
  constructor(root: string) {
    this.location = path.resolve(root);
  }

  /** Absolute file path for `key`, after checking it stays inside the root. */
  filePath(key: string): string {
    return path.join(this.location, ...keySegments(this.location, key));
  }

  /** Whole file, or `undefined` when it does not exist. */
  async get(key: AbsolutePath, opts?: GetOptions): Promise<Uint8Array | undefined> {
    const file = this.filePath(key);
    try {
      const buf = await fsp.readFile(file, { signal: opts?.signal });
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw new Error(`${this.location}: cannot read ${key}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** A byte range of a file, read with one positioned read. */
  async getRange(key: AbsolutePath, range: RangeQuery, opts?: GetOptions): Promise<Uint8Array | undefined> {
    const file = this.filePath(key);
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, "r");
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw new Error(`${this.location}: cannot open ${key}: ${(err as Error).message}`, { cause: err });
    }
    try {
      opts?.signal?.throwIfAborted();
      const { size } = await fh.stat();
      const [start, end] = resolveRange(range, size);
      const out = new Uint8Array(end - start);
      let done = 0;
      while (done < out.length) {
        const { bytesRead } = await fh.read(out, done, out.length - done, start + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === out.length ? out : out.subarray(0, done);
    } finally {
      await fh.close();
    }
  }

  /** Write a file, creating parent folders as needed. */
  async set(key: AbsolutePath, value: Uint8Array): Promise<void> {
    const file = this.filePath(key);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await fsp.writeFile(file, value);
  }

  /** Every file below the root (optionally under `prefix`), with its size on disk, sorted by key. */
  async list(prefix?: string): Promise<StoreEntry[]> {
    const want = normalizePrefix(prefix);
    const out: StoreEntry[] = [];
    // Start the walk at the deepest folder the prefix names, so listing one element does not scan the store.
    const slash = want.lastIndexOf("/");
    const startRel = slash < 0 ? "" : want.slice(0, slash);
    if (startRel !== "") keySegments(this.location, startRel);
    const walk = async (rel: string): Promise<void> => {
      let dirents: import("node:fs").Dirent[];
      try {
        dirents = await fsp.readdir(rel ? path.join(this.location, rel) : this.location, {
          withFileTypes: true,
        });
      } catch (err) {
        if (isMissing(err)) return;
        throw new Error(`${this.location}: cannot list ${rel || "."}: ${(err as Error).message}`, {
          cause: err,
        });
      }
      for (const d of dirents) {
        const key = rel ? `${rel}/${d.name}` : d.name;
        if (d.isDirectory()) {
          if (want === "" || key.startsWith(want) || want.startsWith(`${key}/`)) await walk(key);
        } else if (d.isFile() || d.isSymbolicLink()) {
          if (!key.startsWith(want)) continue;
          try {
            const st = await fsp.stat(path.join(this.location, key));
            if (st.isFile()) out.push({ key, size: st.size });
          } catch (err) {
            if (!isMissing(err)) throw err;
          }
        }
      }
    };
    await walk(startRel);
    out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return out;
  }
}

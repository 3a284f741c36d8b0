/**
 * A zarr directory store on the local file system (Node only).
 *
 * Links: a key's file (or a folder on its way) may be a symlink, followed only when it resolves inside
 * the store's confinement root (`io/confine.ts`: the data dir holding the store, else the folder
 * holding it); a link leading out is an error naming the key, never a silent miss. Reads open with
 * `O_NONBLOCK` and refuse anything but a regular file, so a FIFO or a device never blocks a reader.
 * Writes never follow a link: a folder leading out is refused and a file that is a link is replaced,
 * not written through.
 * @module
 */
import { constants, promises as fsp } from "node:fs";
import * as path from "node:path";
import { checkInside, confineRootFor, isInside, LinkOutsideError } from "../confine.js";
import { DataError } from "../data-error.js";
import { keySegments, normalizePrefix, resolveRange } from "./keys.js";
import type { AbsolutePath, GetOptions, RangeQuery, StoreEntry, WritableStore } from "./types.js";

/** Error codes that mean "this key is not a file here" rather than a real I/O failure. */
const MISSING = new Set(["ENOENT", "ENOTDIR", "EISDIR"]);

function isMissing(err: unknown): boolean {
  return typeof err === "object" && err !== null && MISSING.has((err as NodeJS.ErrnoException).code ?? "");
}

/** Flags of every read: no blocking open (a FIFO), no following a final symlink unchecked. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
/** Flags of every write: a final symlink is never written through. */
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;

/** Options of `FsStore`. */
export interface FsStoreOptions {
  /**
   * The folder links may lead into (a real path): default the data dir holding the store, else the
   * folder holding it (`confineRootFor`); null follows links anywhere (trusted folders only).
   */
  confine?: string | null;
}

/**
 * Directory store: key `"/a/b/c"` is the file `<root>/a/b/c`.
 * Keys containing `..` (or other segments that could leave the root) are rejected with an Error.
 */
export class FsStore implements WritableStore {
  /** Absolute path of the store's root folder. */
  readonly location: string;
  readonly #confine: string | null | undefined;
  #root: string | null | undefined;
  /** Folders already checked to resolve inside the confinement root. */
  readonly #folders = new Map<string, Promise<void>>();

  /** @param root folder of the store (need not exist yet when only writing). */
  constructor(root: string, opts: FsStoreOptions = {}) {
    this.location = path.resolve(root);
    this.#confine = opts.confine;
  }

  /** Absolute file path for `key`, after checking it stays inside the root. */
  filePath(key: string): string {
    return path.join(this.location, ...keySegments(this.location, key));
  }

  /** The confinement root (computed once), or null when links are followed anywhere. */
  #confinement(): string | null {
    if (this.#root === undefined)
      this.#root = this.#confine === undefined ? confineRootFor(this.location) : this.#confine;
    return this.#root;
  }

  /** Check (once per folder) that `dir` resolves inside the confinement root. */
  #checkFolder(dir: string, key: string): Promise<void> {
    const root = this.#confinement();
    if (root === null) return Promise.resolve();
    let p = this.#folders.get(dir);
    if (!p) {
      p = checkInside(dir, root, `${this.location}: the folder of ${key}`).then(() => undefined);
      this.#folders.set(dir, p);
      p.catch(() => this.#folders.delete(dir));
    }
    return p;
  }

  /**
   * Open `key` for reading: its folder and, when it is a link, its target checked inside the
   * confinement root; only a regular file is accepted. Undefined when there is no such file.
   */
  async #openRead(key: string): Promise<{ fh: fsp.FileHandle; size: number } | undefined> {
    const file = this.filePath(key);
    await this.#checkFolder(path.dirname(file), key);
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, READ_FLAGS);
    } catch (err) {
      if (isMissing(err)) return undefined;
      if ((err as NodeJS.ErrnoException).code !== "ELOOP")
        throw new Error(`${this.location}: cannot open ${key}: ${(err as Error).message}`, { cause: err });
      // The file is a symlink: followed only when its target stays inside.
      const root = this.#confinement();
      const target = root === null ? file : await checkInside(file, root, `${this.location}: ${key}`);
      try {
        fh = await fsp.open(target, READ_FLAGS);
      } catch (err2) {
        if (isMissing(err2)) return undefined;
        throw new Error(`${this.location}: cannot open ${key}: ${(err2 as Error).message}`, { cause: err2 });
      }
    }
    try {
      const st = await fh.stat();
      if (st.isDirectory()) {
        await fh.close();
        return undefined;
      }
      if (!st.isFile())
        throw new DataError(
          `${this.location}: ${key} is not a regular file (a FIFO, socket or device is not read)`,
        );
      return { fh, size: st.size };
    } catch (err) {
      await fh.close().catch(() => {});
      throw err;
    }
  }

  /** Whole file, or `undefined` when it does not exist. */
  async get(key: AbsolutePath, opts?: GetOptions): Promise<Uint8Array | undefined> {
    const opened = await this.#openRead(key);
    if (!opened) return undefined;
    const { fh, size } = opened;
    try {
      opts?.signal?.throwIfAborted();
      const out = new Uint8Array(size);
      let done = 0;
      while (done < size) {
        const { bytesRead } = await fh.read(out, done, size - done, done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === size ? out : out.subarray(0, done);
    } catch (err) {
      if (err instanceof LinkOutsideError || (err as Error).name === "AbortError") throw err;
      throw new Error(`${this.location}: cannot read ${key}: ${(err as Error).message}`, { cause: err });
    } finally {
      await fh.close();
    }
  }

  /** A byte range of a file, read with one positioned read. */
  async getRange(key: AbsolutePath, range: RangeQuery, opts?: GetOptions): Promise<Uint8Array | undefined> {
    const opened = await this.#openRead(key);
    if (!opened) return undefined;
    const { fh, size } = opened;
    try {
      opts?.signal?.throwIfAborted();
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

  /** Write a file, creating parent folders as needed; never through a link leading out. */
  async set(key: AbsolutePath, value: Uint8Array): Promise<void> {
    const file = this.filePath(key);
    const dir = path.dirname(file);
    await fsp.mkdir(dir, { recursive: true });
    await this.#checkFolder(dir, key);
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, WRITE_FLAGS, 0o666);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ELOOP") throw err;
      // A link in the file's place: replaced by the file, never written through.
      await fsp.unlink(file);
      fh = await fsp.open(file, WRITE_FLAGS, 0o666);
    }
    try {
      await fh.writeFile(value);
    } finally {
      await fh.close();
    }
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
          const full = path.join(this.location, key);
          try {
            // A link is listed (and read) only when it leads inside; else reading it says why.
            const root = d.isSymbolicLink() ? this.#confinement() : null;
            const real = root === null ? full : await fsp.realpath(full);
            const st = await fsp.stat(real);
            if (st.isFile() || (root !== null && !isInside(root, real))) out.push({ key, size: st.size });
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

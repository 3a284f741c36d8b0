/**
 * {@link RangeReader} over a local file (Node only).
 * @module
 */
import { constants, promises as fsp } from "node:fs";
import * as path from "node:path";
import { checkRange, type RangeReader, type ReadOptions } from "./range-reader.js";

/** What identifies the file a reader was opened on, so a file replaced underneath it is detected. */
interface Identity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * Positioned reads from a local file. Each read opens, reads and closes the file, so no descriptor is left open
 * if the caller never disposes the reader; the file's identity (device, inode, size, mtime) is checked on every
 * read, so a file replaced after opening (e.g. a checkpoint rewritten in place) raises an Error instead of
 * returning bytes from the wrong file.
 */
export class FileRangeReader implements RangeReader {
  /** Absolute path of the file. */
  readonly location: string;
  #identity?: Identity;

  /** @param file path of the file. */
  constructor(file: string) {
    this.location = path.resolve(file);
  }

  #check(st: { dev: number; ino: number; size: number; mtimeMs: number }): void {
    const id = { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    if (!this.#identity) {
      this.#identity = id;
      return;
    }
    const a = this.#identity;
    if (a.dev !== id.dev || a.ino !== id.ino || a.size !== id.size || a.mtimeMs !== id.mtimeMs) {
      throw new Error(`${this.location}: the file changed since it was opened; open it again`);
    }
  }

  async #open(): Promise<fsp.FileHandle> {
    try {
      // Never blocks on a FIFO; what it is gets checked on the handle.
      return await fsp.open(this.location, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new Error(`${this.location}: no such file or directory`, { cause: err });
      throw new Error(`${this.location}: cannot open: ${(err as Error).message}`, { cause: err });
    }
  }

  /** File size (from `fstat`). */
  async size(opts?: ReadOptions): Promise<number> {
    opts?.signal?.throwIfAborted();
    if (this.#identity) return this.#identity.size;
    const fh = await this.#open();
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new Error(`${this.location}: not a regular file`);
      this.#check(st);
      return st.size;
    } finally {
      await fh.close();
    }
  }

  /** Exactly `length` bytes at `offset`. */
  async read(offset: number, length: number, opts?: ReadOptions): Promise<Uint8Array> {
    opts?.signal?.throwIfAborted();
    const fh = await this.#open();
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new Error(`${this.location}: not a regular file`);
      this.#check(st);
      checkRange(this.location, offset, length, st.size);
      const out = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await fh.read(out, done, length - done, offset + done);
        if (bytesRead === 0)
          throw new Error(`${this.location}: unexpected end of file at byte ${offset + done}`);
        done += bytesRead;
      }
      return out;
    } finally {
      await fh.close();
    }
  }
}

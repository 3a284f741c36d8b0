/**
 * `openStore(location)`: the one entry point that turns a path or URL into a readable store.
 *
 * Browser-safe: Node modules (file system) are loaded with dynamic imports only for local paths.
 * @module
 */

import { HttpStore } from "./http-store.js";
import { HttpRangeReader, type HttpRequestInfo } from "./range-reader.js";
import type { ReadableStore } from "./types.js";
import { ZipStore } from "./zip-store.js";

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** `fetch` for URLs (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
  /** Extra HTTP request headers. */
  headers?: Record<string, string>;
  /** Called after every HTTP request. */
  onRequest?: (info: HttpRequestInfo) => void;
  /** Root folder inside a zip (see `ZipStore.open`); detected when omitted. */
  zipPrefix?: string;
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ZIP_MAGIC = [0x50, 0x4b, 0x05, 0x06];

function isZipName(p: string): boolean {
  return p.toLowerCase().endsWith(".zip");
}

/**
 * Open a zarr store from a location:
 * - `http(s)://….zip` → `ZipStore` over HTTP range requests;
 * - any other `http(s)://` URL → `HttpStore` (a zarr directory; no listing);
 * - a local directory → `FsStore`;
 * - a local file ending in `.zip` or starting with the zip signature `PK\x03\x04` → `ZipStore` over the file.
 *
 * Throws `Error("<path>: no such file or directory")` for a missing path and
 * `Error("<path>: not a zarr store or .zarr.zip (…)")` for anything else.
 */
export async function openStore(location: string, opts: OpenStoreOptions = {}): Promise<ReadableStore> {
  if (/^https?:\/\//i.test(location)) {
    const url = new URL(location);
    if (isZipName(url.pathname)) {
      const reader = new HttpRangeReader(location, opts);
      return ZipStore.open(reader, { prefix: opts.zipPrefix });
    }
    return new HttpStore(location, opts);
  }
  let file = location;
  if (/^file:\/\//i.test(location)) {
    const { fileURLToPath } = await import(/* @vite-ignore */ "node:url");
    file = fileURLToPath(location);
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw new Error(`${location}: not a zarr store or .zarr.zip (unsupported URL scheme)`);
  }
  const fs = await import(/* @vite-ignore */ "node:fs");
  let st: import("node:fs").Stats;
  try {
    st = await fs.promises.stat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new Error(`${location}: no such file or directory`, { cause: err });
    }
    throw new Error(`${location}: cannot access: ${(err as Error).message}`, { cause: err });
  }
  if (st.isDirectory()) {
    const { FsStore } = await import("./fs-store.js");
    return new FsStore(file);
  }
  if (!st.isFile())
    throw new Error(`${location}: not a zarr store or .zarr.zip (not a regular file or directory)`);
  let zip = isZipName(file);
  if (!zip) {
    const head = new Uint8Array(4);
    // Non-blocking: the file was a regular file a moment ago, but a FIFO swapped in must not block.
    const fh = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      await fh.read(head, 0, 4, 0);
    } finally {
      await fh.close();
    }
    zip = [ZIP_MAGIC, EMPTY_ZIP_MAGIC].some((m) => m.every((b, i) => head[i] === b));
  }
  if (!zip) {
    throw new Error(`${location}: not a zarr store or .zarr.zip (a regular file that is not a zip archive)`);
  }
  const { FileRangeReader } = await import("./file-range-reader.js");
  return ZipStore.open(new FileRangeReader(file), { prefix: opts.zipPrefix });
}

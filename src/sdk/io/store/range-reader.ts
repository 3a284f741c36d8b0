/**
 * Random access to the bytes of one file, local or remote: the layer the zip store reads through.
 *
 * This module is browser-safe (no Node imports). The local-file reader lives in `file-range-reader.ts`.
 * @module
 */

/** Options accepted by {@link RangeReader} reads. */
export interface ReadOptions {
  /** Aborts the read (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** Random access to the bytes of one file. */
export interface RangeReader {
  /** File path or URL; every error message names it. */
  readonly location: string;
  /** Total size of the file in bytes. */
  size(opts?: ReadOptions): Promise<number>;
  /**
   * Exactly `length` bytes starting at `offset`. Throws an Error naming the location when the range is not
   * inside the file (a truncated file) or the read fails.
   */
  read(offset: number, length: number, opts?: ReadOptions): Promise<Uint8Array>;
  /**
   * The last `length` bytes (fewer if the file is shorter) together with the file size, in one request when the
   * transport allows it. Optional: callers fall back to `size()` + `read()`.
   */
  readSuffix?(length: number, opts?: ReadOptions): Promise<{ bytes: Uint8Array; size: number }>;
}

/** Shared check so every reader reports out-of-file ranges the same way. */
export function checkRange(location: string, offset: number, length: number, size: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new Error(`${location}: invalid byte range (offset ${offset}, length ${length})`);
  }
  if (offset + length > size) {
    throw new Error(
      `${location}: read past the end of the file (bytes ${offset}–${offset + length} of a ${size}-byte file; truncated?)`,
    );
  }
}

/** A {@link RangeReader} over bytes already in memory (tests, uploads, `fetch`ed blobs). */
export class BytesRangeReader implements RangeReader {
  /** Label used in error messages. */
  readonly location: string;
  readonly #bytes: Uint8Array;

  /** @param bytes the whole file. @param location label for errors. */
  constructor(bytes: Uint8Array, location = "memory") {
    this.#bytes = bytes;
    this.location = location;
  }

  /** Byte length of the buffer. */
  async size(): Promise<number> {
    return this.#bytes.byteLength;
  }

  /** A view (no copy) on the requested bytes. */
  async read(offset: number, length: number): Promise<Uint8Array> {
    checkRange(this.location, offset, length, this.#bytes.byteLength);
    return this.#bytes.subarray(offset, offset + length);
  }
}

/** A {@link RangeReader} over a browser `Blob`/`File` (reads slices, never the whole blob). */
export class BlobRangeReader implements RangeReader {
  /** The file name or a label. */
  readonly location: string;
  readonly #blob: Blob;

  /** @param blob the file. @param location label for errors (defaults to the File's name). */
  constructor(blob: Blob, location?: string) {
    this.#blob = blob;
    this.location = location ?? ((blob as { name?: string }).name || "blob");
  }

  /** `blob.size`. */
  async size(): Promise<number> {
    return this.#blob.size;
  }

  /** Reads `blob.slice(offset, offset + length)`. */
  async read(offset: number, length: number, opts?: ReadOptions): Promise<Uint8Array> {
    checkRange(this.location, offset, length, this.#blob.size);
    opts?.signal?.throwIfAborted();
    return new Uint8Array(await this.#blob.slice(offset, offset + length).arrayBuffer());
  }
}

/** What `HttpRangeReader` reports for every HTTP request it makes. */
export interface HttpRequestInfo {
  /** The URL requested. */
  url: string;
  /** `"HEAD"` or `"GET"`. */
  method: "HEAD" | "GET";
  /** The `Range` header sent, if any (`"bytes=0-99"`, `"bytes=-65557"`). */
  range?: string;
  /** HTTP status received. */
  status: number;
  /** Body bytes received (0 for HEAD). */
  bytes: number;
}

/** Options of {@link HttpRangeReader}. */
export interface HttpRangeReaderOptions {
  /** `fetch` implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
  /** Extra request headers (e.g. authorization). */
  headers?: Record<string, string>;
  /** Called after every request: count requests and bytes served. */
  onRequest?: (info: HttpRequestInfo) => void;
  /**
   * When a server ignores `Range` and answers 200 with the whole body, files up to this size (default 16 MiB)
   * are still served (downloaded once and cached); larger ones throw.
   */
  maxFullBodyBytes?: number;
}

/** Parse `Content-Range: bytes a-b/total` (total may be `*`). */
function parseContentRange(value: string | null): { start: number; end: number; total?: number } | undefined {
  if (!value) return undefined;
  const m = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(value.trim());
  if (!m) return undefined;
  return { start: Number(m[1]), end: Number(m[2]), total: m[3] === "*" ? undefined : Number(m[3]) };
}

/**
 * A {@link RangeReader} over HTTP(S) using `Range: bytes=a-b` requests. Works in Node (global fetch) and
 * browsers. Servers must answer 206; one that ignores Range (200 + full body) is detected and, for small files,
 * tolerated (see {@link HttpRangeReaderOptions.maxFullBodyBytes}).
 */
export class HttpRangeReader implements RangeReader {
  /** The URL. */
  readonly location: string;
  /** Number of HTTP requests made so far. */
  requests = 0;
  /** Body bytes received so far. */
  bytesReceived = 0;
  /** `true` once the server answered a Range request with 200 (it does not support ranges). */
  rangeIgnored = false;
  readonly #fetch: typeof globalThis.fetch;
  readonly #headers: Record<string, string>;
  readonly #onRequest?: (info: HttpRequestInfo) => void;
  readonly #maxFull: number;
  #size?: Promise<number>;
  #full?: Uint8Array;

  /** @param url the file's URL. */
  constructor(url: string, opts: HttpRangeReaderOptions = {}) {
    this.location = url;
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    // identity: a Range over a gzip-encoded body would address the compressed bytes.
    this.#headers = { "Accept-Encoding": "identity", ...(opts.headers ?? {}) };
    this.#onRequest = opts.onRequest;
    this.#maxFull = opts.maxFullBodyBytes ?? 16 * 1024 * 1024;
  }

  async #request(method: "HEAD" | "GET", range: string | undefined, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { ...this.#headers };
    if (range) headers.Range = range;
    let res: Response;
    try {
      res = await this.#fetch(this.location, { method, headers, signal });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      const cause = err as Error & { cause?: Error };
      const detail = cause.cause?.message ? `${cause.message}: ${cause.cause.message}` : cause.message;
      throw new Error(`${this.location}: network error (${detail})`, { cause: err });
    }
    this.requests++;
    return res;
  }

  #statusError(res: Response, range?: string): Error {
    if (res.status === 404) return new Error(`${this.location}: HTTP 404 Not Found`);
    if (res.status === 416) {
      return new Error(
        `${this.location}: HTTP 416 Range Not Satisfiable for ${range} (file shorter than expected?)`,
      );
    }
    return new Error(`${this.location}: HTTP ${res.status} ${res.statusText}`.trimEnd());
  }

  async #body(res: Response, method: "HEAD" | "GET", range: string | undefined): Promise<Uint8Array> {
    const bytes = method === "HEAD" ? new Uint8Array(0) : new Uint8Array(await res.arrayBuffer());
    this.bytesReceived += bytes.byteLength;
    this.#onRequest?.({ url: this.location, method, range, status: res.status, bytes: bytes.byteLength });
    return bytes;
  }

  /** Handle a 200 answer to a Range request: accept small files once, refuse large ones. */
  async #fullBody(res: Response, range: string): Promise<Uint8Array> {
    this.rangeIgnored = true;
    const declared = Number(res.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(declared) && declared > this.#maxFull) {
      await res.body?.cancel().catch(() => {});
      this.#onRequest?.({ url: this.location, method: "GET", range, status: res.status, bytes: 0 });
      throw new Error(
        `${this.location}: the server ignored the Range header (HTTP 200 with the full ${declared}-byte body); ` +
          `range reads of files over ${this.#maxFull} bytes need a server that answers 206 Partial Content`,
      );
    }
    const body = await this.#body(res, "GET", range);
    if (body.byteLength > this.#maxFull) {
      throw new Error(
        `${this.location}: the server ignored the Range header (HTTP 200 with the full ${body.byteLength}-byte body)`,
      );
    }
    this.#full = body;
    this.#size = Promise.resolve(body.byteLength);
    return body;
  }

  /** File size from HEAD `Content-Length`, or from `Content-Range` of a one-byte GET when HEAD does not say. */
  size(opts?: ReadOptions): Promise<number> {
    if (!this.#size) {
      const p = this.#probeSize(opts?.signal);
      this.#size = p;
      p.catch(() => {
        if (this.#size === p) this.#size = undefined;
      });
    }
    return this.#size;
  }

  async #probeSize(signal?: AbortSignal): Promise<number> {
    const head = await this.#request("HEAD", undefined, signal);
    await this.#body(head, "HEAD", undefined);
    if (head.status === 404) throw this.#statusError(head);
    const len = head.headers.get("content-length");
    if (head.ok && len !== null && /^\d+$/.test(len) && !head.headers.get("content-encoding"))
      return Number(len);
    const range = "bytes=0-0";
    const res = await this.#request("GET", range, signal);
    if (res.status === 206) {
      const cr = parseContentRange(res.headers.get("content-range"));
      await this.#body(res, "GET", range);
      if (cr?.total !== undefined) return cr.total;
      throw new Error(
        `${this.location}: cannot determine the file size (no Content-Length, no Content-Range total)`,
      );
    }
    if (res.status === 200) return (await this.#fullBody(res, range)).byteLength;
    await res.body?.cancel().catch(() => {});
    throw this.#statusError(res, range);
  }

  /** `length` bytes at `offset` with one `Range` request. */
  async read(offset: number, length: number, opts?: ReadOptions): Promise<Uint8Array> {
    if (this.#full) {
      checkRange(this.location, offset, length, this.#full.byteLength);
      return this.#full.subarray(offset, offset + length);
    }
    checkRange(this.location, offset, length, Number.MAX_SAFE_INTEGER);
    if (length === 0) return new Uint8Array(0);
    const range = `bytes=${offset}-${offset + length - 1}`;
    const res = await this.#request("GET", range, opts?.signal);
    if (res.status === 200) {
      const full = await this.#fullBody(res, range);
      checkRange(this.location, offset, length, full.byteLength);
      return full.subarray(offset, offset + length);
    }
    if (res.status !== 206) {
      await res.body?.cancel().catch(() => {});
      throw this.#statusError(res, range);
    }
    const cr = parseContentRange(res.headers.get("content-range"));
    const body = await this.#body(res, "GET", range);
    if (cr && cr.start !== offset) {
      throw new Error(
        `${this.location}: server returned bytes ${cr.start}–${cr.end} for a request of ${range}`,
      );
    }
    if (body.byteLength !== length) {
      const total = cr?.total !== undefined ? ` of a ${cr.total}-byte file` : "";
      throw new Error(
        `${this.location}: short read: got ${body.byteLength} of ${length} bytes at offset ${offset}${total} (truncated?)`,
      );
    }
    return body;
  }

  /** The last `length` bytes and the file size in one suffix-range request (`Range: bytes=-N`). */
  async readSuffix(length: number, opts?: ReadOptions): Promise<{ bytes: Uint8Array; size: number }> {
    if (this.#full) {
      const n = Math.min(length, this.#full.byteLength);
      return { bytes: this.#full.subarray(this.#full.byteLength - n), size: this.#full.byteLength };
    }
    if (length <= 0) return { bytes: new Uint8Array(0), size: await this.size(opts) };
    const range = `bytes=-${length}`;
    const res = await this.#request("GET", range, opts?.signal);
    if (res.status === 200) {
      const full = await this.#fullBody(res, range);
      const n = Math.min(length, full.byteLength);
      return { bytes: full.subarray(full.byteLength - n), size: full.byteLength };
    }
    if (res.status === 416) {
      // Some servers refuse a suffix longer than the file instead of clipping it; an empty file is the other cause.
      await res.body?.cancel().catch(() => {});
      const size = await this.size(opts);
      return { bytes: await this.read(0, size, opts), size };
    }
    if (res.status !== 206) {
      await res.body?.cancel().catch(() => {});
      throw this.#statusError(res, range);
    }
    const cr = parseContentRange(res.headers.get("content-range"));
    const body = await this.#body(res, "GET", range);
    const size = cr?.total ?? (await this.size(opts));
    if (!this.#size) this.#size = Promise.resolve(size);
    if (body.byteLength !== Math.min(length, size)) {
      throw new Error(
        `${this.location}: short read: got ${body.byteLength} bytes for ${range} of a ${size}-byte file`,
      );
    }
    return { bytes: body, size };
  }
}

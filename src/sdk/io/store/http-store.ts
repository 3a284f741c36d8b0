/**
 * A read-only zarr directory store over HTTP(S) (`<base>/<key>` per key). Browser-safe.
 * It cannot list keys: walking groups needs consolidated metadata (see `io/zarr/open.ts`).
 * @module
 */
import { relativeKey, resolveRange } from "./keys.js";
import type { HttpRequestInfo } from "./range-reader.js";
import type { AbsolutePath, GetOptions, RangeQuery, ReadableStore } from "./types.js";

/** Options of {@link HttpStore}. */
export interface HttpStoreOptions {
  /** `fetch` implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Called after every request (count requests and bytes). */
  onRequest?: (info: HttpRequestInfo) => void;
}

/** Zarr directory over HTTP: 404 (and 403, which S3-style hosts send for missing keys) mean "no such key". */
export class HttpStore implements ReadableStore {
  /** Base URL of the store (no trailing slash). */
  readonly location: string;
  readonly #fetch: typeof globalThis.fetch;
  readonly #headers: Record<string, string>;
  readonly #onRequest?: (info: HttpRequestInfo) => void;

  /** @param url base URL of the zarr store. */
  constructor(url: string, opts: HttpStoreOptions = {}) {
    this.location = url.replace(/\/+$/, "");
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.#headers = opts.headers ?? {};
    this.#onRequest = opts.onRequest;
  }

  /** URL of a key; each path segment is percent-encoded (group names may contain spaces). */
  url(key: string): string {
    return `${this.location}/${relativeKey(key).split("/").map(encodeURIComponent).join("/")}`;
  }

  async #fetchKey(key: string, range: string | undefined, signal?: AbortSignal): Promise<Response> {
    const url = this.url(key);
    const headers: Record<string, string> = { ...this.#headers };
    if (range) headers.Range = range;
    try {
      return await this.#fetch(url, { headers, signal });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      const e = err as Error & { cause?: Error };
      throw new Error(`${url}: network error (${e.cause?.message ?? e.message})`, { cause: err });
    }
  }

  async #bytes(res: Response, url: string, range: string | undefined): Promise<Uint8Array> {
    const bytes = new Uint8Array(await res.arrayBuffer());
    this.#onRequest?.({ url, method: "GET", range, status: res.status, bytes: bytes.byteLength });
    return bytes;
  }

  /** The whole value, or `undefined` on 404/403. */
  async get(key: AbsolutePath, opts?: GetOptions): Promise<Uint8Array | undefined> {
    const res = await this.#fetchKey(key, undefined, opts?.signal);
    if (res.status === 404 || res.status === 403) {
      await res.body?.cancel().catch(() => {});
      this.#onRequest?.({ url: this.url(key), method: "GET", status: res.status, bytes: 0 });
      return undefined;
    }
    if (!res.ok) throw new Error(`${this.url(key)}: HTTP ${res.status} ${res.statusText}`.trimEnd());
    return this.#bytes(res, this.url(key), undefined);
  }

  /** A byte range via `Range:`; a server answering 200 gets its full body sliced. */
  async getRange(key: AbsolutePath, range: RangeQuery, opts?: GetOptions): Promise<Uint8Array | undefined> {
    const header =
      "suffixLength" in range
        ? `bytes=-${range.suffixLength}`
        : `bytes=${range.offset}-${range.offset + Math.max(range.length, 1) - 1}`;
    if (!("suffixLength" in range) && range.length === 0) return new Uint8Array(0);
    const res = await this.#fetchKey(key, header, opts?.signal);
    if (res.status === 404 || res.status === 403) {
      await res.body?.cancel().catch(() => {});
      return undefined;
    }
    if (res.status === 200) {
      const full = await this.#bytes(res, this.url(key), header);
      const [s, e] = resolveRange(range, full.byteLength);
      return full.subarray(s, e);
    }
    if (res.status !== 206)
      throw new Error(`${this.url(key)}: HTTP ${res.status} ${res.statusText} for ${header}`);
    return this.#bytes(res, this.url(key), header);
  }
}

/**
 * The HTTP client the live source and the app share: the base URL, the identity headers every
 * request of the web app carries (`X-Tessera-Client-Id`, `X-Tessera-Client-Name`), JSON bodies on
 * writes (the guard's rule), and `{detail}` errors turned into exceptions with the status.
 */

/** An HTTP error answer of the API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Options of `ApiClient`. */
export interface ApiClientOptions {
  /** Base URL of the server (the API is under `${base}/api`); default: the page's origin. */
  base?: string;
  /** Headers added to every request (identity, or `Authorization` for an embedding page). */
  headers?: () => Record<string, string>;
}

/** A small fetch wrapper over the API. */
export class ApiClient {
  readonly base: string;
  private readonly headers: () => Record<string, string>;

  constructor(opts: ApiClientOptions = {}) {
    this.base = (opts.base ?? (typeof location !== "undefined" ? location.origin : "")).replace(/\/$/, "");
    this.headers = opts.headers ?? (() => ({}));
  }

  /** Absolute URL of an API path (`/api/...`). */
  url(path: string): string {
    return `${this.base}${path}`;
  }

  /** A raw fetch with the identity headers; throws `ApiError` on a non-2xx answer. */
  async fetch(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    for (const [k, v] of Object.entries(this.headers())) headers.set(k, v);
    const method = (rest.method ?? "GET").toUpperCase();
    if (json !== undefined) {
      headers.set("content-type", "application/json");
      rest.body = JSON.stringify(json);
    } else if (method !== "GET" && method !== "HEAD" && !headers.has("x-tessera-client-id")) {
      headers.set("x-tessera-client", "1");
    }
    const r = await fetch(this.url(path), { ...rest, headers, credentials: "same-origin" });
    if (!r.ok) {
      let detail = `${r.status} ${r.statusText}`;
      try {
        const body = (await r.json()) as { detail?: string };
        if (body.detail) detail = body.detail;
      } catch {
        /* not JSON */
      }
      throw new ApiError(r.status, detail);
    }
    return r;
  }

  async json<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
    return (await (await this.fetch(path, init)).json()) as T;
  }

  async bytes(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    return new Uint8Array(await (await this.fetch(path, signal ? { signal } : {})).arrayBuffer());
  }
}

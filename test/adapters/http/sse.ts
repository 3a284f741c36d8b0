/**
 * A Server-Sent Events reader over node:http for the HTTP tests: it keeps the raw bytes, parses frames
 * (`id`, `event`, `data` as JSON) and comment lines, and waits for conditions.
 */
import { type IncomingHttpHeaders, request } from "node:http";

/** One parsed SSE frame. */
export interface SseFrame {
  id?: number;
  event?: string;
  data?: unknown;
  retry?: number;
}

/** An open event stream. */
export interface SseStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly frames: SseFrame[];
  /** Comment lines without the leading colon and space (`keepalive`). */
  readonly comments: string[];
  /** Everything received, as text. */
  raw(): string;
  /** Resolves once `pred` holds (checked on every chunk), else rejects after `timeoutMs`. */
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ends the response. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Open `url` as an event stream with `headers`. */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: "text/event-stream", ...headers } }, (res) => {
      const frames: SseFrame[] = [];
      const comments: string[] = [];
      let text = "";
      let pending = "";
      const waiters = new Set<() => void>();
      let endResolve!: () => void;
      const ended = new Promise<void>((r) => {
        endResolve = r;
      });
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
        pending += chunk;
        for (let i = pending.indexOf("\n\n"); i >= 0; i = pending.indexOf("\n\n")) {
          const block = pending.slice(0, i);
          pending = pending.slice(i + 2);
          const f: SseFrame = {};
          let isFrame = false;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else {
              const c = line.indexOf(":");
              const field = line.slice(0, c);
              const value = line.slice(c + 1).replace(/^ /, "");
              isFrame = true;
              if (field === "id") f.id = Number(value);
              else if (field === "event") f.event = value;
              else if (field === "data") f.data = JSON.parse(value);
              else if (field === "retry") f.retry = Number(value);
            }
          }
          if (isFrame) frames.push(f);
        }
        for (const w of [...waiters]) w();
      });
      res.on("end", () => endResolve());
      res.on("close", () => endResolve());
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        comments,
        raw: () => text,
        ended,
        waitFor(pred, timeoutMs = 5000) {
          if (pred()) return Promise.resolve();
          return new Promise((ok, fail) => {
            const check = () => {
              if (!pred()) return;
              clearTimeout(timer);
              waiters.delete(check);
              ok();
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`SSE condition not met in ${timeoutMs} ms; got:\n${text.slice(-2000)}`));
            }, timeoutMs);
            waiters.add(check);
          });
        },
        close() {
          req.destroy();
        },
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** A tiny static file server with single-range support, for HTTP store tests (127.0.0.1, random port). */
import { promises as fsp } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";

/** Behaviour switches for misbehaving-server tests. */
export interface ServerOptions {
  /** Answer every GET with 200 + the full body, ignoring Range. */
  ignoreRange?: boolean;
  /** Answer HEAD with 405. */
  noHead?: boolean;
}

/** One request as the server saw it. */
export interface ServedRequest {
  method: string;
  url: string;
  range?: string;
  status: number;
  bytes: number;
}

/** A running server. */
export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Every request served, in order. */
  log: ServedRequest[];
  /** Total body bytes sent. */
  bytesServed(): number;
  /** Forget the log. */
  reset(): void;
  close(): Promise<void>;
}

/** Serve files under `root`. */
export async function startServer(root: string, opts: ServerOptions = {}): Promise<TestServer> {
  const log: ServedRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = path.join(root, rel);
    const range = req.headers.range;
    const done = (status: number, bytes: number) =>
      log.push({ method: req.method ?? "", url: rel, range, status, bytes });
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return done(403, 0);
    }
    let size: number;
    try {
      const st = await fsp.stat(file);
      if (!st.isFile()) throw new Error("not a file");
      size = st.size;
    } catch {
      res.writeHead(404, { "Content-Length": 0 }).end();
      return done(404, 0);
    }
    if (req.method === "HEAD") {
      if (opts.noHead) {
        res.writeHead(405).end();
        return done(405, 0);
      }
      res.writeHead(200, { "Content-Length": size, "Accept-Ranges": "bytes" }).end();
      return done(200, 0);
    }
    let start = 0;
    let end = size - 1;
    let status = 200;
    if (range && !opts.ignoreRange) {
      const m = /^bytes=(\d*)-(\d*)$/.exec(range);
      if (!m) {
        res.writeHead(416).end();
        return done(416, 0);
      }
      if (m[1] === "") {
        const n = Number(m[2]);
        start = Math.max(0, size - n);
      } else {
        start = Number(m[1]);
        end = m[2] === "" ? size - 1 : Math.min(size - 1, Number(m[2]));
      }
      if (start >= size || start > end) {
        res.writeHead(416, { "Content-Range": `bytes */${size}` }).end();
        return done(416, 0);
      }
      status = 206;
    }
    const fh = await fsp.open(file, "r");
    const body = Buffer.alloc(end - start + 1);
    await fh.read(body, 0, body.length, start);
    await fh.close();
    const headers: Record<string, string | number> = {
      "Content-Length": body.length,
      "Accept-Ranges": "bytes",
    };
    if (status === 206) headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
    res.writeHead(status, headers).end(body);
    done(status, body.length);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    log,
    bytesServed: () => log.reduce((s, r) => s + r.bytes, 0),
    reset: () => {
      log.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/**
 * Shared set-up of the web app's browser tests: the app built into a temp folder (as `npm run build`
 * does), Debian's chromium driven by playwright-core with SwiftShader WebGL, a plain static file
 * server with Range (node:http, for the serverless viewer), and pixel helpers over screenshots.
 */
import { existsSync } from "node:fs";
import { copyFile, cp, mkdtemp, readFile, stat } from "node:fs/promises";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, extname, join, normalize } from "node:path";
import { type Browser, chromium, type Locator } from "playwright-core";
import sharp from "sharp";
import type { TestServer } from "../adapters/http/harness.js";

export const CHROMIUM = "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/** Launch chromium with the WebGL flags deck.gl needs headless (SwiftShader through ANGLE). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--use-gl=angle",
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
      "--ignore-gpu-blocklist",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
    ],
  });
}

/** Pixels of a screenshot. */
export interface Pixels {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Screenshot an element (saved to `file` too) and decode it. */
export async function shoot(target: Locator, file: string): Promise<Pixels> {
  const png = await target.screenshot({ path: file });
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

/** Fraction of pixels within `tol` (per channel) of any of `colors`. */
export function fractionNear(px: Pixels, colors: readonly (readonly number[])[], tol = 12): number {
  let hit = 0;
  const n = px.width * px.height;
  for (let i = 0; i < n; i++) {
    const r = px.data[i * 3]!;
    const g = px.data[i * 3 + 1]!;
    const b = px.data[i * 3 + 2]!;
    for (const c of colors) {
      if (Math.abs(r - c[0]!) <= tol && Math.abs(g - c[1]!) <= tol && Math.abs(b - c[2]!) <= tol) {
        hit++;
        break;
      }
    }
  }
  return hit / n;
}

/** Pixels differing from `bg` by more than `tol` in some channel. */
export function fractionNot(px: Pixels, bg: readonly number[], tol = 10): number {
  return 1 - fractionNear(px, [bg], tol);
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".zip": "application/zip",
};

/** One request the static server answered. */
export interface StaticRequest {
  url: string;
  status: number;
  range: string | undefined;
}

/** A plain static file server with single Range support (what any static host does). */
export async function staticServer(
  root: string,
): Promise<{ base: string; log: StaticRequest[]; close(): Promise<void> }> {
  const log: StaticRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const rel = normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, "");
    const file = join(root, rel.endsWith("/") ? `${rel}index.html` : rel);
    let size: number;
    try {
      const st = await stat(file);
      if (!st.isFile()) throw new Error("not a file");
      size = st.size;
    } catch {
      res.writeHead(404).end();
      log.push({ url: url.pathname, status: 404, range: undefined });
      return;
    }
    const range = req.headers.range;
    const type = TYPES[extname(file)] ?? "application/octet-stream";
    const body = await readFile(file);
    const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range) : null;
    if (m) {
      let start = m[1] ? Number(m[1]) : size - Number(m[2]);
      let end = m[1] ? (m[2] ? Math.min(Number(m[2]), size - 1) : size - 1) : size - 1;
      start = Math.max(0, start);
      end = Math.max(start, end);
      res.writeHead(206, {
        "content-type": type,
        "content-range": `bytes ${start}-${end}/${size}`,
        "content-length": String(end - start + 1),
        "accept-ranges": "bytes",
      });
      res.end(body.subarray(start, end + 1));
      log.push({ url: url.pathname, status: 206, range });
      return;
    }
    res.writeHead(200, { "content-type": type, "content-length": String(size), "accept-ranges": "bytes" });
    res.end(req.method === "HEAD" ? undefined : body);
    log.push({ url: url.pathname, status: 200, range: undefined });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    log,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * Save session `sid` as a checkpoint (a save job as `clientId`, who holds the lock) and publish it with the
 * built app in `appDir` on a static Range server, as a serverless deployment is: open
 * `${site.base}/index.html?checkpoint=${file}`.
 */
export async function publishCheckpoint(
  ts: TestServer,
  sid: string,
  opts: { appDir: string; prefix: string; clientId?: string },
): Promise<{ site: Awaited<ReturnType<typeof staticServer>>; file: string }> {
  const sr = await ts.api(`/api/sessions/${sid}/save`, {
    method: "POST",
    json: { prefix: opts.prefix },
    clientId: opts.clientId,
  });
  if (sr.status !== 200) throw new Error(`save answered ${sr.status}: ${await sr.text()}`);
  const save = (await sr.json()) as { job_id: string };
  const done = (await ts.waitJob(sid, save.job_id, 120_000)) as { status: string; result?: { path: string } };
  if (done.status !== "completed") throw new Error(`the save job ended ${done.status}`);
  const saved = done.result!.path;
  const root = await mkdtemp(join(tmpdir(), `tessera-${opts.prefix}-site-`));
  await cp(opts.appDir, root, { recursive: true });
  await copyFile(saved, join(root, basename(saved)));
  return { site: await staticServer(root), file: basename(saved) };
}

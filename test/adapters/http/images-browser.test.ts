/**
 * The raw raster route in a real browser (Debian chromium driven by playwright-core): zarrita's
 * FetchStore, bundled for the page with esbuild, reads a chunk of an image's served store from the
 * running server, as the web client's image layer will; the bytes decode to the source pixels.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImageInfo } from "../../../src/sdk/raster/info.js";
import { startTestServer, type TestServer } from "./harness.js";

const CHROMIUM = "/usr/bin/chromium";

let dir: string;
let ts: TestServer;
beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);
  dir = await mkdtemp(join(tmpdir(), "tessera-images-browser-"));
  await esbuild.build({
    entryPoints: [fileURLToPath(new URL("./images-browser-entry.ts", import.meta.url))],
    bundle: true,
    format: "esm",
    platform: "browser",
    outdir: join(dir, "js"),
    splitting: true,
    external: ["node:*", "worker_threads"],
    logLevel: "silent",
  });
  ts = await startTestServer({ demo: { nCells: 300, nGenes: 40, imageSize: 700, nTranscripts: 200 } });
});
afterAll(async () => {
  await ts?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("raw raster route in a browser", () => {
  it("zarrita's FetchStore in the page reads a chunk of the served store", async () => {
    const id = await ts.openDemo();
    const session = ts.server.service.session(id);
    const name = Object.keys(session.data.images)[0]!;
    const info = (await (await ts.api(`/api/sessions/${id}/image/${name}/info`)).json()) as ImageInfo;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    try {
      const page = await browser.newPage();
      await page.route(`${ts.url}/index.html`, (r) =>
        r.fulfill({
          contentType: "text/html",
          body: '<!doctype html><body>loading<script type="module" src="/js/images-browser-entry.js"></script></body>',
        }),
      );
      await page.route(`${ts.url}/js/*.js`, async (r) =>
        r.fulfill({
          contentType: "text/javascript",
          body: await readFile(join(dir, new URL(r.request().url()).pathname), "utf8"),
        }),
      );
      const hash = encodeURIComponent(
        JSON.stringify({ base: info.raster_base_url, group: info.zarr_group_path }),
      );
      await page.goto(`${ts.url}/index.html#${hash}`);
      await page.waitForFunction(() => /^(RESULT|ERROR)/.test(document.body.textContent ?? ""), null, {
        timeout: 30_000,
      });
      const text = (await page.textContent("body")) ?? "";
      expect(text.startsWith("RESULT"), text.slice(0, 500)).toBe(true);
      const got = JSON.parse(text.slice("RESULT ".length)) as {
        levels: number;
        shape: number[];
        chunk_shape: number[];
        data: number[];
      };
      expect(got.levels).toBe(info.levels.length);
      expect(got.shape).toEqual([info.channels, 700, 700]);
      expect(got.chunk_shape).toEqual([1, 512, 512]);
      // Channel 1, pixels [0, 512)²: the chunk as the source holds it.
      const src = await session.data.images[name]!.levels[0]!.source.read([1, [0, 512], [0, 512]]);
      const want = Array.from(src.data as ArrayLike<number>);
      const data = Array.from(
        { length: 512 * 512 },
        (_, p) => got.data[Math.floor(p / 512) * 512 + (p % 512)]!,
      );
      let diff = 0;
      for (let i = 0; i < want.length; i++) if (data[i] !== want[i]) diff++;
      expect(diff).toBe(0);
    } finally {
      await browser.close();
    }
  });
});

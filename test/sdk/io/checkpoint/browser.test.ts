/**
 * The checkpoint reader in a real browser (Debian chromium driven by playwright-core): the SDK's
 * reading code is bundled for the browser with esbuild and opens a checkpoint over HTTP Range,
 * as the serverless viewer will.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCheckpoint, readGeneFromMirror } from "../../../../src/sdk/io/checkpoint/read.js";
import { writeCheckpoint } from "../../../../src/sdk/io/checkpoint/write.js";
import { openData } from "../../../../src/sdk/io/open.js";
import { fixture } from "../../../fixtures.js";
import { startServer, type TestServer } from "../store/http-server.js";

const CHROMIUM = "/usr/bin/chromium";

let dir: string;
let server: TestServer;
beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);
  dir = await mkdtemp(join(tmpdir(), "tessera-browser-"));
  const { sdata } = await openData(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
  await writeCheckpoint(sdata, join(dir, "data.sdata.zarr.zip"));
  // Node-only modules (fs stores) are reached through dynamic imports only, so with code
  // splitting they land in chunks the browser never loads.
  await esbuild.build({
    entryPoints: [fileURLToPath(new URL("./browser-entry.ts", import.meta.url))],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    outdir: join(dir, "js"),
    external: ["node:*"],
    logLevel: "silent",
  });
  server = await startServer(dir);
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("serverless reading in a browser", () => {
  it("opens a checkpoint over HTTP Range and reads one gene from the mirror", async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    try {
      const page = await browser.newPage();
      const base = server.base;
      await page.route(`${base}/index.html`, (r) =>
        r.fulfill({
          contentType: "text/html",
          body: '<!doctype html><body>loading<script type="module" src="/js/browser-entry.js"></script></body>',
        }),
      );
      await page.route(`${base}/js/*.js`, async (r) =>
        r.fulfill({
          contentType: "text/javascript",
          body: await readFile(join(dir, new URL(r.request().url()).pathname), "utf8"),
        }),
      );
      server.reset();
      await page.goto(`${base}/index.html`);
      await page.waitForFunction(() => /^(RESULT|ERROR)/.test(document.body.textContent ?? ""), null, {
        timeout: 30_000,
      });
      const text = (await page.textContent("body")) ?? "";
      expect(text.startsWith("RESULT"), text.slice(0, 500)).toBe(true);
      const got = JSON.parse(text.slice("RESULT ".length)) as {
        n_obs: number;
        first: string;
        name: string;
        gene: number[];
      };
      expect(got.n_obs).toBe(700);
      expect(got.first).toBe("AAAGCCTGGCTAAC-1");
      expect(got.name).toBe("10x_pbmc68k_reduced");
      const local = await openCheckpoint(join(dir, "data.sdata.zarr.zip"));
      expect(Float32Array.from(got.gene)).toEqual(await readGeneFromMirror(local, "table", "CD3E"));
      // The page read the checkpoint with Range requests only.
      const zipRequests = server.log.filter((r) => r.url.endsWith(".zip") && r.method === "GET");
      expect(zipRequests.length).toBeGreaterThan(0);
      expect(zipRequests.every((r) => r.status === 206)).toBe(true);
    } finally {
      await browser.close();
    }
  });
});

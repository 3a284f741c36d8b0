/**
 * The web app's speed in headless Chromium (SwiftShader WebGL on the CPU: a machine with a GPU draws
 * far faster), against the real server serving the built app:
 *
 * - open: from navigating to a session to its cells drawn (state, positions and colours fetched,
 *   the first frame with the cells layer);
 * - gene: from choosing a gene to its colours ready (the Arrow field fetched from the server, the
 *   colour buffer built and handed to deck.gl) and to the recoloured frame drawn, median of 3 genes;
 * - pan: frame time while panning (one `panBy` per animation frame, 10 frames), mean and p95;
 * - memory: the page's JS heap (CDP `Performance.getMetrics`);
 * - bundle: the app's initial load, gzip.
 *
 * Sizes: 1,000,000 cells and 100,000 cells (`--cells A,B`), `--genes` genes (default 50).
 * `npm run bench:ui` (about 2–4 min, ~4 GB RSS at 1M).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { buildWebApp } from "../scripts/build-app.js";
import { startServer } from "../src/adapters/http/server.js";
import { writeCheckpointNamed } from "../src/sdk/io/checkpoint/write.js";
import { buildHttpDataset } from "./http-dataset.js";

const { values } = parseArgs({
  options: { cells: { type: "string", default: "1000000,100000" }, genes: { type: "string", default: "50" } },
});
const sizes = String(values.cells)
  .split(",")
  .map((s) => Number(s.trim()))
  .filter((n) => n > 0);
const nGenes = Number(values.genes);
const CHROMIUM = "/usr/bin/chromium";
if (!existsSync(CHROMIUM)) {
  console.error("bench:ui needs /usr/bin/chromium (apt-get install chromium)");
  process.exit(1);
}

// Helpers evaluated in the page (a string: tsx's transform would add helpers the page lacks).
const IN_PAGE = `window.__bench = {
  canvas() { return document.querySelector("tessera-app").shadowRoot.querySelector("tessera-spatial-canvas"); },
  drawn() {
    const c = this.canvas();
    const done = () => c.dataset.ready === "1" && c.dataset.drawnKey && c.dataset.drawnKey === c.dataset.colorKey;
    return new Promise((r) => { const tick = () => (done() ? r() : requestAnimationFrame(tick)); tick(); });
  },
  nextFrame() {
    const c = this.canvas(); const f0 = c.frames;
    return new Promise((r) => { const tick = () => (c.frames > f0 ? r() : requestAnimationFrame(tick)); requestAnimationFrame(tick); });
  },
  async recolour(gene) {
    const c = this.canvas(); const t = performance.now();
    // The attribute is set in the same task as the deck's new layers; the frame follows.
    const set = new Promise((r) => {
      const mo = new MutationObserver(() => { if (c.dataset.colorBy === "X:" + gene) { mo.disconnect(); r(); } });
      mo.observe(c, { attributes: true, attributeFilter: ["data-color-by"] });
    });
    c.setColorBy("X:" + gene);
    await set;
    const ready = performance.now() - t;
    await this.drawn();
    return { ready, drawn: performance.now() - t };
  },
  async pan(n) {
    const c = this.canvas(); const times = []; let last = performance.now();
    for (let i = 0; i < n; i++) {
      c.panBy(i % 20 < 10 ? 8 : -8, 0);
      await new Promise((r) => requestAnimationFrame(r));
      const now = performance.now(); times.push(now - last); last = now;
    }
    times.sort((a, b) => a - b);
    return { mean: times.reduce((a, b) => a + b, 0) / times.length, p95: times[Math.floor(times.length * 0.95)] };
  },
};`;

/** Resident MB of Chromium's renderer and GPU processes (Linux /proc): the page's memory, typed arrays and GL buffers included. */
function chromiumRssMb(): { renderer: number; gpu: number } {
  const out = { renderer: 0, gpu: 0 };
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("chromium")) continue;
      const kind = cmd.includes("--type=renderer")
        ? "renderer"
        : cmd.includes("--type=gpu-process")
          ? "gpu"
          : null;
      if (!kind) continue;
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) out[kind] += Number(m[1]) / 1024;
    } catch {
      /* gone */
    }
  }
  return out;
}

const work = await mkdtemp(join(tmpdir(), "tessera-bench-ui-"));
const appDir = join(work, "app");
const built = await buildWebApp({ outdir: appDir });
const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`bundle: initial load ${kib(built.initial.bytes)} (${kib(built.initial.gzip)} gzip)`);
const lazy = built.files.filter((f) => f.path.includes("checkpoint-sdk") || f.path.includes("zstd"));
for (const f of lazy) console.log(`  lazy chunk ${f.path}: ${kib(f.gzip)} gzip`);

const dataDir = join(work, "data");
const sessions: { n: number; path: string }[] = [];
for (const n of sizes) {
  const t0 = performance.now();
  const sd = buildHttpDataset(n, nGenes, 0, 1);
  const { path } = await writeCheckpointNamed(sd, dataDir, `cells${n}`, { name: `cells${n}` });
  sessions.push({ n, path });
  console.log(
    `dataset ${n.toLocaleString()} cells × ${nGenes} genes written in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

const server = await startServer({
  env: {},
  config: { dataDir, workDir: join(work, "work"), staticDir: appDir, resourceHz: 0 },
  port: 0,
  host: "127.0.0.1",
});
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: [
    "--no-sandbox",
    "--use-gl=angle",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    "--ignore-gpu-blocklist",
  ],
});

try {
  for (const { n, path } of sessions) {
    const s = await server.service.createSession({ source: { kind: "load", path } });
    await s.ready;
    if (s.status !== "ready") throw new Error(`session did not load: ${s.summary().error}`);
    if (process.env.BENCH_DEBUG) console.log(`session ${s.id} ready`);
    const genes = (s.data.tables.table!.var.index.values as (string | null)[]).slice(0, 6) as string[];
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const t0 = Date.now();
    await page.goto(`${server.url}/?session=${s.id}`);
    page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
    const canvas = page.locator("tessera-spatial-canvas[data-drawn-key]");
    try {
      await canvas.waitFor({ timeout: 300_000 });
    } catch (e) {
      await page.screenshot({ path: join(tmpdir(), "bench-ui-stuck.png") });
      throw e;
    }
    if (process.env.BENCH_DEBUG) console.log("cells drawn");
    await page.evaluate(IN_PAGE);
    await page.evaluate("__bench.drawn()");
    const openMs = Date.now() - t0;
    if (process.env.BENCH_DEBUG) console.log("open", openMs);
    const geneReady: number[] = [];
    const geneDrawn: number[] = [];
    for (const g of genes.slice(1, 4)) {
      const r = (await page.evaluate(`__bench.recolour(${JSON.stringify(g)})`)) as {
        ready: number;
        drawn: number;
      };
      geneReady.push(r.ready);
      geneDrawn.push(r.drawn);
    }
    if (process.env.BENCH_DEBUG) console.log("genes", geneReady, geneDrawn);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const pan = (await page.evaluate("__bench.pan(10)")) as { mean: number; p95: number };
    if (process.env.BENCH_DEBUG) console.log("pan", pan);
    const metrics = (await cdp.send("Performance.getMetrics")).metrics;
    const heap = metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? 0;
    const rss = chromiumRssMb();
    console.log(
      `${n.toLocaleString()} cells: open → cells drawn ${(openMs / 1000).toFixed(2)} s; ` +
        `gene → colours ready median ${median(geneReady).toFixed(0)} ms, → recoloured frame median ${median(geneDrawn).toFixed(0)} ms; ` +
        `pan frame mean ${pan.mean.toFixed(0)} ms, p95 ${pan.p95.toFixed(0)} ms; JS heap ${(heap / 1e6).toFixed(0)} MB, renderer RSS ${rss.renderer.toFixed(0)} MB, GPU process RSS ${rss.gpu.toFixed(0)} MB`,
    );
    await page.close();
    await server.service.deleteSession(s.id);
  }
} finally {
  await browser.close();
  await server.close();
  await rm(work, { recursive: true, force: true });
}

/**
 * The cell glyph's cost on the web canvas (`point_marker`, `src/ui/layers/marker-glyph-extension.ts`):
 * frame time while panning a session of `--cells` cells (default 1,000,000) drawn as circles, squares
 * and hexagons, at the fitted view and zoomed in (`--zoom-in` steps of +1, default 3: points some
 * pixels across, where the fragment shader's extra work shows). Headless Chromium with SwiftShader
 * (WebGL on the CPU, far slower than any GPU, so fragment work weighs more than on a real machine).
 * Because the machine is loaded, the CPU seconds of Chromium's renderer and GPU processes over each
 * run (from /proc) are printed beside the wall time; glyphs are run in alternating order, twice.
 *
 * `npx tsx bench/ui-marker.ts [--cells 1000000] [--frames 30] [--zoom-in 3]`
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
  options: {
    cells: { type: "string", default: "1000000" },
    frames: { type: "string", default: "30" },
    "zoom-in": { type: "string", default: "3" },
  },
});
const nCells = Number(values.cells);
const frames = Number(values.frames);
const zoomIn = Number(values["zoom-in"]);
const CHROMIUM = "/usr/bin/chromium";
if (!existsSync(CHROMIUM)) {
  console.error("this bench needs /usr/bin/chromium");
  process.exit(1);
}

// Evaluated in the page (a string: tsx's transform would add helpers the page lacks).
const IN_PAGE = `window.__bench = {
  canvas() { return document.querySelector("tessera-app").shadowRoot.querySelector("tessera-spatial-canvas"); },
  drawn() {
    const c = this.canvas();
    const done = () => c.dataset.ready === "1" && c.dataset.drawnKey && c.dataset.drawnKey === c.dataset.colorKey;
    return new Promise((r) => { const tick = () => (done() ? r() : requestAnimationFrame(tick)); tick(); });
  },
  async glyph(g) {
    const c = this.canvas();
    c.editEncoding({ point_marker: g });
    for (let i = 0; i < 3; i++) await new Promise((r) => requestAnimationFrame(r));
  },
  zoom(steps) { const c = this.canvas(); const v = c.viewport; c.setView(v.target[0], v.target[1], v.zoom + steps); },
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

/** CPU seconds (user + system) of Chromium's renderer and GPU processes so far. */
function chromiumCpuSeconds(): number {
  const hz = 100; // USER_HZ on Linux
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("chromium") || !/--type=(renderer|gpu-process)/.test(cmd)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(f[11]) + Number(f[12]); // utime, stime (fields 14, 15)
    } catch {
      /* gone */
    }
  }
  return ticks / hz;
}

const work = await mkdtemp(join(tmpdir(), "tessera-bench-marker-"));
const appDir = join(work, "app");
await buildWebApp({ outdir: appDir });
const dataDir = join(work, "data");
const { path } = await writeCheckpointNamed(buildHttpDataset(nCells, 30, 0, 1), dataDir, "cells", {
  name: "cells",
});
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
  const s = await server.service.createSession({ source: { kind: "load", path } });
  await s.ready;
  if (s.status !== "ready") throw new Error(`session did not load: ${s.summary().error}`);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
  await page.goto(`${server.url}/?session=${s.id}`);
  await page.locator("tessera-spatial-canvas[data-drawn-key]").waitFor({ timeout: 300_000 });
  await page.evaluate(IN_PAGE);
  await page.evaluate("__bench.drawn()");
  console.log(`${nCells.toLocaleString()} cells, ${frames} pan frames per run (SwiftShader)`);
  for (const [label, steps] of [
    ["fitted view", 0],
    [`zoomed in +${zoomIn}`, zoomIn],
  ] as const) {
    if (steps) await page.evaluate(`__bench.zoom(${steps})`);
    const runs: Record<string, { mean: number[]; p95: number[]; cpu: number[] }> = {};
    for (const order of [
      ["circle", "square", "hexagon"],
      ["hexagon", "square", "circle"],
    ]) {
      for (const g of order) {
        await page.evaluate(`__bench.glyph(${JSON.stringify(g)})`);
        await page.evaluate("__bench.pan(5)"); // warm: the program for the glyph is built
        const c0 = chromiumCpuSeconds();
        const r = (await page.evaluate(`__bench.pan(${frames})`)) as { mean: number; p95: number };
        const cpu = chromiumCpuSeconds() - c0;
        runs[g] ??= { mean: [], p95: [], cpu: [] };
        const o = runs[g];
        o.mean.push(r.mean);
        o.p95.push(r.p95);
        o.cpu.push(cpu);
      }
    }
    for (const [g, o] of Object.entries(runs)) {
      const f = (xs: number[], d = 0) => xs.map((x) => x.toFixed(d)).join(" / ");
      console.log(
        `  ${label}, ${g.padEnd(7)}: pan frame mean ${f(o.mean)} ms, p95 ${f(o.p95)} ms; Chromium CPU ${f(o.cpu, 2)} s per ${frames} frames`,
      );
    }
  }
  await page.close();
} finally {
  await browser.close();
  await server.close();
  await rm(work, { recursive: true, force: true });
}

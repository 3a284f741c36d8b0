/**
 * Figures benchmark (`npm run bench:figures`): a snapshot of 1,000,000 cells over an image of
 * 2000 × 1500 px on a 1200 × 900 px canvas at 200 dpi (PDF + PNG + thumbnail + sidecar): time (render
 * to SVG, PNG, PDF, total), output sizes and peak RSS; and the latency of a 480 px preview at 100,000
 * cells (target ≤ 500 ms). Options: `--cells N` (default 1,000,000), `--preview-cells N` (100,000).
 *
 * The datasets are the HTTP benchmark's (cells on a jittered 10 µm lattice, 8 cell types) with an
 * image placed over the tissue by a scale transform, saved as a checkpoint and loaded by a service.
 */
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { allocArray } from "../src/sdk/data/arrays.js";
import type { ImageElement } from "../src/sdk/data/elements.js";
import { withElement } from "../src/sdk/data/spatialdata.js";
import { defaultAxes } from "../src/sdk/data/transforms.js";
import { svgToPdf, svgToPng } from "../src/sdk/figures/export.js";
import { createSnapshot, previewSnapshot, renderSnapshot } from "../src/sdk/figures/snapshots.js";
import { writeCheckpointNamed } from "../src/sdk/io/checkpoint/write.js";
import { memoryRasterSource } from "../src/sdk/raster/memory-source.js";
import { Service } from "../src/sdk/session/service.js";
import type { Session } from "../src/sdk/session/session.js";
import { buildHttpDataset, tissueSide } from "./http-dataset.js";

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

/**
 * Peak RSS sampled every 10 ms while `fn` runs, its wall time, this process's CPU time (all threads)
 * and the event loop's largest delay (`monitorEventLoopDelay` at 5 ms resolution): how long the
 * main thread was kept from answering anything else.
 */
async function withPeak<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; peakMb: number; ms: number; cpuS: number; loopMaxMs: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const t = performance.now();
  try {
    const value = await fn();
    const cpu = process.cpuUsage(cpu0);
    return {
      value,
      peakMb: Math.round(Math.max(peak, process.memoryUsage().rss) / 2 ** 20),
      ms: performance.now() - t,
      cpuS: (cpu.user + cpu.system) / 1e6,
      loopMaxMs: loop.max / 1e6,
    };
  } finally {
    loop.disable();
    clearInterval(timer);
  }
}

function image(side: number): ImageElement {
  const w = 2000;
  const h = 1500;
  const data = allocArray("uint16", w * h) as Uint16Array;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      data[y * w + x] = 500 + 400 * Math.sin(x / 37) * Math.cos(y / 23) + ((x * 7 + y * 13) % 97);
  const source = memoryRasterSource({ kind: "dense", dtype: "uint16", shape: [1, h, w], data });
  const s = side / w;
  return {
    kind: "image",
    name: "morphology",
    axes: ["c", "y", "x"],
    channels: ["dapi"],
    dtype: "uint16",
    levels: [
      { path: "0", shape: source.shape, chunks: source.chunks, dtype: "uint16", levelTransform: [], source },
    ],
    transformations: {
      global: {
        type: "scale",
        scale: [s, s],
        input: { name: "xy", axes: defaultAxes(["x", "y"]) },
        output: { name: "global", axes: defaultAxes(["x", "y"]) },
      },
    },
  };
}

async function openDataset(service: Service, dir: string, cells: number, name: string): Promise<Session> {
  const side = tissueSide(cells);
  const sd = withElement(buildHttpDataset(cells, 50, 1000), "images", "morphology", image(side));
  const { path } = await writeCheckpointNamed(sd, dir, name);
  const s = await service.createSession({ source: { kind: "load", path } });
  await s.ready;
  if (s.status !== "ready") throw new Error(`${name} did not load: ${s.summary().error}`);
  s.putDisplay({
    id: "fig",
    type: "spatial_canvas",
    encoding: { coords: "obsm:spatial", color_by: "obs:cell_type", image_layer: "morphology", point_size: 8 },
    viewport: { target: [side / 2, side / 2], zoom: 0 },
  });
  return s;
}

async function main(): Promise<void> {
  const cells = arg("cells", 1_000_000);
  const previewCells = arg("preview-cells", 100_000);
  const dir = await mkdtemp(join(tmpdir(), "tessera-bench-figures-"));
  const service = await Service.start({
    env: {},
    plugins: ["tessera"],
    config: { dataDir: dir, workDir: join(dir, ".work"), recipesDir: join(dir, "none"), containerMemMb: 0 },
  });
  try {
    // Preview at 100k cells.
    {
      const s = await openDataset(service, dir, previewCells, "preview");
      const side = tissueSide(previewCells);
      const W = 1200;
      const H = 900;
      const req = {
        viewport: { target: [side / 2, side / 2], zoom: Math.log2(Math.min(W, H) / side) },
        width_px: W,
        height_px: H,
        dpi: 200,
        display_id: "fig",
      };
      const first = await previewSnapshot(s, req); // warm: raster store built, fields decoded once
      if (process.env.FIGURES_BENCH_OUT)
        (await import("node:fs")).writeFileSync(process.env.FIGURES_BENCH_OUT, first);
      const times: number[] = [];
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        await previewSnapshot(s, req);
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      console.log(
        `preview 480 px, ${previewCells.toLocaleString("en")} cells (all in view, image on): median ${times[3]!.toFixed(0)} ms, min ${times[0]!.toFixed(0)} ms, max ${times[6]!.toFixed(0)} ms (target ≤ 500 ms)`,
      );
      await s.close();
    }
    // Snapshot at 1M cells.
    {
      const s = await openDataset(service, dir, cells, "big");
      const side = tissueSide(cells);
      const W = 1200;
      const H = 900;
      const req = {
        viewport: { target: [side / 2, side / 2], zoom: Math.log2(Math.min(W, H) / side) },
        width_px: W,
        height_px: H,
        dpi: 200,
        display_id: "fig",
        formats: ["pdf", "png"] as ("pdf" | "png")[],
      };
      global.gc?.();
      const parts = await withPeak(async () => {
        const t0 = performance.now();
        const { figure } = await renderSnapshot(s, req);
        const t1 = performance.now();
        if (process.env.FIGURES_BENCH_SVG)
          (await import("node:fs")).writeFileSync(process.env.FIGURES_BENCH_SVG, figure.svg);
        await svgToPng(figure.svg, { dpi: 200 });
        const t2 = performance.now();
        await svgToPdf(figure.svg, { widthPt: figure.widthPt, heightPt: figure.heightPt });
        const t3 = performance.now();
        return {
          svgMs: t1 - t0,
          pngMs: t2 - t1,
          pdfMs: t3 - t2,
          svgBytes: figure.svg.length,
          render: figure.render,
        };
      });
      global.gc?.();
      const whole = await withPeak(() => createSnapshot(s, dir, req));
      const files = (await readdir(dir)).filter((f) => f.startsWith(whole.value.name));
      const sizes: string[] = [];
      for (const f of files)
        sizes.push(
          `${f.slice(whole.value.name.length)} ${((await stat(join(dir, f))).size / 1024).toFixed(0)} KB`,
        );
      const p = parts.value;
      console.log(
        `snapshot ${cells.toLocaleString("en")} cells (${p.render.cells_in_view.toLocaleString("en")} in view, rasterized_points=${p.render.rasterized_points}), image 2000×1500, canvas ${W}×${H} px at 200 dpi (PNG ${Math.round((W * 200) / 96)}×${Math.round((H * 200) / 96)}):`,
      );
      console.log(
        `  render to SVG ${p.svgMs.toFixed(0)} ms (SVG ${(p.svgBytes / 2 ** 20).toFixed(1)} MB), SVG→PNG ${p.pngMs.toFixed(0)} ms, SVG→PDF ${p.pdfMs.toFixed(0)} ms; event-loop max delay ${parts.loopMaxMs.toFixed(0)} ms, peak RSS ${parts.peakMb} MB`,
      );
      console.log(
        `  whole snapshot (render, PDF, PNG, thumbnail, sidecar): ${whole.ms.toFixed(0)} ms wall, ${whole.cpuS.toFixed(1)} CPU s, event-loop max delay ${whole.loopMaxMs.toFixed(0)} ms, peak RSS ${whole.peakMb} MB`,
      );
      console.log(`  files: ${sizes.join(", ")}`);
      await s.close();
    }
  } finally {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

/**
 * MCP tools benchmark (`npx tsx bench/mcp-tools.ts [--cells N]`): what the agent's heavier read tools
 * cost on a large session, called through the SDK functions the tools wrap (no HTTP), each beside its
 * peer:
 *
 * - `view_display` (`renderVision`: fit viewport, 1024 × 768 PNG, labelled grid, 20 marked points and a
 *   marked polygon) beside the web app's 480 px snapshot preview (`previewSnapshot`) of the same frame;
 * - `inspect_region` (`resolveRegion` + `inspectRegion`: half the tissue, composition by cell_type,
 *   10 genes inside against outside) beside the selection check alone that `POST …/annotate` makes
 *   (`resolveRowSelection`).
 *
 * Wall time (median of 5 after a warm-up), this process's CPU seconds (all threads) and the event
 * loop's largest delay. The dataset is the HTTP benchmark's (cells on a jittered 10 µm lattice).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { resolveRowSelection } from "../src/sdk/data/row-selection.js";
import { inspectRegion, resolveRegion } from "../src/sdk/display/region.js";
import { previewSnapshot } from "../src/sdk/figures/snapshots.js";
import { fitViewport, renderVision } from "../src/sdk/figures/vision.js";
import { writeCheckpointNamed } from "../src/sdk/io/checkpoint/write.js";
import { Service } from "../src/sdk/session/service.js";
import { buildHttpDataset, tissueSide } from "./http-dataset.js";

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

/** Median wall ms of 5 runs after one warm-up, CPU seconds per run, the event loop's largest delay. */
async function measure(fn: () => Promise<unknown>): Promise<string> {
  await fn();
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpu0);
  loop.disable();
  times.sort((a, b) => a - b);
  return `median ${times[2]!.toFixed(0)} ms wall (min ${times[0]!.toFixed(0)}), ${((cpu.user + cpu.system) / 5e6).toFixed(2)} CPU s per run, event-loop max delay ${(loop.max / 1e6).toFixed(0)} ms`;
}

async function main(): Promise<void> {
  const cells = arg("cells", 200_000);
  const dir = await mkdtemp(join(tmpdir(), "tessera-bench-mcp-"));
  const service = await Service.start({
    env: {},
    plugins: ["tessera"],
    config: { dataDir: dir, workDir: join(dir, ".work"), recipesDir: join(dir, "none"), containerMemMb: 0 },
  });
  try {
    const { path } = await writeCheckpointNamed(buildHttpDataset(cells, 50, 1000), dir, "bench");
    const s = await service.createSession({ source: { kind: "load", path } });
    await s.ready;
    if (s.status !== "ready") throw new Error(`did not load: ${s.summary().error}`);
    const side = tissueSide(cells);
    const display = s.putDisplay({
      id: "fig",
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", color_by: "obs:cell_type", point_size: 8 },
      viewport: { target: [side / 2, side / 2], zoom: 0 },
    });
    const half = [
      [0, 0],
      [side / 2, 0],
      [side / 2, side],
      [0, side],
    ];
    const marks = Array.from({ length: 20 }, (_, i) => [(i + 0.5) * (side / 20), side / 2]);
    const table = s.data.tables[s.activeTable!]!;
    const genes = Array.from(table.var.index.values as ArrayLike<unknown>, String).slice(0, 10);
    console.log(`${cells.toLocaleString("en")} cells, tissue ${side.toFixed(0)} µm across`);

    const vision = await measure(() =>
      renderVision(s, {
        displayId: "fig",
        viewport: "fit",
        widthPx: 1024,
        heightPx: 768,
        includeGrid: true,
        markPoints: marks,
        markPolygons: [half],
      }),
    );
    const vp = await fitViewport(s, display, 1024, 768);
    const preview = await measure(() =>
      previewSnapshot(s, { viewport: vp, width_px: 1024, height_px: 768, dpi: 96, display_id: "fig" }),
    );
    console.log(`view_display 1024×768 (fit, grid, marks): ${vision}`);
    console.log(`  peer: snapshot preview 480 px of the same frame: ${preview}`);

    const inspect = await measure(async () =>
      inspectRegion(s, await resolveRegion(s, { polygons: [half] }), { by: "cell_type", genes }),
    );
    const check = await measure(() => resolveRowSelection(s.data, s.activeTable, { polygons: [half] }));
    console.log(`inspect_region (half the tissue, by cell_type, 10 genes): ${inspect}`);
    console.log(`  peer: the selection check of POST /annotate alone: ${check}`);
    await s.close();
  } finally {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

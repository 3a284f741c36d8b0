/**
 * Each `@peakMemory` estimate beside the peak the job really took: one service, a generated table, the
 * standard pipeline run step by step, RSS sampled every 10 ms while each job runs (the server and its
 * workers are one process). "measured" is the peak over the RSS before the job; an estimate well below
 * it would admit jobs that do not fit.
 *
 * Usage: `npm run bench:peak-memory -- [--cells 50000] [--genes 2000]`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tableShape } from "../src/sdk/session/table-shape.js";
import { tableService } from "./table-service.js";

const { values } = parseArgs({
  options: { cells: { type: "string", default: "50000" }, genes: { type: "string", default: "2000" } },
});
const MB = 2 ** 20;
const STEPS: [string, string, Record<string, unknown>][] = [
  ["sc.pp", "normalize_total", {}],
  ["sc.pp", "log1p", {}],
  ["sc.pp", "pca", { n_comps: 50 }],
  ["sc.pp", "neighbors", {}],
  ["sc.tl", "umap", {}],
  ["sc.pp", "scale", {}],
];

const dir = await mkdtemp(join(tmpdir(), "tessera-peak-memory-"));
try {
  const { path, service } = await tableService(dir, Number(values.cells), Number(values.genes));
  const s = await service.createSession({ source: { kind: "load", path } });
  await s.ready;
  // Warm-up: the first job starts a worker thread (tens of MB), which is not any operation's own need.
  await (await s.submit({ namespace: "sc.pp", function: "calculate_qc_metrics", params: {} })).done;
  console.log(
    `${values.cells} × ${values.genes}; estimate vs measured peak (MB over the RSS before the job)`,
  );
  console.log("step                 estimate   measured   ratio");
  for (const [namespace, fn, params] of STEPS) {
    const key = `${namespace}.${fn}`;
    const t = s.data.tables[s.activeTable!]!;
    const filled = service.functions.validate(key, params);
    const estimate = service.registry.peakMemory(key, tableShape(t), filled) / MB;
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage.rss();
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 10);
    const out = await (await s.submit({ namespace, function: fn, params })).done;
    clearInterval(timer);
    if (out.status !== "completed") throw new Error(`${key}: ${out.error}`);
    const measured = (peak - before) / MB;
    console.log(
      `${key.padEnd(20)} ${estimate.toFixed(0).padStart(8)} ${measured.toFixed(0).padStart(10)} ${(estimate / Math.max(1, measured)).toFixed(2).padStart(7)}`,
    );
  }
  await service.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}

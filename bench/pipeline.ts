/**
 * The side-by-side pipeline of `../shared/bench/README.md` ("Side by side") on one h5ad file, through
 * the public SDK: `Tessera.start` → `open(h5ad)` → `run(key, params)` per step (the engine's dispatch,
 * worker threads and commit included), with scanpy's seconds from the same table beside each step and
 * the ratio (Tessera ÷ scanpy, lower is better).
 *
 *   npx tsx --expose-gc bench/pipeline.ts --h5ad /tmp/bench-data/synth_50k.h5ad [--skip umap,leiden]
 *   npm run bench:pipeline -- --h5ad PATH
 *
 * Inputs: `/tmp/scverse/venv/bin/python ../shared/bench/gen_data.py 50k 200k --out DIR` writes the very
 * files scanpy was timed on. The scanpy column is picked by the file's shape (50k × 3k or 200k × 5k);
 * other shapes print no ratio. Peak RSS is the whole process (worker threads included), sampled every
 * 50 ms from a sampler thread so long synchronous stretches are seen. A benchmark prints figures; it
 * never passes or fails. CPU seconds (user + system, every thread of the process) are printed beside:
 * on a shared, loaded machine they say more about the work done than the wall clock does.
 *
 * Warm, as scanpy was timed warm (its import and first calls are not in its table): before timing,
 * the same pipeline runs on 3,000 cells subsampled from the file in a session of its own, so loading
 * the readers' and operations' modules (and, run from source, tsx compiling them in each thread) is
 * not counted in `open` and the first steps. `--cold` skips that and times the first use.
 */
import { availableParallelism, loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { nVars as cols, nObs as rows, Tessera, type TesseraSession } from "../src/sdk/index.js";

/** scanpy 1.12.3 seconds from the README's side-by-side table: [50k × 3k, 200k × 5k]. */
const SCANPY: Record<string, [number, number]> = {
  open: [0.53, 3.54],
  calculate_qc_metrics: [1.95, 9.21],
  "filter_cells+filter_genes": [0.9, 5.31],
  normalize_total: [0.069, 0.77],
  log1p: [0.02, 0.104],
  highly_variable_genes: [0.77, 1.48],
  pca: [2.09, 7.64],
  neighbors: [3.13, 12.79],
  umap: [25.0, 118.9],
  leiden: [2.43, 13.71],
  rank_genes_groups: [0.75, 5.12],
};
/** scanpy's total and peak RSS (MB) in that table. */
const SCANPY_TOTAL: [number, number] = [37.6, 178.6];
const SCANPY_RSS_MB: [number, number] = [1432, 3953];

const { values } = parseArgs({
  options: {
    h5ad: { type: "string" },
    skip: { type: "string", default: "" },
    cold: { type: "boolean", default: false },
  },
});
if (!values.h5ad) {
  console.error("usage: bench/pipeline.ts --h5ad PATH [--skip step,step] [--cold]");
  process.exit(2);
}
const skip = new Set(values.skip!.split(",").filter(Boolean));

type Step = [name: string, run: (s: TesseraSession) => Promise<unknown>];

const steps: Step[] = [
  ["calculate_qc_metrics", (s) => s.run("sc.pp.calculate_qc_metrics", { qc_vars: ["mt"] })],
  [
    "filter_cells+filter_genes",
    async (s) => {
      await s.run("sc.pp.filter_cells", { min_genes: 20 });
      await s.run("sc.pp.filter_genes", { min_cells: 10 });
    },
  ],
  ["normalize_total", (s) => s.run("sc.pp.normalize_total", {})],
  ["log1p", (s) => s.run("sc.pp.log1p", {})],
  [
    "highly_variable_genes",
    (s) => s.run("sc.pp.highly_variable_genes", { flavor: "seurat", n_top_genes: 1000 }),
  ],
  ["pca", (s) => s.run("sc.pp.pca", { n_comps: 50, svd_solver: "arpack", mask_var: "highly_variable" })],
  ["neighbors", (s) => s.run("sc.pp.neighbors", { n_neighbors: 15 })],
  ["umap", (s) => s.run("sc.tl.umap", {})],
  ["leiden", (s) => s.run("sc.tl.leiden", { flavor: "igraph", n_iterations: 2 })],
  ["rank_genes_groups", (s) => s.run("sc.tl.rank_genes_groups", { groupby: "cell_type", method: "t-test" })],
];

/** Peak RSS sampler on its own thread (the main thread may be busy when a step commits). */
function rssSampler(): { reset(): void; peak(): Promise<number>; stop(): Promise<void> } {
  const shared = new Float64Array(new SharedArrayBuffer(8));
  const w = new Worker(
    `const { workerData } = require("node:worker_threads");
     const a = workerData; setInterval(() => { const r = process.memoryUsage().rss; if (r > a[0]) a[0] = r; }, 50);`,
    { eval: true, workerData: shared },
  );
  return {
    reset: () => {
      shared[0] = process.memoryUsage().rss;
    },
    peak: async () => {
      await new Promise((r) => setTimeout(r, 60));
      return shared[0]! / 1e6;
    },
    stop: () => w.terminate().then(() => undefined),
  };
}

/** User + system CPU seconds of the whole process (every thread) since `from`. */
const cpuSeconds = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1e6;
};

const fmt = (v: number, w = 8, d = 3) => v.toFixed(d).padStart(w);

// The data dir confines paths (links out of it are refused): the file's own folder is the data dir.
const file = resolve(values.h5ad);
const dataDir = dirname(file);

const sampler = rssSampler();
// No watchdog: a loaded machine may take longer than the default 120 s on a step.
const env = { ...process.env, TESSERA_LONG_RUNNING_S: process.env.TESSERA_LONG_RUNNING_S ?? "0" };
const t = await Tessera.start({ dataDir, env });
try {
  if (!values.cold) {
    const w0 = performance.now();
    const c0 = process.cpuUsage();
    const warm = await t.open(file);
    await warm.run("sc.pp.subsample", { n_obs: 3000, random_state: 0 });
    for (const [name, run] of steps) if (!skip.has(name)) await run(warm);
    console.log(
      `warm-up (the pipeline on 3,000 subsampled cells, not counted): ${((performance.now() - w0) / 1000).toFixed(1)} s, CPU ${cpuSeconds(c0).toFixed(1)} s`,
    );
  }
  (globalThis as { gc?: () => void }).gc?.();
  sampler.reset();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const s = await t.open(file);
  const openS = (performance.now() - t0) / 1000;
  const openCpu = cpuSeconds(c0);
  const x = () => {
    const table = Object.values(s.data.tables)[0];
    return table ? [rows(table), cols(table)] : [0, 0];
  };
  const [nObs, nVars] = x();
  const col: number = nObs === 50_000 && nVars === 3_000 ? 0 : nObs === 200_000 && nVars === 5_000 ? 1 : -1;
  console.log(
    `bench/pipeline: ${file} (${nObs} × ${nVars}); through Tessera.start → open → run; scanpy column: ${col === 0 ? "50k × 3k" : col === 1 ? "200k × 5k" : "none (other shape)"}`,
  );
  console.log(
    values.cold ? "cold: first use timed (modules loaded in the steps)" : "warm: after the warm-up",
  );
  console.log(
    `threads: TESSERA_N_THREADS=${process.env.TESSERA_N_THREADS ?? "auto"}, pool workers ${process.env.TESSERA_COMPUTE_POOL_WORKERS ?? "auto"}`,
  );
  console.log(
    "step                         Tessera s   scanpy s   ratio   peak RSS MB   CPU s (all threads)",
  );
  const line = (name: string, secs: number, peak: number, cpu: number) => {
    const ref = col >= 0 ? SCANPY[name]?.[col] : undefined;
    const ratio = ref ? (secs / ref).toFixed(2) : "-";
    console.log(
      `${name.padEnd(28)} ${fmt(secs, 9)}  ${ref !== undefined ? fmt(ref, 8) : "       -"}  ${ratio.padStart(6)}   ${peak.toFixed(0).padStart(10)}   ${fmt(cpu, 9)}`,
    );
  };
  let peakAll = await sampler.peak();
  line("open", openS, peakAll, openCpu);
  let total = openS;
  let totalCpu = openCpu;
  let scanpyTotal = col >= 0 ? SCANPY.open![col]! : 0;
  for (const [name, run] of steps) {
    if (skip.has(name)) continue;
    (globalThis as { gc?: () => void }).gc?.();
    sampler.reset();
    const s0 = performance.now();
    const cpu0 = process.cpuUsage();
    await run(s);
    const secs = (performance.now() - s0) / 1000;
    const cpu = cpuSeconds(cpu0);
    totalCpu += cpu;
    const peak = await sampler.peak();
    peakAll = Math.max(peakAll, peak);
    total += secs;
    if (col >= 0) scanpyTotal += SCANPY[name]![col]!;
    line(name, secs, peak, cpu);
  }
  const fullRun = skip.size === 0;
  const refTotal = col >= 0 ? (fullRun ? SCANPY_TOTAL[col]! : scanpyTotal) : undefined;
  console.log(
    `${"pipeline total".padEnd(28)} ${fmt(total, 9)}  ${refTotal !== undefined ? fmt(refTotal, 8) : "       -"}  ${refTotal ? (total / refTotal).toFixed(2).padStart(6) : "     -"}   ${peakAll.toFixed(0).padStart(10)}   ${fmt(totalCpu, 9)}`,
  );
  console.log(
    `load average at the end: ${loadavg()
      .map((v) => v.toFixed(1))
      .join(" ")} (CPUs: ${availableParallelism()})`,
  );
  if (col >= 0)
    console.log(
      `peak RSS: Tessera ${peakAll.toFixed(0)} MB, scanpy ${SCANPY_RSS_MB[col]} MB (ratio ${(peakAll / SCANPY_RSS_MB[col]!).toFixed(2)})`,
    );
} finally {
  await t.close();
  await sampler.stop();
}

/**
 * The standard single-cell pipeline, step by step, with scanpy's figures beside ours:
 * qc → normalize → log1p → hvg → pca → neighbors → umap → leiden → rank_genes_groups.
 *
 *   npx tsx --expose-gc bench/scanpy.ts [--cells 10000,100000] [--genes 2000] [--skip-umap]
 *
 * Data: `generateLargeTable(n, genes, seed 0)` from bench/generate.ts (negative-binomial counts with
 * cell types). Operations are called directly on the main thread (the engine's dispatch overhead is in
 * bench/engine.ts). Prints one table per size: seconds per step and the peak RSS (sampled every 50 ms
 * from a worker thread, so long synchronous steps are seen too). A benchmark prints figures; it never
 * passes or fails.
 */

import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { highly_variable_genes } from "../src/plugins/scanpy/pp/highly-variable-genes.js";
import { neighbors } from "../src/plugins/scanpy/pp/neighbors.js";
import { normalize_total } from "../src/plugins/scanpy/pp/normalization.js";
import { pca } from "../src/plugins/scanpy/pp/pca.js";
import { calculate_qc_metrics } from "../src/plugins/scanpy/pp/qc.js";
import { log1p } from "../src/plugins/scanpy/pp/simple.js";
import { leiden } from "../src/plugins/scanpy/tl/cluster.js";
import { rank_genes_groups } from "../src/plugins/scanpy/tl/rank-genes-groups.js";
import { umap } from "../src/plugins/scanpy/tl/umap.js";
import { applyChange, type Change } from "../src/sdk/data/change.js";
import { dataFrame } from "../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { makeTable } from "../src/sdk/data/table.js";
import { BENCH_THREADS, benchCtx } from "./context.js";
import { generateLargeTable } from "./generate.js";

/** scanpy 1.12.3 seconds on this machine class (/work/shared/bench/README.md): 10k×2k, 50k×3k, 200k×5k. */
const SCANPY: Record<string, [number, number, number]> = {
  calculate_qc_metrics: [0.175, 1.43, 7.95],
  normalize_total: [0.0068, 0.0591, 0.43],
  log1p: [0.0024, 0.0176, 0.203],
  highly_variable_genes: [0.0266, 0.519, 2.84],
  pca: [0.447, 2.07, 8.32],
  neighbors: [1.49, 4.09, 16.5],
  umap: [10.1, 25, 143],
  leiden: [0.365, 3.19, 12.8],
  rank_genes_groups: [0.525, 1.17, 5.54],
};
const SCANPY_RSS_MB = [2218, 7316, 9608];

const { values } = parseArgs({
  options: {
    cells: { type: "string", default: "10000,100000" },
    genes: { type: "string", default: "2000" },
    "skip-umap": { type: "boolean", default: false },
  },
});
const sizes = values.cells!.split(",").map(Number);
const nGenes = Number(values.genes);

/** Peak RSS sampler on a worker thread (the main thread blocks during long steps). */
function rssSampler(): { reset(): void; peak(): Promise<number>; stop(): Promise<void> } {
  const shared = new Float64Array(new SharedArrayBuffer(8));
  const w = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
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

const ctx = benchCtx;

type Step = [name: string, run: (sd: SpatialData) => Promise<Change>];

const steps: Step[] = [
  ["calculate_qc_metrics", (sd) => calculate_qc_metrics(sd, {}, ctx())],
  ["normalize_total", (sd) => normalize_total(sd, {}, ctx())],
  ["log1p", (sd) => log1p(sd, {}, ctx())],
  [
    "highly_variable_genes",
    (sd) => highly_variable_genes(sd, { flavor: "seurat", n_top_genes: 1000 }, ctx()),
  ],
  ["pca", (sd) => pca(sd, { n_comps: 50 }, ctx())],
  ["neighbors", (sd) => neighbors(sd, { n_neighbors: 15 }, ctx())],
  ["umap", (sd) => umap(sd, {}, ctx())],
  ["leiden", (sd) => leiden(sd, { flavor: "igraph", n_iterations: 2 }, ctx())],
  ["rank_genes_groups", (sd) => rank_genes_groups(sd, { groupby: "leiden", method: "t-test" }, ctx())],
];

const sampler = rssSampler();
console.log(
  `bench/scanpy: generateLargeTable(n, ${nGenes}, seed 0) from bench/generate.ts; ops on the main thread, thread budget ${BENCH_THREADS} (BENCH_THREADS)`,
);
for (const n of sizes) {
  const t0 = performance.now();
  const gen = generateLargeTable(n, nGenes, 0);
  // Only X, var names and a cell index: the pipeline computes everything else.
  const table = makeTable({
    X: gen.X,
    obs: dataFrame(gen.obs.index, {}, gen.obs.indexName),
    var: dataFrame(gen.var.index, {}, gen.var.indexName),
  });
  let sd = makeSpatialData({ tables: { table } });
  console.log(
    `\n${n.toLocaleString("en")} cells × ${nGenes} genes (generated in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  console.log("step                     seconds   peak RSS MB   scanpy s (10k / 50k×3k / 200k×5k)");
  let total = 0;
  let peakAll = 0;
  for (const [name, run] of steps) {
    if (name === "umap" && values["skip-umap"]) continue;
    (globalThis as { gc?: () => void }).gc?.();
    sampler.reset();
    const s0 = performance.now();
    const change = await run(sd);
    sd = applyChange(sd, change).sdata;
    const secs = (performance.now() - s0) / 1000;
    const peak = await sampler.peak();
    total += secs;
    peakAll = Math.max(peakAll, peak);
    const ref = SCANPY[name]!;
    console.log(
      `${name.padEnd(24)} ${secs.toFixed(3).padStart(8)}   ${peak.toFixed(0).padStart(11)}   ${ref.join(" / ")}`,
    );
  }
  console.log(
    `${"total".padEnd(24)} ${total.toFixed(3).padStart(8)}   ${peakAll.toFixed(0).padStart(11)}   scanpy peak RSS MB ${SCANPY_RSS_MB.join(" / ")}`,
  );
}
await sampler.stop();

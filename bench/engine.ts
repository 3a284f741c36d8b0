/**
 * Engine benchmark: what running an operation on a worker thread costs, and evidence that dispatch
 * copies no large array. Prints figures; never passes or fails.
 *
 * 1. The overhead of one no-op job end to end: SerialQueue → WorkerPool (worker thread) → commit with
 *    `applyChange`, averaged over `--runs` jobs (default 200) on a small object.
 * 2. A job on a generated 1M-cell table (`--cells`, `--genes`, default 1,000,000 × 200): per-cell sums
 *    of the CSR X in the worker, committed as an obs column. Reports `prepareForWorker`, the time from
 *    dispatch until the worker starts, the main thread's longest event-loop stall, the total, and RSS
 *    before/after. A no-op on the same 1M-cell object shows dispatch cost does not grow with the data.
 *
 * Run: `npx tsx bench/engine.ts [--runs 200] [--cells 1000000] [--genes 200] [--threads 2]`.
 * Under tsx the pool runs the TypeScript worker (source mode); a built SDK runs dist/jobs/worker.js.
 */
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { dense, memoryBytes } from "../src/sdk/data/arrays.js";
import { applyChange, type Change } from "../src/sdk/data/change.js";
import { dataFrame } from "../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { makeTable } from "../src/sdk/data/table.js";
import type { EffectClass } from "../src/sdk/jobs/operation.js";
import { WorkerPool, type WorkerTask } from "../src/sdk/jobs/pool.js";
import { SerialQueue } from "../src/sdk/jobs/queue.js";
import { prepareForWorker } from "../src/sdk/jobs/transfer.js";
import { generateLargeTable } from "./generate.js";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    cells: { type: "string", default: "1000000" },
    genes: { type: "string", default: "200" },
    threads: { type: "string", default: "2" },
  },
});
const RUNS = Number(args.runs);
const CELLS = Number(args.cells);
const GENES = Number(args.genes);
const THREADS = Number(args.threads);

const OPS = {
  basic: new URL("../test/sdk/jobs/ops/basic.ts", import.meta.url).href,
  data: new URL("../test/sdk/jobs/ops/data.ts", import.meta.url).href,
};

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const ms = (v: number) => `${v.toFixed(2)} ms`;
const rss = () => process.memoryUsage().rss;

function task(
  mod: keyof typeof OPS,
  fn: string,
  sdata: SpatialData,
  effect: EffectClass = "compute",
): WorkerTask {
  return { module: OPS[mod], export: fn, sdata, params: {}, table: "table", seed: 0, threads: 1, effect };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** One job through a session-like path: queue → pool → commit. Resolves with the new object. */
function queuedJob(
  q: SerialQueue,
  pool: WorkerPool,
  id: string,
  t: WorkerTask,
  onStart?: () => void,
): Promise<{ sdata: SpatialData; diff: Record<string, string[]> }> {
  return new Promise((resolve, reject) => {
    q.push(id, async (signal) => {
      try {
        const change = (await pool.run(t, { signal, onStart })) as Change;
        const { sdata, diff } = applyChange(t.sdata, change);
        resolve({ sdata, diff });
      } catch (e) {
        reject(e);
      }
    });
  });
}

async function main(): Promise<void> {
  console.log(`engine bench: node ${process.version}, pool threads ${THREADS}`);
  const t0 = performance.now();
  const pool = new WorkerPool({ threads: THREADS, minThreads: THREADS, longRunningS: 600 });
  const small = makeSpatialData({
    tables: {
      table: makeTable({
        obs: dataFrame(["a", "b", "c"], { n: dense(Float64Array.from([1, 2, 3])) }),
        var: dataFrame(["g"]),
      }),
    },
  });
  const q = new SerialQueue();
  for (let i = 0; i < THREADS; i++) await pool.run(task("basic", "noop", small));
  console.log(`pool start (${pool.mode} worker, first job included): ${ms(performance.now() - t0)}`);

  // 1. No-op overhead.
  for (let i = 0; i < 20; i++) await queuedJob(q, pool, `warm${i}`, task("basic", "noop", small));
  const times: number[] = [];
  let committed = small;
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    committed = (await queuedJob(q, pool, `noop${i}`, task("basic", "noop", committed))).sdata;
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(
    `no-op job (queue + worker + applyChange), ${RUNS} runs: mean ${ms(mean)}, median ${ms(quantile(times, 0.5))}, ` +
      `p95 ${ms(quantile(times, 0.95))}, min ${ms(times[0]!)}`,
  );

  // 2. A 1M-cell table.
  let s = performance.now();
  const table = generateLargeTable(CELLS, GENES, 0);
  const X = table.X!;
  const xBytes = X.kind === "lazy" ? 0 : memoryBytes(X);
  const big = makeSpatialData({ tables: { table } });
  console.log(
    `generated ${CELLS.toLocaleString()} × ${GENES} CSR table in ${ms(performance.now() - s)}: X ${mb(xBytes)} ` +
      `(nnz ${X.kind === "csr" ? X.data.length.toLocaleString() : "?"}), obs index ${CELLS.toLocaleString()} strings`,
  );
  global.gc?.();
  const rss0 = rss();
  s = performance.now();
  const prepared = await prepareForWorker(big);
  const prep1 = performance.now() - s;
  s = performance.now();
  await prepareForWorker(big);
  const prep2 = performance.now() - s;
  console.log(
    `prepareForWorker: first ${ms(prep1)}, again ${ms(prep2)}; same X buffers: ${prepared.tables.table!.X === X}`,
  );

  const histogram = monitorEventLoopDelay({ resolution: 1 });
  for (let round = 1; round <= 3; round++) {
    global.gc?.();
    const before = rss();
    histogram.reset();
    histogram.enable();
    const start = performance.now();
    let startedAt = 0;
    const { sdata, diff } = await queuedJob(q, pool, `sum${round}`, task("data", "sumX", big), () => {
      startedAt = performance.now();
    });
    const total = performance.now() - start;
    histogram.disable();
    const sums = sdata.tables.table!.obs.columns.sum_counts!;
    const first = sums.kind === "dense" ? sums.data[0] : "?";
    console.log(
      `sumX on ${CELLS.toLocaleString()} cells, round ${round}: dispatch→start ${ms(startedAt - start)}, total ${ms(total)}, ` +
        `main-thread max stall ${ms(histogram.max / 1e6)}, RSS ${mb(before)} → ${mb(rss())} ` +
        `(diff ${JSON.stringify(diff)}, first sum ${first})`,
    );
  }
  const noop: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    await queuedJob(q, pool, `bignoop${i}`, task("basic", "noop", big));
    noop.push(performance.now() - t);
  }
  noop.sort((a, b) => a - b);
  console.log(
    `no-op job on the ${CELLS.toLocaleString()}-cell object, 20 runs: median ${ms(quantile(noop, 0.5))}`,
  );
  console.log(`RSS: before the 1M-cell jobs ${mb(rss0)}, after ${mb(rss())} (X alone is ${mb(xBytes)})`);
  await pool.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});

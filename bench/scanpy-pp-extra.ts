/**
 * Benchmark of `sc.pp.regress_out`, `subsample`, `combat` and `scrublet` on generated raw counts
 * (`generateLargeTable`) at 10k and 100k cells. Prints seconds per step and the peak RSS; never passes
 * or fails. `../shared/bench/README.md` has no scanpy figure for these four steps, so none is printed.
 *
 * regress_out regresses `total_counts` out of the 2k-gene counts (a dense 0.8 GB result at 100k
 * cells); combat corrects a three-batch `batch` column (dense too). Scrublet's neighbour search is
 * O(n·k) with k ≈ 1.5·√n_obs over 3·n_obs points, so it runs only up to `--scrublet-max` cells
 * (default 10,000).
 *
 * Run: `npx tsx bench/scanpy-pp-extra.ts [--cells 10000,100000] [--genes 2000] [--scrublet-max 10000]`.
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { combat } from "../src/plugins/scanpy/pp/combat.js";
import { subsample } from "../src/plugins/scanpy/pp/sampling.js";
import { scrublet } from "../src/plugins/scanpy/pp/scrublet.js";
import { regress_out } from "../src/plugins/scanpy/pp/simple.js";
import { type Categorical, strings } from "../src/sdk/data/arrays.js";
import { withColumn } from "../src/sdk/data/dataframe.js";
import { makeSpatialData } from "../src/sdk/data/spatialdata.js";
import { makeTable } from "../src/sdk/data/table.js";
import type { OpContext } from "../src/sdk/jobs/operation.js";
import { Rng } from "../src/sdk/math/rng.js";
import { generateLargeTable } from "./generate.js";

const { values: args } = parseArgs({
  options: {
    cells: { type: "string", default: "10000,100000" },
    genes: { type: "string", default: "2000" },
    "scrublet-max": { type: "string", default: "10000" },
  },
});

const ctx: OpContext = {
  table: "table",
  signal: new AbortController().signal,
  rng: new Rng(0),
  threads: 1,
  progress: () => {},
  log: () => {},
};

let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 50);

async function time(label: string, f: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await f();
  const s = (performance.now() - t0) / 1000;
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(`  ${label.padEnd(44)} ${s.toFixed(3).padStart(9)} s`);
}

const genes = Number(args.genes);
for (const n of args.cells.split(",").map(Number)) {
  const base = generateLargeTable(n, genes, 0);
  const batch: Categorical = {
    kind: "categorical",
    codes: Int32Array.from({ length: n }, (_, i) => i % 3),
    categories: strings(["b0", "b1", "b2"]),
    ordered: false,
  };
  const table = makeTable({ ...base, obs: withColumn(base.obs, "batch", batch) });
  const sd = makeSpatialData({ tables: { table } });
  console.log(`${n} cells × ${genes} genes`);
  await time("pp.regress_out(keys=total_counts)", () => regress_out(sd, { keys: ["total_counts"] }, ctx));
  await time("pp.subsample(fraction=0.1)", () => subsample(sd, { fraction: 0.1 }, ctx));
  await time("pp.combat(key=batch, 3 batches)", () => combat(sd, { key: "batch" }, ctx));
  if (n <= Number(args["scrublet-max"])) {
    await time("pp.scrublet (defaults)", () => scrublet(sd, {}, ctx));
  } else {
    console.log(`  ${"pp.scrublet".padEnd(44)}   skipped (above --scrublet-max)`);
  }
}
clearInterval(sampler);
console.log(`peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`);

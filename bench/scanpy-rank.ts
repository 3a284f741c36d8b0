/**
 * Benchmark of `sc.tl.rank_genes_groups` (t-test, Wilcoxon and logreg, all genes, each group vs the rest)
 * on generated counts (`generateLargeTable`), log-normalised here (median total, log1p), grouped into
 * 12 groups (the 8 generated cell types, four of them split in two). Prints seconds per step with
 * scanpy 1.12.3's figure beside it (`../shared/bench/README.md`: 10k cells × 2k genes and 50k × 3k;
 * scanpy was not measured at 100k × 2k) and the peak RSS; never passes or fails. CPU seconds are
 * printed beside wall seconds because the machines here are shared: under load, wall time inflates
 * and CPU time much less.
 *
 * Run: `npx tsx bench/scanpy-rank.ts [--cells 10000,100000] [--genes 2000]`.
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { rank_genes_groups } from "../src/plugins/scanpy/tl/rank-genes-groups.js";
import { allocArray, type Categorical, type SparseMatrix, strings } from "../src/sdk/data/arrays.js";
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

/** scanpy 1.12.3 on this machine class (seconds): [10k × 2k, 50k × 3k]. */
const SCANPY: Partial<Record<string, [number, number]>> = {
  "t-test": [0.525, 1.17],
  wilcoxon: [0.991, 7.96],
};

let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 50);

/** normalize_total (median target) + log1p, in new float32 arrays. */
function logNormalize(x: SparseMatrix): SparseMatrix {
  const rows = x.shape[0];
  const totals = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let p = x.indptr[i]!; p < x.indptr[i + 1]!; p++) s += x.data[p] as number;
    totals[i] = s;
  }
  const median = Float64Array.from(totals).sort()[Math.floor(rows / 2)]!;
  const data = allocArray("float32", x.data.length) as Float32Array;
  for (let i = 0; i < rows; i++) {
    const f = totals[i]! / median;
    for (let p = x.indptr[i]!; p < x.indptr[i + 1]!; p++) data[p] = Math.log1p((x.data[p] as number) / f);
  }
  return { ...x, dtype: "float32", data };
}

const genes = Number(args.genes);
for (const n of args.cells.split(",").map(Number)) {
  const base = generateLargeTable(n, genes, 0);
  const ct = base.obs.columns.cell_type as Categorical;
  const rng = new Rng(1);
  const codes = Int32Array.from(ct.codes, (c) => (c < 4 && rng.next() < 0.5 ? c + 8 : c));
  const group: Categorical = {
    kind: "categorical",
    codes,
    categories: strings(Array.from({ length: 12 }, (_, i) => `G${String(i).padStart(2, "0")}`)),
    ordered: false,
  };
  const table = makeTable({
    ...base,
    X: logNormalize(base.X as SparseMatrix),
    obs: withColumn(base.obs, "group", group),
  });
  const sd = makeSpatialData({ tables: { table } });
  console.log(`${n} cells × ${genes} genes, 12 groups`);
  for (const method of ["t-test", "wilcoxon", "logreg"] as const) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await rank_genes_groups(sd, { groupby: "group", method }, ctx);
    const s = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(c0);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    peak = Math.max(peak, process.memoryUsage().rss);
    const figures = SCANPY[method];
    const ref = !figures
      ? "no scanpy figure"
      : n === 10_000
        ? `scanpy ${figures[0]} s`
        : `scanpy ${figures[0]} s @10k×2k, ${figures[1]} s @50k×3k`;
    console.log(
      `  tl.rank_genes_groups(${method})`.padEnd(40) +
        `${s.toFixed(3).padStart(8)} s wall, ${cpuS.toFixed(3)} s CPU   (${ref})`,
    );
  }
}
clearInterval(sampler);
console.log(`peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`);

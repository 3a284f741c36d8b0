/**
 * Benchmark of `sc.pp.pca` (50 comps, arpack, HVG mask, sparse X centred implicitly) and
 * `sc.pp.neighbors` (k = 15, umap connectivities) on generated count tables, with scanpy 1.12.3's
 * times from `../shared/bench/README.md` beside them. The input is log-normalised inline (median
 * total, log1p) and the 1000 genes of highest log-variance are flagged `highly_variable`, standing in
 * for the hvg step. Prints seconds per step and peak RSS; never passes or fails.
 *
 * Run: `npx tsx bench/scanpy-pca-neighbors.ts [--cells 10000,100000] [--genes 2000] [--recall]`
 * (`--recall` also measures kNN recall against the exact neighbours of 300 sampled cells).
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { neighbors } from "../src/plugins/scanpy/pp/neighbors.js";
import { pca } from "../src/plugins/scanpy/pp/pca.js";
import { allocArray, type DenseArray, dense, type SparseMatrix } from "../src/sdk/data/arrays.js";
import { applyChange } from "../src/sdk/data/change.js";
import { withColumn } from "../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { makeTable, type Table } from "../src/sdk/data/table.js";
import type { OpContext } from "../src/sdk/jobs/operation.js";
import { Rng } from "../src/sdk/math/rng.js";
import { generateLargeTable } from "./generate.js";

/** scanpy 1.12.3 on this machine class (seconds): 10k × 2k, 50k × 3k, 200k × 5k. */
const SCANPY = {
  pca: { 10000: 0.447, 50000: 2.07, 200000: 8.32 },
  neighbors: { 10000: 1.49, 50000: 4.09, 200000: 16.5 },
} as const;

function scanpyFigure(step: keyof typeof SCANPY, n: number): string {
  const t = SCANPY[step] as Record<number, number>;
  if (t[n] !== undefined) return `${t[n]} s`;
  if (n > 50000 && n < 200000) return `${t[50000]} s @50k … ${t[200000]} s @200k`;
  return `${t[10000]} s @10k, ${t[50000]} s @50k, ${t[200000]} s @200k`;
}

function ctx(): OpContext {
  return {
    table: "table",
    signal: new AbortController().signal,
    rng: new Rng(0),
    threads: 2,
    progress: () => {},
    log: () => {},
  };
}

/** Median-normalise and log1p a count CSR into a new data array (indices/indptr shared), flag 1000 HVGs. */
function logNormalise(t: Table): Table {
  const x = t.X as SparseMatrix;
  const [n, m] = x.shape;
  const totals = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let e = Number(x.indptr[i]); e < Number(x.indptr[i + 1]); e++) totals[i] += Number(x.data[e]);
  }
  const sorted = Float64Array.from(totals).sort();
  const target = sorted[Math.floor(n / 2)]!;
  const data = allocArray("float32", x.data.length) as Float32Array;
  const sum = new Float64Array(m);
  const sumSq = new Float64Array(m);
  for (let i = 0; i < n; i++) {
    const f = totals[i]! > 0 ? target / totals[i]! : 0;
    for (let e = Number(x.indptr[i]); e < Number(x.indptr[i + 1]); e++) {
      const v = Math.log1p(Number(x.data[e]) * f);
      data[e] = v;
      const j = Number(x.indices[e]);
      sum[j] += v;
      sumSq[j] += v * v;
    }
  }
  const variance = Array.from({ length: m }, (_, j) => sumSq[j]! / n - (sum[j]! / n) ** 2);
  const order = variance.map((v, j) => [v, j] as const).sort((a, b) => b[0] - a[0]);
  const hv = new Uint8Array(m);
  for (let r = 0; r < Math.min(1000, m); r++) hv[order[r]![1]] = 1;
  return makeTable({
    X: { ...x, data },
    obs: t.obs,
    var: withColumn(t.var, "highly_variable", dense(hv, [m], "bool")),
  });
}

function rssMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** Recall of the stored graph against exact neighbours of `samples` cells in X_pca. */
function recall(sd: SpatialData, samples: number): number {
  const t = sd.tables.table!;
  const xp = t.obsm.X_pca as DenseArray;
  const x = xp.data as Float32Array;
  const [n, d] = xp.shape as [number, number];
  const dist = t.obsp.distances as SparseMatrix;
  const h = Number(dist.indptr[1]) - Number(dist.indptr[0]);
  let hits = 0;
  for (let s = 0; s < samples; s++) {
    const p = Math.floor((s * n) / samples);
    const all = new Float64Array(n);
    for (let q = 0; q < n; q++) {
      let a = 0;
      for (let u = 0; u < d; u++) a += (x[p * d + u]! - x[q * d + u]!) ** 2;
      all[q] = q === p ? Infinity : a;
    }
    const kth = Float64Array.from(all).sort()[h - 1]!;
    for (let e = Number(dist.indptr[p]); e < Number(dist.indptr[p + 1]); e++) {
      if (all[Number(dist.indices[e])]! <= kth * (1 + 1e-6)) hits++;
    }
  }
  return hits / (samples * h);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cells: { type: "string", default: "10000,100000" },
      genes: { type: "string", default: "2000" },
      recall: { type: "boolean", default: false },
    },
  });
  const genes = Number(values.genes);
  for (const n of values.cells!.split(",").map(Number)) {
    let t0 = performance.now();
    const raw = generateLargeTable(n, genes, 0);
    const table = logNormalise(raw);
    let sd = makeSpatialData({ tables: { table } });
    const nnz = (table.X as SparseMatrix).data.length;
    console.log(
      `\n${n} cells × ${genes} genes (nnz ${nnz}, ${((100 * nnz) / (n * genes)).toFixed(1)}%): ` +
        `generated + log-normalised in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    t0 = performance.now();
    sd = applyChange(sd, await pca(sd, { n_comps: 50, svd_solver: "arpack" }, ctx())).sdata;
    const tPca = (performance.now() - t0) / 1000;
    console.log(`  pp.pca (arpack, 50, HVG 1000)  ${tPca.toFixed(2)} s   scanpy ${scanpyFigure("pca", n)}`);
    t0 = performance.now();
    sd = applyChange(sd, await neighbors(sd, { n_neighbors: 15 }, ctx())).sdata;
    const tNb = (performance.now() - t0) / 1000;
    console.log(
      `  pp.neighbors (k=15, umap)      ${tNb.toFixed(2)} s   scanpy ${scanpyFigure("neighbors", n)}`,
    );
    if (values.recall) console.log(`  kNN recall vs exact (300 cells) ${recall(sd, 300).toFixed(4)}`);
    console.log(`  peak RSS ${rssMb()} MB`);
  }
}

await main();

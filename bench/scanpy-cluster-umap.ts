/**
 * Benchmark of `sc.tl.leiden`, `sc.tl.louvain` and `sc.tl.umap` on generated kNN graphs, with
 * scanpy 1.12.3's figures on this machine class beside them (`/work/shared/bench/README.md`).
 *
 * The input graph: Gaussian blobs (16 clusters of unequal size and spread in 4-d), the exact 15
 * nearest neighbours from a k-d tree, and UMAP-style fuzzy connectivities (per-cell ρ and σ with
 * log2(k) total membership, fuzzy union) — the graph `sc.pp.neighbors` would give, without depending
 * on it. Each operation runs through its plugin function on a table holding that graph. Prints
 * seconds per step; never passes or fails.
 *
 * Run: `npx tsx bench/scanpy-cluster-umap.ts [--cells 10000,100000] [--seed N] [--no-umap] [--no-leiden]`.
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { leiden, louvain } from "../src/plugins/scanpy/tl/cluster.js";
import { umap } from "../src/plugins/scanpy/tl/umap.js";
import type { Categorical, SparseMatrix } from "../src/sdk/data/arrays.js";
import { dataFrame } from "../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { makeTable } from "../src/sdk/data/table.js";
import { unsDict } from "../src/sdk/data/uns.js";
import type { OpContext } from "../src/sdk/jobs/operation.js";
import { Rng } from "../src/sdk/math/rng.js";

const DIMS = 4;
const K = 15;

/** scanpy's seconds at 10k / 50k / 200k cells (the bench README's table). */
const SCANPY: Record<string, [number, number, number]> = {
  "leiden (igraph, 2 iterations)": [0.365, 3.19, 12.8],
  "leiden (leidenalg default, until stable)": [0.674, 5.84, 104],
  "louvain (igraph)": [0.455, 5.25, 29.2],
  "umap (defaults)": [10.1, 25, 143],
};

/** Points of 16 Gaussian blobs in DIMS dimensions (row-major). */
export function blobs(n: number, rng: Rng): Float64Array {
  const nBlobs = 16;
  const centres = new Float64Array(nBlobs * DIMS);
  for (let i = 0; i < centres.length; i++) centres[i] = rng.uniform(-20, 20);
  const weights = Array.from({ length: nBlobs }, () => 0.3 + rng.next());
  const spread = Array.from({ length: nBlobs }, () => 1 + 2 * rng.next());
  const ids = Array.from({ length: nBlobs }, (_, i) => i);
  const x = new Float64Array(n * DIMS);
  for (let i = 0; i < n; i++) {
    const b = rng.choice(ids, weights);
    for (let d = 0; d < DIMS; d++) x[i * DIMS + d] = centres[b * DIMS + d]! + spread[b]! * rng.normal();
  }
  return x;
}

/** Exact k nearest neighbours (self excluded) with a k-d tree: indices and distances, n × k. */
export function knn(x: Float64Array, n: number, k: number): { idx: Int32Array; dist: Float64Array } {
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  // Implicit tree: node = [lo, hi) range of `order`, split at the median of the widest axis.
  const splitAxis = new Int8Array(n);
  const build = (lo: number, hi: number): void => {
    if (hi - lo <= 16) return;
    let axis = 0;
    let best = -1;
    for (let d = 0; d < DIMS; d++) {
      let mn = Infinity;
      let mx = -Infinity;
      for (let t = lo; t < hi; t += Math.max(1, ((hi - lo) / 64) | 0)) {
        const v = x[order[t]! * DIMS + d]!;
        if (v < mn) mn = v;
        if (v > mx) mx = v;
      }
      if (mx - mn > best) {
        best = mx - mn;
        axis = d;
      }
    }
    const mid = (lo + hi) >> 1;
    // Quickselect on the axis.
    let l = lo;
    let r = hi - 1;
    while (l < r) {
      const pivot = x[order[(l + r) >> 1]! * DIMS + axis]!;
      let i = l;
      let j = r;
      while (i <= j) {
        while (x[order[i]! * DIMS + axis]! < pivot) i++;
        while (x[order[j]! * DIMS + axis]! > pivot) j--;
        if (i <= j) {
          const t = order[i]!;
          order[i] = order[j]!;
          order[j] = t;
          i++;
          j--;
        }
      }
      if (mid <= j) r = j;
      else if (mid >= i) l = i;
      else break;
    }
    splitAxis[mid] = axis;
    build(lo, mid);
    build(mid, hi);
  };
  build(0, n);
  const idx = new Int32Array(n * k);
  const dist = new Float64Array(n * k);
  const hd = new Float64Array(k);
  const hi_ = new Int32Array(k);
  for (let q = 0; q < n; q++) {
    hd.fill(Infinity);
    hi_.fill(-1);
    const qo = q * DIMS;
    const search = (lo: number, hi: number): void => {
      if (hi - lo <= 16) {
        for (let t = lo; t < hi; t++) {
          const p = order[t]!;
          if (p === q) continue;
          let d2 = 0;
          for (let d = 0; d < DIMS; d++) {
            const v = x[qo + d]! - x[p * DIMS + d]!;
            d2 += v * v;
          }
          if (d2 < hd[k - 1]!) {
            let s = k - 1;
            while (s > 0 && hd[s - 1]! > d2) {
              hd[s] = hd[s - 1]!;
              hi_[s] = hi_[s - 1]!;
              s--;
            }
            hd[s] = d2;
            hi_[s] = p;
          }
        }
        return;
      }
      const mid = (lo + hi) >> 1;
      const axis = splitAxis[mid]!;
      const diff = x[qo + axis]! - x[order[mid]! * DIMS + axis]!;
      if (diff < 0) {
        search(lo, mid);
        if (diff * diff < hd[k - 1]!) search(mid, hi);
      } else {
        search(mid, hi);
        if (diff * diff < hd[k - 1]!) search(lo, mid);
      }
    };
    search(0, n);
    for (let s = 0; s < k; s++) {
      idx[q * k + s] = hi_[s]!;
      dist[q * k + s] = Math.sqrt(hd[s]!);
    }
  }
  return { idx, dist };
}

/** UMAP's fuzzy simplicial set of a kNN graph (ρ = nearest distance, σ by bisection), fuzzy union. */
export function connectivities(idx: Int32Array, dist: Float64Array, n: number, k: number): SparseMatrix {
  const target = Math.log2(k);
  const w = new Float64Array(n * k);
  for (let i = 0; i < n; i++) {
    const rho = dist[i * k]!;
    let lo = 0;
    let hi = Infinity;
    let sigma = 1;
    for (let it = 0; it < 64; it++) {
      let s = 0;
      for (let j = 0; j < k; j++) s += Math.exp(-Math.max(0, dist[i * k + j]! - rho) / sigma);
      if (Math.abs(s - target) < 1e-5) break;
      if (s > target) {
        hi = sigma;
        sigma = (lo + hi) / 2;
      } else {
        lo = sigma;
        sigma = hi === Infinity ? sigma * 2 : (lo + hi) / 2;
      }
    }
    for (let j = 0; j < k; j++) w[i * k + j] = Math.exp(-Math.max(0, dist[i * k + j]! - rho) / sigma);
  }
  // Fuzzy union A + Aᵀ − A∘Aᵀ: every kNN entry (i → c, a) in row i and row c, then per row the two
  // entries of a pair merge as a + b − ab.
  const counts = new Int32Array(n + 1);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < k; j++) {
      counts[i + 1]!++;
      counts[idx[i * k + j]! + 1]!++;
    }
  for (let i = 0; i < n; i++) counts[i + 1]! += counts[i];
  const rawCol = new Int32Array(counts[n]!);
  const rawVal = new Float64Array(counts[n]!);
  const fill = counts.slice(0, n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < k; j++) {
      const c = idx[i * k + j]!;
      const a = w[i * k + j]!;
      rawCol[fill[i]!] = c;
      rawVal[fill[i]!++] = a;
      rawCol[fill[c]!] = i;
      rawVal[fill[c]!++] = a;
    }
  const indptr = new Int32Array(n + 1);
  const pos = new Int32Array(n).fill(-1);
  let out = 0;
  for (let i = 0; i < n; i++) {
    const start = out;
    for (let p = counts[i]!; p < counts[i + 1]!; p++) {
      const c = rawCol[p]!;
      const v = rawVal[p]!;
      if (pos[c]! >= start) rawVal[pos[c]!] = rawVal[pos[c]!]! + v - rawVal[pos[c]!]! * v;
      else {
        pos[c] = out;
        rawCol[out] = c;
        rawVal[out++] = v;
      }
    }
    indptr[i + 1] = out;
  }
  return {
    kind: "csr",
    dtype: "float32",
    shape: [n, n],
    data: Float32Array.from(rawVal.subarray(0, out)),
    indices: rawCol.slice(0, out),
    indptr,
  };
}

function ctxFor(): OpContext {
  return {
    table: "table",
    signal: new AbortController().signal,
    rng: new Rng(0),
    threads: 1,
    progress: () => {},
    log: () => {},
  };
}

function scanpyAt(step: string, n: number): string {
  const f = SCANPY[step];
  if (!f) return "";
  if (n === 10000) return `${f[0]} s`;
  if (n === 50000) return `${f[1]} s`;
  if (n === 200000) return `${f[2]} s`;
  if (n === 100000) return `~${(f[1] + (f[2] - f[1]) / 3).toFixed(1)} s (interpolated 50k–200k)`;
  return "—";
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cells: { type: "string", default: "10000,100000" },
      seed: { type: "string", default: "0" },
      "no-umap": { type: "boolean", default: false },
      "no-leiden": { type: "boolean", default: false },
    },
  });
  const sizes = String(values.cells)
    .split(",")
    .map((s) => Number(s.trim()));
  const seed = Number(values.seed);
  console.log("| cells | step | tessera wall s (cpu s) | scanpy 1.12.3 | notes |");
  console.log("|---|---|---|---|---|");
  for (const n of sizes) {
    let t = performance.now();
    const cpu0 = process.cpuUsage();
    const rng = new Rng(seed);
    const x = blobs(n, rng);
    const { idx, dist } = knn(x, n, K);
    const graph = connectivities(idx, dist, n, K);
    const prep = (performance.now() - t) / 1000;
    const prepCpu = process.cpuUsage(cpu0).user / 1e6;
    const names = Array.from({ length: n }, (_, i) => `c${i}`);
    const table = makeTable({
      obs: dataFrame(names),
      var: dataFrame([]),
      obsp: { connectivities: graph },
      uns: unsDict({
        neighbors: unsDict({
          connectivities_key: "connectivities",
          distances_key: "distances",
          params: unsDict({ n_neighbors: K, method: "umap" }),
        }),
      }),
    });
    const sd: SpatialData = makeSpatialData({ tables: { table } });
    console.log(
      `| ${n} | (input: blobs + kNN + connectivities) | ${prep.toFixed(2)} (cpu ${prepCpu.toFixed(2)}) | | ${graph.data.length} stored edges |`,
    );
    const steps: [string, () => Promise<string>][] = [];
    if (!values["no-leiden"]) {
      steps.push([
        "leiden (igraph, 2 iterations)",
        async () => {
          const c = await leiden(sd, { flavor: "igraph", n_iterations: 2 }, ctxFor());
          const col = c.tables!.table!.obs!.leiden as Categorical;
          return `${col.categories.shape[0]} clusters, modularity ${Number(c.tables!.table!.uns!["leiden/modularity"]).toFixed(4)}`;
        },
      ]);
      steps.push([
        "leiden (leidenalg default, until stable)",
        async () => {
          const c = await leiden(sd, {}, ctxFor());
          const col = c.tables!.table!.obs!.leiden as Categorical;
          return `${col.categories.shape[0]} clusters, modularity ${Number(c.tables!.table!.uns!["leiden/modularity"]).toFixed(4)}`;
        },
      ]);
      steps.push([
        "louvain (igraph)",
        async () => {
          const c = await louvain(sd, { flavor: "igraph" }, ctxFor());
          const col = c.tables!.table!.obs!.louvain as Categorical;
          return `${col.categories.shape[0]} clusters`;
        },
      ]);
    }
    if (!values["no-umap"]) {
      steps.push([
        "umap (defaults)",
        async () => {
          await umap(sd, {}, ctxFor());
          return `${n <= 10000 ? 500 : 200} epochs`;
        },
      ]);
    }
    for (const [name, run] of steps) {
      t = performance.now();
      const cpu = process.cpuUsage();
      const note = await run();
      const s = (performance.now() - t) / 1000;
      const c = process.cpuUsage(cpu);
      const cpuS = (c.user + c.system) / 1e6;
      console.log(
        `| ${n} | ${name} | ${s.toFixed(2)} (cpu ${cpuS.toFixed(2)}) | ${scanpyAt(name, n)} | ${note} |`,
      );
    }
    const rss = process.memoryUsage().rss / 1e6;
    console.log(`| ${n} | (RSS after) | ${rss.toFixed(0)} MB | | |`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

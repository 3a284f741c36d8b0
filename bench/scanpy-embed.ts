/**
 * Benchmark of `sc.tl.tsne`, `sc.tl.draw_graph` (ForceAtlas2), `sc.tl.diffmap` and
 * `sc.tl.embedding_density` on generated data, with scanpy 1.12.3's t-SNE figure on this machine
 * class beside it (`/work/shared/bench/README.md`: 55.3 s at 10k cells, 492 s at 50k).
 *
 * Input: a PCA-like representation (16 Gaussian blobs in 50-d, variance decaying over components
 * as principal components do), its exact 15-NN graph with Gaussian connectivities for the graph
 * tools. Each operation runs through its plugin function. Prints seconds per step; never passes or fails.
 *
 * Run: `npx tsx bench/scanpy-embed.ts [--cells 10000,50000] [--seed N] [--no-tsne] [--no-fa]`.
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { diffmap } from "../src/plugins/scanpy/tl/diffmap.js";
import { draw_graph } from "../src/plugins/scanpy/tl/draw-graph.js";
import { embedding_density } from "../src/plugins/scanpy/tl/embedding-density.js";
import { tsne } from "../src/plugins/scanpy/tl/tsne.js";
import type { SparseMatrix } from "../src/sdk/data/arrays.js";
import { applyChange } from "../src/sdk/data/change.js";
import { dataFrame } from "../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { makeTable } from "../src/sdk/data/table.js";
import { unsDict } from "../src/sdk/data/uns.js";
import { Rng } from "../src/sdk/math/rng.js";
import { exactKnn } from "../src/sdk/math/tsne.js";
import { benchCtx } from "./context.js";

const D = 50;
const K = 15;

/** scanpy's seconds at 10k / 50k cells, where the bench README has them. */
const SCANPY: Record<string, [number | null, number | null]> = {
  tsne: [55.3, 492],
  draw_graph: [null, null],
  diffmap: [null, null],
  embedding_density: [null, null],
};

function pcaLike(n: number, rng: Rng): Float32Array {
  const blobs = 16;
  const centres = Array.from({ length: blobs }, () =>
    Float64Array.from({ length: D }, (_, t) => (rng.normal() * 8) / (1 + t / 4)),
  );
  const x = new Float32Array(n * D);
  for (let i = 0; i < n; i++) {
    const c = centres[rng.int(blobs)]!;
    for (let t = 0; t < D; t++) x[i * D + t] = c[t]! + (rng.normal() * 2) / (1 + t / 8);
  }
  return x;
}

function graph(x: Float32Array, n: number): SparseMatrix {
  const knn = exactKnn(x, n, D, K - 1);
  const rows: Map<number, number>[] = Array.from({ length: n }, () => new Map());
  for (let i = 0; i < n; i++) {
    const s = knn.distances2[i * (K - 1) + K - 2]!;
    for (let r = 0; r < K - 1; r++) {
      const j = knn.indices[i * (K - 1) + r]!;
      const w = Math.exp(-knn.distances2[i * (K - 1) + r]! / s);
      rows[i]!.set(j, Math.max(rows[i]!.get(j) ?? 0, w));
      rows[j]!.set(i, Math.max(rows[j]!.get(i) ?? 0, w));
    }
  }
  const indptr = new Int32Array(n + 1);
  const idx: number[] = [];
  const val: number[] = [];
  rows.forEach((m, i) => {
    for (const j of [...m.keys()].sort((a, b) => a - b)) {
      idx.push(j);
      val.push(m.get(j)!);
    }
    indptr[i + 1] = idx.length;
  });
  return {
    kind: "csr",
    dtype: "float32",
    shape: [n, n],
    data: Float32Array.from(val),
    indices: Int32Array.from(idx),
    indptr,
  };
}

const ctx = benchCtx;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cells: { type: "string", default: "10000" },
      seed: { type: "string", default: "0" },
      "no-tsne": { type: "boolean", default: false },
      "no-fa": { type: "boolean", default: false },
    },
  });
  const sizes = values.cells!.split(",").map(Number);
  console.log("step                 cells  wall (s)   cpu (s)   scanpy (s)");
  for (const n of sizes) {
    const rng = new Rng(Number(values.seed));
    const x = pcaLike(n, rng);
    let t0 = performance.now();
    const conn = graph(x, n);
    const tGraph = (performance.now() - t0) / 1000;
    const names = Array.from({ length: n }, (_, i) => `c${i}`);
    let sd: SpatialData = makeSpatialData({
      tables: {
        table: makeTable({
          obs: dataFrame(names),
          var: dataFrame([]),
          obsm: { X_pca: { kind: "dense", dtype: "float32", shape: [n, D], data: x } },
          obsp: { connectivities: conn },
          uns: unsDict({
            neighbors: unsDict({ connectivities_key: "connectivities", distances_key: "distances" }),
          }),
        }),
      },
    });
    let cpu0 = process.cpuUsage();
    const row = (name: string, secs: number) => {
      const col = n === 10000 ? 0 : n === 50000 ? 1 : null;
      const ref = col !== null ? SCANPY[name]?.[col] : null;
      const cpu = process.cpuUsage(cpu0);
      const cpuSecs = (cpu.user + cpu.system) / 1e6;
      console.log(
        `${name.padEnd(20)} ${String(n).padStart(7)} ${secs.toFixed(2).padStart(9)} ${cpuSecs.toFixed(2).padStart(9)}   ${ref != null ? ref : "—"}`,
      );
    };
    console.log(`(input graph: exact ${K}-NN + Gaussian weights, ${tGraph.toFixed(2)} s)`);
    if (!values["no-tsne"]) {
      t0 = performance.now();
      cpu0 = process.cpuUsage();
      sd = applyChange(sd, await tsne(sd, {}, ctx())).sdata;
      row("tsne", (performance.now() - t0) / 1000);
    }
    if (!values["no-fa"]) {
      t0 = performance.now();
      cpu0 = process.cpuUsage();
      sd = applyChange(sd, await draw_graph(sd, {}, ctx())).sdata;
      row("draw_graph", (performance.now() - t0) / 1000);
    }
    t0 = performance.now();
    cpu0 = process.cpuUsage();
    sd = applyChange(sd, await diffmap(sd, {}, ctx())).sdata;
    row("diffmap", (performance.now() - t0) / 1000);
    t0 = performance.now();
    cpu0 = process.cpuUsage();
    sd = applyChange(sd, await embedding_density(sd, { basis: "diffmap" }, ctx())).sdata;
    row("embedding_density", (performance.now() - t0) / 1000);
  }
  console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}

await main();

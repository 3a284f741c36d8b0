/**
 * sc.tl.leiden / louvain / umap against scanpy 1.12.3 on the synth_10k reference: the reference kNN
 * graph (`knn_connectivities.npz`) is put in obsp of a table of the kept cells, then our clustering is
 * compared with `leiden.csv` (adjusted Rand index, modularity, connectedness) and our embedding with
 * `umap.npy` (neighbourhood preservation, not coordinates).
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { leiden, louvain } from "../../../src/plugins/scanpy/tl/cluster.js";
import { umap } from "../../../src/plugins/scanpy/tl/umap.js";
import type { Categorical, SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable, type Table } from "../../../src/sdk/data/table.js";
import { unsDict, unsGet } from "../../../src/sdk/data/uns.js";
import { graphFromSparse, partitionQuality } from "../../../src/sdk/math/leiden.js";
import { reference } from "../../fixtures.js";
import { readNpy, readNpz } from "../../helpers/npy.js";
import { makeCtx } from "./ctx.js";

/** Adjusted Rand index of two labelings (Hubert & Arabie 1985). */
function ari(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = a.length;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < n; i++) {
    na = Math.max(na, a[i]! + 1);
    nb = Math.max(nb, b[i]! + 1);
  }
  const table = new Float64Array(na * nb);
  const rowSums = new Float64Array(na);
  const colSums = new Float64Array(nb);
  for (let i = 0; i < n; i++) {
    table[a[i]! * nb + b[i]!]!++;
    rowSums[a[i]!]!++;
    colSums[b[i]!]!++;
  }
  const pairs = (x: number) => (x * (x - 1)) / 2;
  let index = 0;
  let sa = 0;
  let sb = 0;
  for (const x of table) index += pairs(x);
  for (const x of rowSums) sa += pairs(x);
  for (const x of colSums) sb += pairs(x);
  const expected = (sa * sb) / pairs(n);
  const max = (sa + sb) / 2;
  return max === expected ? 1 : (index - expected) / (max - expected);
}

/** Whether every community induces a connected subgraph of `m`. */
function communitiesConnected(m: SparseMatrix, labels: Int32Array): boolean {
  const n = labels.length;
  const seen = new Uint8Array(n);
  const started = new Set<number>();
  for (let s = 0; s < n; s++) {
    if (seen[s]) continue;
    const c = labels[s]!;
    if (started.has(c)) return false; // a second piece of community c
    started.add(c);
    const stack = [s];
    seen[s] = 1;
    while (stack.length) {
      const v = stack.pop()!;
      for (let k = Number(m.indptr[v]); k < Number(m.indptr[v + 1]); k++) {
        const u = m.indices[k] as number;
        if (!seen[u] && labels[u] === c) {
          seen[u] = 1;
          stack.push(u);
        }
      }
    }
  }
  return true;
}

/** For each cell, its k nearest cells in an embedding (brute force; n·k indices). */
function embeddingNeighbours(e: ArrayLike<number>, n: number, dim: number, k: number): Int32Array {
  const out = new Int32Array(n * k);
  const bestD = new Float64Array(k);
  const bestI = new Int32Array(k);
  for (let i = 0; i < n; i++) {
    bestD.fill(Infinity);
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      let d = 0;
      for (let q = 0; q < dim; q++) {
        const x = e[i * dim + q]! - e[j * dim + q]!;
        d += x * x;
      }
      if (d >= bestD[k - 1]!) continue;
      let p = k - 1;
      while (p > 0 && bestD[p - 1]! > d) {
        bestD[p] = bestD[p - 1]!;
        bestI[p] = bestI[p - 1]!;
        p--;
      }
      bestD[p] = d;
      bestI[p] = j;
    }
    out.set(bestI, i * k);
  }
  return out;
}

/** Fraction of each cell's k embedding neighbours that are among its graph neighbours. */
function preservation(m: SparseMatrix, nn: Int32Array, k: number): number {
  const n = m.shape[0];
  const mark = new Int32Array(n).fill(-1);
  let hits = 0;
  for (let i = 0; i < n; i++) {
    for (let p = Number(m.indptr[i]); p < Number(m.indptr[i + 1]); p++) mark[m.indices[p] as number] = i;
    for (let q = 0; q < k; q++) if (mark[nn[i * k + q]!] === i) hits++;
  }
  return hits / (n * k);
}

/** Fraction of each cell's k embedding neighbours with the cell's own label. */
function labelAgreement(labels: Int32Array, nn: Int32Array, k: number): number {
  let hits = 0;
  for (let i = 0; i < labels.length; i++)
    for (let q = 0; q < k; q++) if (labels[nn[i * k + q]!] === labels[i]) hits++;
  return hits / nn.length;
}

const DIR = "synth_10k/scanpy-squidpy/";
let graph: SparseMatrix;
let refLabels: Int32Array;
let sd: SpatialData;

function withTable(t: Table): SpatialData {
  return makeSpatialData({ tables: { table: t } });
}

beforeAll(async () => {
  const z = await readNpz(reference(`${DIR}knn_connectivities.npz`));
  const shape = Array.from(z.shape!.data as BigInt64Array, Number) as [number, number];
  graph = {
    kind: "csr",
    dtype: "float32",
    shape,
    data: z.data!.data as Float32Array,
    indices: z.indices!.data as Int32Array,
    indptr: z.indptr!.data as Int32Array,
  };
  const names = readFileSync(reference(`${DIR}kept_obs_names.csv`), "utf8")
    .trim()
    .split("\n")
    .slice(1);
  const rows = readFileSync(reference(`${DIR}leiden.csv`), "utf8")
    .trim()
    .split("\n")
    .slice(1);
  expect(rows.map((r) => r.split(",")[0])).toEqual(names);
  refLabels = Int32Array.from(rows, (r) => Number(r.split(",")[1]));
  const table = makeTable({
    obs: dataFrame(names),
    var: dataFrame([]),
    obsp: { connectivities: graph },
    uns: unsDict({
      neighbors: unsDict({
        connectivities_key: "connectivities",
        distances_key: "distances",
        params: unsDict({ n_neighbors: 15, method: "umap", random_state: 0, metric: "euclidean" }),
      }),
    }),
  });
  sd = withTable(table);
});

describe("sc.tl.leiden on the reference graph", () => {
  it("matches scanpy's igraph Leiden (ARI, modularity, connected communities)", async () => {
    const change = await leiden(
      sd,
      { flavor: "igraph", n_iterations: 2, resolution: 1, random_state: 0 },
      makeCtx(),
    );
    const t = applyChange(sd, change).sdata.tables.table!;
    const col = t.obs.columns.leiden as Categorical;
    expect(col.kind).toBe("categorical");
    const cats = (col.categories as unknown as { values: string[] }).values;
    expect(cats).toEqual(cats.map((_, i) => String(i)));
    const labels = col.codes;
    const score = ari(labels, refLabels);
    console.log(`leiden (igraph, 2 iterations) ARI vs scanpy: ${score.toFixed(4)}, ${cats.length} clusters`);
    expect(score).toBeGreaterThanOrEqual(0.8);
    const g = graphFromSparse(graph);
    const ours = partitionQuality(g, labels);
    const theirs = partitionQuality(g, refLabels);
    console.log(`modularity: ours ${ours.toFixed(5)}, scanpy's labels ${theirs.toFixed(5)}`);
    expect(ours).toBeGreaterThanOrEqual(theirs - 0.01);
    expect(communitiesConnected(graph, labels)).toBe(true);
    // Categories by decreasing size.
    const sizes = new Array(cats.length).fill(0);
    for (const c of labels) sizes[c]++;
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]).toBeLessThanOrEqual(sizes[i - 1]);
    expect(unsGet(t.uns, "leiden/params/resolution")).toBe(1);
    expect(unsGet(t.uns, "leiden/params/random_state")).toBe(0);
    expect(unsGet(t.uns, "leiden/params/n_iterations")).toBe(2);
    expect(unsGet(t.uns, "leiden/modularity")).toBeCloseTo(ours, 10);
  });

  it("defaults (leidenalg flavor, until stable) agree too and are deterministic", async () => {
    const a = await leiden(sd, {}, makeCtx());
    const b = await leiden(sd, {}, makeCtx());
    const codesA = (a.tables!.table!.obs!.leiden as Categorical).codes;
    const codesB = (b.tables!.table!.obs!.leiden as Categorical).codes;
    expect(codesA).toEqual(codesB);
    expect(ari(codesA, refLabels)).toBeGreaterThanOrEqual(0.8);
    expect(unsGet(applyChange(sd, a).sdata.tables.table!.uns, "leiden/params/n_iterations")).toBe(-1);
  });

  it("higher resolution gives more, still connected, clusters; key_added names the outputs", async () => {
    const change = await leiden(sd, { resolution: 3, key_added: "leiden_r3", random_state: 1 }, makeCtx());
    const col = change.tables!.table!.obs!.leiden_r3 as Categorical;
    const nClusters = (col.categories as unknown as { values: string[] }).values.length;
    expect(nClusters).toBeGreaterThan(11);
    expect(communitiesConnected(graph, col.codes)).toBe(true);
    expect(change.tables!.table!.uns!["leiden_r3/params/resolution"]).toBe(3);
  });

  it("restrict_to re-clusters the chosen categories only", async () => {
    const base = applyChange(sd, await leiden(sd, { flavor: "igraph", n_iterations: 2 }, makeCtx())).sdata;
    const change = await leiden(base, { restrict_to: ["leiden", ["0", "1"]], resolution: 2 }, makeCtx());
    const t = applyChange(base, change).sdata.tables.table!;
    const before = t.obs.columns.leiden as Categorical;
    const after = t.obs.columns.leiden_R as Categorical;
    const beforeCats = (before.categories as unknown as { values: string[] }).values;
    const afterCats = (after.categories as unknown as { values: string[] }).values;
    for (let i = 0; i < before.codes.length; i++) {
      const old = beforeCats[before.codes[i]!]!;
      const now = afterCats[after.codes[i]!]!;
      if (old === "0" || old === "1") expect(now.startsWith("0-1,")).toBe(true);
      else expect(now).toBe(old);
    }
    expect(afterCats.filter((c) => c.startsWith("0-1,")).length).toBeGreaterThan(1);
    expect(unsGet(t.uns, "leiden_R/params/resolution")).toBe(2);
    await expect(leiden(base, { restrict_to: ["leiden", ["99"]] }, makeCtx())).rejects.toThrow(
      /'99' is not a valid category/,
    );
  });

  it("says to run sc.pp.neighbors when there is no graph", async () => {
    const bare = withTable(makeTable({ obs: dataFrame(["a", "b"]), var: dataFrame([]) }));
    await expect(leiden(bare, {}, makeCtx())).rejects.toThrow(/run sc.pp.neighbors first/);
    await expect(umap(bare, {}, makeCtx())).rejects.toThrow(/run sc.pp.neighbors first/);
    await expect(leiden(sd, { obsp: "nope" }, makeCtx())).rejects.toThrow(/no obsp "nope"/);
    await expect(leiden(sd, { flavor: "igraph", directed: true }, makeCtx())).rejects.toThrow(/directed/);
  });
});

describe("sc.tl.louvain on the reference graph", () => {
  it("agrees with scanpy's Leiden labels", async () => {
    const change = await louvain(sd, {}, makeCtx());
    const t = applyChange(sd, change).sdata.tables.table!;
    const col = t.obs.columns.louvain as Categorical;
    const score = ari(col.codes, refLabels);
    console.log(`louvain ARI vs scanpy's leiden: ${score.toFixed(4)}`);
    expect(score).toBeGreaterThanOrEqual(0.8);
    expect(unsGet(t.uns, "louvain/params/random_state")).toBe(0);
    const weighted = await louvain(sd, { use_weights: true, resolution: 1, flavor: "vtraag" }, makeCtx());
    expect(
      ari((weighted.tables!.table!.obs!.louvain as Categorical).codes, refLabels),
    ).toBeGreaterThanOrEqual(0.8);
    expect(weighted.tables!.table!.uns!["louvain/params/resolution"]).toBe(1);
  });
});

describe("sc.tl.umap on the reference graph", () => {
  it.each([1, 2])(
    "preserves neighbourhoods as well as scanpy's embedding (%i thread(s))",
    async (threads) => {
      const ctx = { ...makeCtx(), threads };
      const change = await umap(sd, {}, ctx);
      const t = applyChange(sd, change).sdata.tables.table!;
      const emb = t.obsm.X_umap as { kind: string; dtype: string; shape: number[]; data: Float32Array };
      expect(emb.kind).toBe("dense");
      expect(emb.dtype).toBe("float32");
      expect(emb.shape).toEqual([graph.shape[0], 2]);
      expect(unsGet(t.uns, "umap/params/a")).toBeCloseTo(0.58303002, 5);
      expect(unsGet(t.uns, "umap/params/b")).toBeCloseTo(1.33416699, 5);
      expect(ctx.fractions.at(-1)).toBe(1);
      const ref = (await readNpy(reference(`${DIR}umap.npy`))).data as Float32Array;
      const n = graph.shape[0];
      const k = 15;
      const oursNn = embeddingNeighbours(emb.data, n, 2, k);
      const refNn = embeddingNeighbours(ref, n, 2, k);
      const ours = preservation(graph, oursNn, k);
      const theirs = preservation(graph, refNn, k);
      const oursLabels = labelAgreement(refLabels, oursNn, k);
      const theirLabels = labelAgreement(refLabels, refNn, k);
      console.log(
        `umap neighbourhood preservation (k=15, ${threads} thread(s)): ours ${ours.toFixed(4)}, scanpy ${theirs.toFixed(4)}; ` +
          `same-cluster neighbours: ours ${oursLabels.toFixed(4)}, scanpy ${theirLabels.toFixed(4)}`,
      );
      expect(ours).toBeGreaterThanOrEqual(theirs - 0.05);
      expect(oursLabels).toBeGreaterThanOrEqual(theirLabels - 0.05);
    },
    180_000,
  );

  it("is deterministic for a seed, differs across seeds, and embeds in 3-d", async () => {
    const run = async (params: Parameters<typeof umap>[1]) =>
      (await umap(sd, { maxiter: 20, ...params }, makeCtx())).tables!.table!.obsm!.X_umap as unknown as {
        shape: number[];
        data: Float32Array;
      };
    const a = await run({ random_state: 3 });
    const b = await run({ random_state: 3 });
    const c = await run({ random_state: 4 });
    expect(a.data).toEqual(b.data);
    expect(a.data).not.toEqual(c.data);
    const three = await umap(sd, { n_components: 3, maxiter: 20, key_added: "X_umap3d" }, makeCtx());
    const e = three.tables!.table!.obsm!.X_umap3d as unknown as { shape: number[]; data: Float32Array };
    expect(e.shape).toEqual([graph.shape[0], 3]);
    expect(e.data.every((v) => Number.isFinite(v))).toBe(true);
    expect(three.tables!.table!.uns!["X_umap3d/params/a"]).toBeCloseTo(0.58303002, 5);
    const random = await run({ init_pos: "random" });
    expect(random.data.every((v) => Number.isFinite(v))).toBe(true);
    await expect(umap(sd, { init_pos: "nowhere" }, makeCtx())).rejects.toThrow(/init_pos/);
  }, 30_000);
});

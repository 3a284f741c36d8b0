/**
 * sc.tl embeddings and trajectories: tsne, diffmap, dpt, paga, draw_graph, embedding_density,
 * dendrogram. Inputs: scanpy's reference kNN graph of synth_10k (obsp), its leiden labels and UMAP,
 * the first 1000 rows of its PCA, and small synthetic graphs. Expected numbers marked "scipy" were
 * computed with scipy 1.17 (eigsh, linkage, dendrogram, gaussian_kde) on the same inputs.
 */
import { readFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { dendrogram, dendrogramLayout, linkage } from "../../../src/plugins/scanpy/tl/dendrogram.js";
import { diffmap } from "../../../src/plugins/scanpy/tl/diffmap.js";
import { dpt } from "../../../src/plugins/scanpy/tl/dpt.js";
import { draw_graph } from "../../../src/plugins/scanpy/tl/draw-graph.js";
import { embedding_density, gaussianKde2d } from "../../../src/plugins/scanpy/tl/embedding-density.js";
import { paga } from "../../../src/plugins/scanpy/tl/paga.js";
import { tsne } from "../../../src/plugins/scanpy/tl/tsne.js";
import type { Categorical, DenseArray, SparseMatrix, StringArray } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable, type Table } from "../../../src/sdk/data/table.js";
import { type UnsDict, unsDict, unsGet } from "../../../src/sdk/data/uns.js";
import { csrMatvec, lanczosTopEigen } from "../../../src/sdk/math/eigen.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { conditionalP, exactKnn, jointP, optimizeTsne, pcaInit } from "../../../src/sdk/math/tsne.js";
import { reference } from "../../fixtures.js";
import { readNpy, readNpz } from "../../helpers/npy.js";
import { makeCtx } from "./ctx.js";

const REF = "synth_10k/scanpy-squidpy";

function categorical(labels: string[], categories?: string[]): Categorical {
  const cats = categories ?? [...new Set(labels)].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const at = new Map(cats.map((c, i) => [c, i]));
  return {
    kind: "categorical",
    codes: Int32Array.from(labels, (l) => at.get(l)!),
    categories: { kind: "string", shape: [cats.length], values: cats },
    ordered: false,
  };
}

async function npzCsr(path: string): Promise<SparseMatrix> {
  const z = await readNpz(path);
  const shape = Array.from(z.shape!.data as BigInt64Array, Number) as [number, number];
  return {
    kind: "csr",
    dtype: "float32",
    shape,
    data: z.data!.data as Float32Array,
    indices: z.indices!.data as Int32Array,
    indptr: z.indptr!.data as Int32Array,
  };
}

function sdOf(t: Table): SpatialData {
  return makeSpatialData({ tables: { table: t } });
}

function neighborsUns(k = 15): UnsDict {
  return unsDict({
    neighbors: unsDict({
      connectivities_key: "connectivities",
      distances_key: "distances",
      params: unsDict({ n_neighbors: k, method: "umap" }),
    }),
  });
}

/** Symmetric kNN graph (distances + Gaussian connectivities) of 2-d points. */
function graphOf(pts: Float64Array, k: number): { conn: SparseMatrix; dist: SparseMatrix } {
  const n = pts.length / 2;
  const knn = exactKnn(pts, n, 2, k);
  const rows: Map<number, number>[] = Array.from({ length: n }, () => new Map());
  const drows: Map<number, number>[] = Array.from({ length: n }, () => new Map());
  for (let i = 0; i < n; i++) {
    const sigma2 = knn.distances2[i * k + k - 1]!;
    for (let r = 0; r < k; r++) {
      const j = knn.indices[i * k + r]!;
      const d2 = knn.distances2[i * k + r]!;
      const w = Math.exp(-d2 / sigma2);
      rows[i]!.set(j, Math.max(rows[i]!.get(j) ?? 0, w));
      rows[j]!.set(i, Math.max(rows[j]!.get(i) ?? 0, w));
      drows[i]!.set(j, Math.sqrt(d2));
    }
  }
  const toCsr = (rs: Map<number, number>[]): SparseMatrix => {
    const indptr = new Int32Array(n + 1);
    const idx: number[] = [];
    const val: number[] = [];
    rs.forEach((m, i) => {
      for (const j of [...m.keys()].sort((a, b) => a - b)) {
        idx.push(j);
        val.push(m.get(j)!);
      }
      indptr[i + 1] = idx.length;
    });
    return {
      kind: "csr",
      dtype: "float64",
      shape: [n, n],
      data: Float64Array.from(val),
      indices: Int32Array.from(idx),
      indptr,
    };
  };
  return { conn: toCsr(rows), dist: toCsr(drows) };
}

function tableOf(n: number, extra: Partial<Parameters<typeof makeTable>[0]> = {}, obs = {}): Table {
  const names = Array.from({ length: n }, (_, i) => `c${i}`);
  return makeTable({ obs: dataFrame(names, obs), var: dataFrame([]), ...extra });
}

/** Fraction of each point's 15 nearest neighbours in `a` (n×da) also among its 15 nearest in `b`. */
function preservation(a: ArrayLike<number>, da: number, b: ArrayLike<number>, db: number, n: number): number {
  const ka = exactKnn(a, n, da, 15);
  const kb = exactKnn(b, n, db, 15);
  let hit = 0;
  for (let i = 0; i < n; i++) {
    const s = new Set(kb.indices.subarray(i * 15, i * 15 + 15));
    for (let r = 0; r < 15; r++) if (s.has(ka.indices[i * 15 + r]!)) hit++;
  }
  return hit / (15 * n);
}

let ref: Table;
let pca1000: Float32Array;

beforeAll(async () => {
  const names = (await readFile(reference(`${REF}/kept_obs_names.csv`), "utf8")).trim().split("\n").slice(1);
  const leiden = (await readFile(reference(`${REF}/leiden.csv`), "utf8"))
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.split(",")[1]!);
  const umap = await readNpy(reference(`${REF}/umap.npy`));
  const umapData = Float32Array.from(umap.data as ArrayLike<number>);
  ref = makeTable({
    obs: dataFrame(names, { leiden: categorical(leiden) }),
    var: dataFrame([]),
    obsm: { X_umap: { kind: "dense", dtype: "float32", shape: [names.length, 2], data: umapData } },
    obsp: {
      connectivities: await npzCsr(reference(`${REF}/knn_connectivities.npz`)),
      distances: await npzCsr(reference(`${REF}/knn_distances.npz`)),
    },
    uns: neighborsUns(),
  });
  const p = await readNpy(reference(`${REF}/pca_X_first1000.npy`));
  pca1000 = Float32Array.from(p.data as ArrayLike<number>);
});

describe("eigen", () => {
  it("finds the top eigenpairs of a sparse symmetric matrix (residuals, orthogonality)", () => {
    const rng = new Rng(5);
    const n = 400;
    const rows: Map<number, number>[] = Array.from({ length: n }, () => new Map());
    for (let i = 0; i < n; i++) {
      rows[i]!.set(i, 2 + Math.sin(i));
      for (let r = 0; r < 3; r++) {
        const j = rng.int(n);
        const v = rng.normal();
        rows[i]!.set(j, (rows[i]!.get(j) ?? 0) + v);
        rows[j]!.set(i, (rows[j]!.get(i) ?? 0) + v);
      }
    }
    const indptr = new Int32Array(n + 1);
    const idx: number[] = [];
    const val: number[] = [];
    rows.forEach((m, i) => {
      for (const [j, v] of m) {
        idx.push(j);
        val.push(v);
      }
      indptr[i + 1] = idx.length;
    });
    const a: SparseMatrix = {
      kind: "csr",
      dtype: "float64",
      shape: [n, n],
      data: Float64Array.from(val),
      indices: Int32Array.from(idx),
      indptr,
    };
    const mv = csrMatvec(a);
    const k = 6;
    const res = lanczosTopEigen(mv, n, k, { which: "LA" });
    expect(res.converged).toBe(true);
    const v = new Float64Array(n);
    const av = new Float64Array(n);
    for (let c = 0; c < k; c++) {
      if (c > 0) expect(res.values[c]!).toBeLessThanOrEqual(res.values[c - 1]!);
      for (let i = 0; i < n; i++) v[i] = res.vectors[i * k + c]!;
      mv(v, av);
      let r = 0;
      for (let i = 0; i < n; i++) r += (av[i]! - res.values[c]! * v[i]!) ** 2;
      expect(Math.sqrt(r)).toBeLessThan(1e-7);
      for (let c2 = 0; c2 <= c; c2++) {
        let dot = 0;
        for (let i = 0; i < n; i++) dot += v[i]! * res.vectors[i * k + c2]!;
        expect(dot).toBeCloseTo(c2 === c ? 1 : 0, 8);
      }
    }
  });
});

describe("tsne", () => {
  it("embeds the first 1000 reference PCA rows preserving 15-NN neighbourhoods far above chance", async () => {
    const n = 1000;
    const t = tableOf(n, {
      obsm: { X_pca: { kind: "dense", dtype: "float32", shape: [n, 50], data: pca1000 } },
    });
    const ctx = makeCtx();
    const change = await tsne(sdOf(t), {}, ctx);
    const out = applyChange(sdOf(t), change).sdata.tables.table!;
    const emb = out.obsm.X_tsne as DenseArray;
    expect(emb.dtype).toBe("float32");
    expect(emb.shape).toEqual([n, 2]);
    const params = unsGet(out.uns, "tsne/params") as UnsDict;
    expect(params.entries.perplexity).toBe(30);
    expect(params.entries.learning_rate).toBe(1000);
    expect(params.entries.early_exaggeration).toBe(12);
    const kept = preservation(pca1000, 50, emb.data as Float32Array, 2, n);
    const rng = new Rng(1);
    const random = Float64Array.from({ length: 2 * n }, () => rng.normal());
    const chance = preservation(pca1000, 50, random, 2, n);
    expect(kept).toBeGreaterThan(0.3);
    expect(chance).toBeLessThan(0.05);
    expect(ctx.fractions.at(-1)).toBe(1);
  }, 30_000);

  it("decreases the KL divergence after exaggeration and is deterministic per seed", () => {
    const n = 1000;
    const knn = exactKnn(pca1000, n, 50, 91);
    const p = jointP(knn, conditionalP(knn, n, 30), n);
    // Each row's conditional distribution has entropy log(perplexity).
    const cond = conditionalP(knn, n, 30);
    let h = 0;
    for (let r = 0; r < 91; r++) {
      const v = cond[r]!;
      if (v > 0) h -= v * Math.log(v);
    }
    expect(h).toBeCloseTo(Math.log(30), 4);
    let total = 0;
    for (const v of p.data) total += v;
    expect(total).toBeCloseTo(1, 10);
    const y0 = pcaInit(pca1000, n, 50, 0);
    const a = optimizeTsne(p, y0, { learningRate: 1000, maxIter: 600 });
    const b = optimizeTsne(p, y0, { learningRate: 1000, maxIter: 600 });
    expect(Array.from(a.embedding)).toEqual(Array.from(b.embedding));
    const plain = a.klHistory.filter((x) => x.iteration > 250);
    expect(plain.length).toBeGreaterThan(3);
    for (let i = 1; i < plain.length; i++) expect(plain[i]!.kl).toBeLessThanOrEqual(plain[i - 1]!.kl + 1e-3);
    expect(plain.at(-1)!.kl).toBeLessThan(plain[0]!.kl);
  }, 30_000);

  it("rejects 3 components and unknown representations", async () => {
    const t = tableOf(10);
    await expect(tsne(sdOf(t), { n_components: 3 }, makeCtx())).rejects.toThrow(/n_components = 2/);
    await expect(tsne(sdOf(t), {}, makeCtx())).rejects.toThrow(/X_pca/);
  });
});

describe("diffmap", () => {
  it("matches scipy's eigsh eigenvalues of scanpy's transition matrix on the reference graph", async () => {
    const ctx = makeCtx();
    const change = await diffmap(sdOf(ref), {}, ctx);
    const out = applyChange(sdOf(ref), change).sdata.tables.table!;
    const evals = unsGet(out.uns, "diffmap_evals") as DenseArray;
    expect(evals.dtype).toBe("float32");
    // scipy: eigsh(T, k=15, which="LM"), reversed (the graph has 2 components: two eigenvalues 1).
    const expected = [
      1.0, 1.0, 0.99990254, 0.99986624, 0.99980813, 0.99974765, 0.99970986, 0.99948009, 0.99903933,
      0.99867641, 0.97375232, 0.86744632, 0.81658438, 0.8073583, 0.80158296,
    ];
    expected.forEach((v, i) => {
      expect(evals.data[i] as number).toBeCloseTo(v, 5);
    });
    const basis = out.obsm.X_diffmap as DenseArray;
    expect(basis.shape).toEqual([ref.obs.index.values.length, 15]);
    // Orthonormal columns.
    const n = basis.shape[0]!;
    for (const [a, b] of [
      [0, 0],
      [0, 2],
      [3, 3],
      [4, 11],
      [14, 14],
    ] as const) {
      let dot = 0;
      for (let i = 0; i < n; i++)
        dot += (basis.data[i * 15 + a] as number) * (basis.data[i * 15 + b] as number);
      expect(dot).toBeCloseTo(a === b ? 1 : 0, 4);
    }
    // Components past the stationary ones vary; eigenvector 2 (λ < 1) is orthogonal to the
    // stationary vectors, so its values have both signs.
    let pos = 0;
    for (let i = 0; i < n; i++) if ((basis.data[i * 15 + 2] as number) > 0) pos++;
    expect(pos).toBeGreaterThan(0);
    expect(pos).toBeLessThan(n);
  }, 30_000);

  it("has a first eigenvector proportional to √(degree of the normalised kernel) on a connected graph", async () => {
    const rng = new Rng(2);
    const n = 300;
    const pts = Float64Array.from({ length: 2 * n }, () => rng.normal());
    const { conn, dist } = graphOf(pts, 10);
    const t = tableOf(n, { obsp: { connectivities: conn, distances: dist }, uns: neighborsUns(10) });
    const change = await diffmap(sdOf(t), { n_comps: 5 }, makeCtx());
    const out = applyChange(sdOf(t), change).sdata.tables.table!;
    const evals = (unsGet(out.uns, "diffmap_evals") as DenseArray).data as Float32Array;
    expect(evals[0]).toBeCloseTo(1, 5);
    for (let i = 1; i < 5; i++) expect(evals[i]!).toBeLessThan(evals[i - 1]!);
    const deg = new Float64Array(n);
    for (let i = 0; i < n; i++)
      for (let p = conn.indptr[i]!; p < conn.indptr[i + 1]!; p++) deg[i]! += conn.data[p] as number;
    const z = new Float64Array(n);
    for (let i = 0; i < n; i++)
      for (let p = conn.indptr[i]!; p < conn.indptr[i + 1]!; p++)
        z[i]! += (conn.data[p] as number) / (deg[i]! * deg[conn.indices[p]!]!);
    let norm = 0;
    for (let i = 0; i < n; i++) norm += z[i]!;
    const b = (out.obsm.X_diffmap as DenseArray).data as Float32Array;
    const sign = Math.sign(b[0]!);
    for (let i = 0; i < n; i++) expect(sign * b[i * 5]!).toBeCloseTo(Math.sqrt(z[i]! / norm), 4);
  });

  it("refuses n_comps ≤ 2 and a missing graph", async () => {
    await expect(diffmap(sdOf(ref), { n_comps: 2 }, makeCtx())).rejects.toThrow(/greater than 2/);
    await expect(diffmap(sdOf(tableOf(5)), {}, makeCtx())).rejects.toThrow(/sc.pp.neighbors/);
  });
});

describe("dpt", () => {
  it("gives pseudotime 0 at the root, increasing along a 1-d chain", async () => {
    const rng = new Rng(4);
    const n = 400;
    const pts = new Float64Array(2 * n);
    for (let i = 0; i < n; i++) {
      pts[2 * i] = i / 10 + 0.02 * rng.normal();
      pts[2 * i + 1] = 0.3 * rng.normal();
    }
    const { conn, dist } = graphOf(pts, 15);
    const t = tableOf(n, { obsp: { connectivities: conn, distances: dist }, uns: neighborsUns() });
    const sd0 = applyChange(sdOf(t), { tables: { table: { uns: { iroot: 0 } } } }).sdata;
    const change = await dpt(sd0, {}, makeCtx());
    const out = applyChange(sd0, change).sdata.tables.table!;
    const ptCol = out.obs.columns.dpt_pseudotime as DenseArray;
    const pt = ptCol.data as Float32Array;
    expect(pt[0]).toBe(0);
    expect(Math.max(...pt)).toBeCloseTo(1, 6);
    // Computed the diffusion map on the way, as scanpy does without one.
    expect(out.obsm.X_diffmap).toBeDefined();
    expect(unsGet(out.uns, "iroot")).toBe(0);
    // Monotone along the chain: averaged over windows of 20 cells, increasing (up to a small
    // flattening at the far end, where the diffusion components saturate).
    let prev = -1;
    for (let w = 0; w < n; w += 20) {
      let s = 0;
      for (let i = w; i < w + 20; i++) s += pt[i]!;
      expect(s / 20).toBeGreaterThan(prev - 0.02);
      prev = s / 20;
    }
    // Rank correlation with the position along the chain.
    let concordant = 0;
    let pairs = 0;
    for (let i = 0; i < n; i += 7) {
      for (let j = i + 40; j < n; j += 11) {
        pairs++;
        if (pt[j]! > pt[i]!) concordant++;
      }
    }
    expect(concordant / pairs).toBeGreaterThan(0.99);
  });

  it("uses a stored diffmap, marks other components as infinite, and rejects branchings / no root", async () => {
    const withDm = applyChange(sdOf(ref), await diffmap(sdOf(ref), {}, makeCtx())).sdata;
    const change = await dpt(withDm, { iroot: 5 }, makeCtx());
    expect(change.tables!.table!.obsm).toEqual({});
    const out = applyChange(withDm, change).sdata.tables.table!;
    const pt = (out.obs.columns.dpt_pseudotime as DenseArray).data as Float32Array;
    expect(pt[5]).toBe(0);
    let inf = 0;
    for (const v of pt) {
      if (v === Number.POSITIVE_INFINITY) inf++;
      else {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
    }
    // scipy: the reference graph has components of 9711 and 244 cells.
    expect([244, 9711]).toContain(inf);
    await expect(dpt(withDm, { iroot: 0, n_branchings: 1 }, makeCtx())).rejects.toThrow(/n_branchings/);
    await expect(dpt(withDm, {}, makeCtx())).rejects.toThrow(/iroot/);
    await expect(dpt(withDm, { iroot: 0, n_dcs: 20 }, makeCtx())).rejects.toThrow(/n_dcs/);
  }, 30_000);
});

describe("paga", () => {
  it("gives symmetric connectivities in [0, 1] and a spanning tree on the reference leiden groups", async () => {
    const change = await paga(sdOf(ref), { groups: "leiden" }, makeCtx());
    const out = applyChange(sdOf(ref), change).sdata.tables.table!;
    const c = unsGet(out.uns, "paga/connectivities") as SparseMatrix;
    const tree = unsGet(out.uns, "paga/connectivities_tree") as SparseMatrix;
    expect(unsGet(out.uns, "paga/groups")).toBe("leiden");
    const sizes = unsGet(out.uns, "leiden_sizes") as DenseArray;
    const g = c.shape[0];
    expect(sizes.data.length).toBe(g);
    let total = 0;
    for (const v of sizes.data as BigInt64Array) total += Number(v);
    expect(total).toBe(ref.obs.index.values.length);
    const dense = new Float64Array(g * g);
    for (let i = 0; i < g; i++)
      for (let p = c.indptr[i]!; p < c.indptr[i + 1]!; p++)
        dense[i * g + c.indices[p]!] = c.data[p] as number;
    for (let i = 0; i < g; i++) {
      expect(dense[i * g + i]).toBe(0);
      for (let j = 0; j < g; j++) {
        expect(dense[i * g + j]).toBeCloseTo(dense[j * g + i]!, 12);
        expect(dense[i * g + j]).toBeGreaterThanOrEqual(0);
        expect(dense[i * g + j]).toBeLessThanOrEqual(1);
      }
    }
    // A forest over the groups: at most g − 1 edges, upper triangle, values from the connectivities.
    expect(tree.data.length).toBeLessThanOrEqual(g - 1);
    expect(tree.data.length).toBeGreaterThanOrEqual(g - 2);
    for (let i = 0; i < g; i++) {
      for (let p = tree.indptr[i]!; p < tree.indptr[i + 1]!; p++) {
        expect(tree.indices[p]!).toBeGreaterThan(i);
        expect(tree.data[p]).toBe(dense[i * g + tree.indices[p]!]);
      }
    }
  });

  it("scores a strongly connected pair of clusters above unrelated ones", async () => {
    // Clusters A and B touch along a long boundary; C is far away, linked to A by one bridge.
    const rng = new Rng(8);
    const n = 600;
    const pts = new Float64Array(2 * n);
    const labels: string[] = [];
    for (let i = 0; i < n; i++) {
      const c = i % 3;
      labels.push("ABC"[c]!);
      const x = c === 0 ? rng.uniform(0, 1) : c === 1 ? rng.uniform(1, 2) : rng.uniform(0, 1);
      const y = c === 2 ? 6 + rng.uniform(0, 1) : rng.uniform(0, 1);
      pts[2 * i] = x;
      pts[2 * i + 1] = y;
    }
    pts[2 * 2 + 1] = 3.5; // one C cell halfway: a thin bridge
    const { conn, dist } = graphOf(pts, 10);
    const t = tableOf(
      n,
      { obsp: { connectivities: conn, distances: dist }, uns: neighborsUns(10) },
      { clusters: categorical(labels) },
    );
    const out = applyChange(sdOf(t), await paga(sdOf(t), { groups: "clusters" }, makeCtx())).sdata.tables
      .table!;
    const c = unsGet(out.uns, "paga/connectivities") as SparseMatrix;
    const at = (i: number, j: number) => {
      for (let p = c.indptr[i]!; p < c.indptr[i + 1]!; p++)
        if (c.indices[p] === j) return c.data[p] as number;
      return 0;
    };
    expect(at(0, 1)).toBeGreaterThan(0.03);
    expect(at(0, 1)).toBeGreaterThan(5 * at(0, 2));
    expect(at(1, 2)).toBeLessThan(at(0, 1));
    await expect(paga(sdOf(t), { groups: "clusters", use_rna_velocity: true }, makeCtx())).rejects.toThrow(
      /velocity/,
    );
    await expect(paga(sdOf(t), {}, makeCtx())).rejects.toThrow(/leiden/);
    // v1.0 also yields a symmetric matrix.
    const v10 = applyChange(sdOf(t), await paga(sdOf(t), { groups: "clusters", model: "v1.0" }, makeCtx()))
      .sdata.tables.table!;
    const c10 = unsGet(v10.uns, "paga/connectivities") as SparseMatrix;
    expect(c10.data.length).toBeGreaterThan(0);
  });
});

describe("draw_graph", () => {
  it("lays out two loosely linked clusters apart, deterministically per seed", async () => {
    const rng = new Rng(9);
    const n = 400;
    const pts = new Float64Array(2 * n);
    for (let i = 0; i < n; i++) {
      pts[2 * i] = (i < n / 2 ? 0 : 4) + rng.normal();
      pts[2 * i + 1] = rng.normal();
    }
    const { conn, dist } = graphOf(pts, 10);
    const t = tableOf(n, { obsp: { connectivities: conn, distances: dist }, uns: neighborsUns(10) });
    const run = async (seed: number) => {
      const change = await draw_graph(sdOf(t), { random_state: seed, maxiter: 200 }, makeCtx());
      return applyChange(sdOf(t), change).sdata.tables.table!;
    };
    const a = await run(0);
    const b = await run(0);
    const emb = a.obsm.X_draw_graph_fa as DenseArray;
    expect(emb.shape).toEqual([n, 2]);
    expect(Array.from(emb.data as Float64Array)).toEqual(
      Array.from((b.obsm.X_draw_graph_fa as DenseArray).data as Float64Array),
    );
    expect((unsGet(a.uns, "draw_graph/params/layout") as string) ?? "").toBe("fa");
    const e = emb.data as Float64Array;
    const centroid = (lo: number, hi: number) => {
      let x = 0;
      let y = 0;
      for (let i = lo; i < hi; i++) {
        x += e[2 * i]!;
        y += e[2 * i + 1]!;
      }
      return [x / (hi - lo), y / (hi - lo)] as const;
    };
    const spread = (lo: number, hi: number, c: readonly [number, number]) => {
      let s = 0;
      for (let i = lo; i < hi; i++) s += Math.hypot(e[2 * i]! - c[0], e[2 * i + 1]! - c[1]);
      return s / (hi - lo);
    };
    const c1 = centroid(0, n / 2);
    const c2 = centroid(n / 2, n);
    const gap = Math.hypot(c1[0] - c2[0], c1[1] - c2[1]);
    expect(gap).toBeGreaterThan(spread(0, n / 2, c1));
    expect(gap).toBeGreaterThan(spread(n / 2, n, c2));
    // The layout preserves graph neighbourhoods far above chance.
    expect(preservation(pts, 2, e, 2, n)).toBeGreaterThan(0.3);
    const other = await run(1);
    expect(Array.from((other.obsm.X_draw_graph_fa as DenseArray).data as Float64Array)).not.toEqual(
      Array.from(e),
    );
    await expect(draw_graph(sdOf(t), { layout: "fr" }, makeCtx())).rejects.toThrow(/igraph layout/);
  });
});

describe("embedding_density", () => {
  it("matches scipy's gaussian_kde (Scott's bandwidth) on a small sample", () => {
    // scipy: xy = (rng(3) sample rounded to 6 decimals); gaussian_kde(xy)(xy)[[0, 1, 2, 10, 49]].
    const x = [
      2.040919, -2.555665, 0.418099, -0.56777, -0.452649, -0.215597, -2.019986, -0.231932, -0.865213, 3.323,
      0.225787, -0.352631, -0.281287, -0.668046, -1.055151, -0.390801, 0.481945, -0.238554, 0.957759,
      -0.199802, 0.02426, 1.545821, 0.545106, -0.505229, -0.182839, 0.540525, 1.935088, -0.26962, -0.243559,
      1.002314, -0.88646, -0.29172, 0.882539, 0.58035, 0.091517, 0.670104, -2.828162, 1.021307, -0.959645,
      -1.66862, 0.276446, 0.700545, -0.444767, -1.076406, 0.026125, -0.052747, 1.405598, 0.747408, 0.193816,
      1.111633,
    ];
    const y = [
      -0.197908, -0.37498, 0.219029, 0.536431, -0.345749, -0.351132, 0.081343, -1.083939, 0.412454, 1.010695,
      -0.369832, 0.479698, -1.093901, 0.276516, -1.199667, -0.297431, -0.328918, 0.93055, -0.758908,
      -0.639641, -0.129555, -0.54496, 0.808309, -0.403322, 0.791632, -0.583436, 0.933232, 0.0358, 0.341853,
      -0.636445, 1.251478, 0.053087, 0.31911, 0.324809, 0.626098, -0.122331, -0.491664, -0.53584, 0.830436,
      -0.940639, -0.577361, -0.01624, 0.851249, 0.213835, -0.791308, -1.216354, -0.40271, 0.764277, 0.63377,
      0.110578,
    ];
    const z = gaussianKde2d(Float64Array.from(x), Float64Array.from(y));
    const expected: [number, number][] = [
      [0, 0.04339523013054933],
      [1, 0.03711859855291724],
      [2, 0.15435638830980644],
      [10, 0.1785640202590319],
      [49, 0.10036768365471266],
    ];
    for (const [i, v] of expected) expect(z[i]! / v).toBeCloseTo(1, 10);
  });

  it("scales densities to [0, 1] within each leiden group of the reference UMAP", async () => {
    const change = await embedding_density(sdOf(ref), { groupby: "leiden" }, makeCtx());
    const out = applyChange(sdOf(ref), change).sdata.tables.table!;
    const col = out.obs.columns.umap_density_leiden as DenseArray;
    const params = unsGet(out.uns, "umap_density_leiden_params") as UnsDict;
    expect(params.entries.covariate).toBe("leiden");
    expect(Array.from((params.entries.components as DenseArray).data as Float64Array)).toEqual([1, 2]);
    const codes = (ref.obs.columns.leiden as Categorical).codes;
    const g = Math.max(...codes) + 1;
    const lo = new Float64Array(g).fill(Infinity);
    const hi = new Float64Array(g).fill(-Infinity);
    (col.data as Float64Array).forEach((v, i) => {
      lo[codes[i]!] = Math.min(lo[codes[i]!]!, v);
      hi[codes[i]!] = Math.max(hi[codes[i]!]!, v);
    });
    for (let c = 0; c < g; c++) {
      expect(lo[c]).toBe(0);
      expect(hi[c]).toBe(1);
    }
    const all = applyChange(sdOf(ref), await embedding_density(sdOf(ref), {}, makeCtx())).sdata.tables.table!;
    expect(all.obs.columns.umap_density).toBeDefined();
    await expect(embedding_density(sdOf(ref), { basis: "tsne" }, makeCtx())).rejects.toThrow(/X_tsne/);
  });
});

describe("dendrogram", () => {
  it("reproduces scipy's linkage for every method on a hand-made distance matrix", () => {
    const d = [
      [0, 0.2, 0.9, 0.8, 0.7, 0.95],
      [0.2, 0, 0.85, 0.75, 0.6, 0.9],
      [0.9, 0.85, 0, 0.1, 0.5, 0.4],
      [0.8, 0.75, 0.1, 0, 0.45, 0.35],
      [0.7, 0.6, 0.5, 0.45, 0, 0.3],
      [0.95, 0.9, 0.4, 0.35, 0.3, 0],
    ];
    const dist = Float64Array.from(d.flat());
    // scipy.cluster.hierarchy.linkage(squareform(D), method): merge heights of rows 4 and 5.
    const expected: Record<string, [number, number]> = {
      complete: [0.5, 0.95],
      average: [0.425, 0.80625],
      single: [0.35, 0.6],
      ward: [0.563471, 1.264911],
      weighted: [0.425, 0.80625],
      centroid: [0.398434, 0.774597],
      median: [0.398434, 0.774597],
    };
    for (const [method, [h4, h5]] of Object.entries(expected)) {
      const z = linkage(dist, 6, method as never);
      expect(Array.from(z.subarray(0, 12))).toEqual([2, 3, 0.1, 2, 0, 1, 0.2, 2, 4, 5, 0.3, 2]);
      expect(Array.from(z.subarray(12, 14))).toEqual([6, 8]);
      expect(z[14]).toBeCloseTo(h4, 6);
      expect(Array.from(z.subarray(16, 18))).toEqual([7, 9]);
      expect(z[18]).toBeCloseTo(h5, 6);
    }
    // scipy.cluster.hierarchy.dendrogram(Z_complete, labels=list("abcdef"), no_plot=True).
    const layout = dendrogramLayout(linkage(dist, 6, "complete"), ["a", "b", "c", "d", "e", "f"]);
    expect(layout.icoord).toEqual([
      [5, 5, 15, 15],
      [25, 25, 35, 35],
      [45, 45, 55, 55],
      [30, 30, 50, 50],
      [10, 10, 40, 40],
    ]);
    expect(layout.dcoord).toEqual([
      [0, 0.2, 0.2, 0],
      [0, 0.1, 0.1, 0],
      [0, 0.3, 0.3, 0],
      [0.1, 0.5, 0.5, 0.3],
      [0.2, 0.95, 0.95, 0.5],
    ]);
    expect(layout.ivl).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(layout.leaves).toEqual([0, 1, 2, 3, 4, 5]);
    expect(layout.color_list).toEqual(["C1", "C2", "C2", "C2", "C0"]);
    expect(layout.leaves_color_list).toEqual(["C1", "C1", "C2", "C2", "C2", "C2"]);
  });

  it("merges the two most correlated groups first and stores scanpy's uns layout", async () => {
    // Four groups of 3 cells in a 6-d representation; groups g1 and g3 have nearly equal profiles.
    const profiles = [
      [5, 1, 0, 2, 0, 1],
      [0, 4, 1, 0, 3, 0],
      [5, 1.2, 0.1, 2.1, 0, 0.9],
      [1, 0, 5, 0, 0, 4],
    ];
    const n = 12;
    const rep = new Float32Array(n * 6);
    const labels: string[] = [];
    const rng = new Rng(3);
    for (let i = 0; i < n; i++) {
      const g = i % 4;
      labels.push(`g${g}`);
      for (let j = 0; j < 6; j++) rep[i * 6 + j] = profiles[g]![j]! + 0.05 * rng.normal();
    }
    const t = tableOf(
      n,
      { obsm: { X_pca: { kind: "dense", dtype: "float32", shape: [n, 6], data: rep } } },
      { group: categorical(labels) },
    );
    const out = applyChange(sdOf(t), await dendrogram(sdOf(t), { groupby: "group" }, makeCtx())).sdata.tables
      .table!;
    const dat = unsGet(out.uns, "dendrogram_group") as UnsDict;
    const z = (dat.entries.linkage as DenseArray).data as Float64Array;
    expect([z[0], z[1]]).toEqual([0, 2]);
    expect(dat.entries.cor_method).toBe("pearson");
    expect(dat.entries.linkage_method).toBe("complete");
    expect(dat.entries.use_rep).toBeNull();
    const corr = (dat.entries.correlation_matrix as DenseArray).data as Float64Array;
    expect(corr[0]).toBe(1);
    expect(corr[0 * 4 + 2]!).toBeGreaterThan(0.99);
    expect(corr[0 * 4 + 2]).toBe(corr[2 * 4 + 0]);
    const info = dat.entries.dendrogram_info as UnsDict;
    const ivl = (info.entries.ivl as StringArray).values as string[];
    const leaves = Array.from((info.entries.leaves as DenseArray).data as BigInt64Array, Number);
    expect([...leaves].sort()).toEqual([0, 1, 2, 3]);
    expect(ivl).toEqual(leaves.map((l) => `g${l}`));
    expect((dat.entries.categories_ordered as StringArray).values as string[]).toEqual(ivl);
    const icoord = info.entries.icoord as DenseArray;
    expect(icoord.shape).toEqual([3, 4]);
    // Leaves sit at 5, 15, 25, 35; each link's top height equals a linkage distance.
    const dcoord = (info.entries.dcoord as DenseArray).data as Float64Array;
    const heights = [z[2], z[6], z[10]].sort();
    expect([dcoord[1], dcoord[5], dcoord[9]].sort()).toEqual(heights);
    await expect(
      dendrogram(sdOf(t), { groupby: "group", optimal_ordering: true }, makeCtx()),
    ).rejects.toThrow(/optimal_ordering/);
    // Spearman and var_names paths run too.
    const sp = await dendrogram(
      sdOf(t),
      { groupby: "group", cor_method: "spearman", key_added: "d2" },
      makeCtx(),
    );
    expect(Object.keys(sp.tables!.table!.uns!)).toEqual(["d2"]);
  });
});

/**
 * `sc.pp.neighbors`: the kNN graph of the cells in a representation (PCA by default) and its
 * weighted, symmetric connectivities, stored as scanpy stores them.
 */
import { allocArray, type DenseArray, type Matrix, type SparseMatrix } from "../../../sdk/data/arrays.js";
import type { Change, TableChange } from "../../../sdk/data/change.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { type AxisArray, nObs, nVars, type Table } from "../../../sdk/data/table.js";
import { type UnsValue, unsDict } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { type KnnGraph, type KnnMetric, knnAsync } from "../../../sdk/math/knn.js";
import { assertFinite } from "../../../sdk/math/knn-graph.js";
import { Rng } from "../../../sdk/math/rng.js";
import { fuzzySimplicialSetAsync, gaussDense, gaussKnn } from "../../../sdk/math/umap-graph.js";
import { pcaTableChange, runPca } from "./pca.js";

/** Parameters of `neighbors`. */
export interface NeighborsParams {
  /**
   * Size of the local neighbourhood (the cell itself included), the k of the kNN graph; with
   * `knn=false`, the neighbour whose distance sets the Gaussian width.
   * @default 15
   * @minimum 2
   * @asType integer
   */
  n_neighbors?: number;
  /**
   * Use this many leading PCs (or columns of `use_rep`); all of them when unset. `0` means X.
   * @minimum 0
   * @asType integer
   */
  n_pcs?: number | null;
  /**
   * Representation to use: an obsm key or `X`. Unset: X when it has ≤ 50 genes, else `X_pca`
   * (computed with `pca`'s defaults when absent).
   */
  use_rep?: string | null;
  /**
   * Restrict to the `n_neighbors` nearest neighbours (a kNN graph); false builds a dense Gaussian
   * kernel over all pairs (`method="gauss"` only, small data only).
   * @default true
   */
  knn?: boolean;
  /**
   * Connectivity kernel: umap's fuzzy simplicial set, or the adaptive Gaussian kernel.
   * @default "umap"
   */
  method?: "umap" | "gauss";
  /**
   * Distance metric.
   * @default "euclidean"
   */
  metric?: KnnMetric;
  /**
   * Seed of the approximate neighbour search (random projection trees and NN-descent).
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /**
   * Store under uns `key_added` and obsp `<key_added>_distances` / `<key_added>_connectivities`
   * instead of `neighbors`, `distances`, `connectivities`.
   */
  key_added?: string | null;
}

/** Dense knn=False is n² memory: refuse above this. */
const DENSE_MAX_ROWS = 10000;

/** Rows of a matrix (first `cols` columns) as a float32 n × cols array. */
function toFloat32Rows(x: Matrix, cols: number): Float32Array {
  const n = x.shape[0] as number;
  const width = x.shape.length > 1 ? (x.shape.slice(1).reduce((a, b) => a * b, 1) as number) : 1;
  const out = new Float32Array(n * cols);
  if (x.kind === "dense") {
    const d = x.data;
    for (let i = 0; i < n; i++) for (let j = 0; j < cols; j++) out[i * cols + j] = Number(d[i * width + j]);
  } else if (x.kind === "csr") {
    for (let i = 0; i < n; i++) {
      const end = Number(x.indptr[i + 1]);
      for (let e = Number(x.indptr[i]); e < end; e++) {
        const j = Number(x.indices[e]);
        if (j < cols) out[i * cols + j] = Number(x.data[e]);
      }
    }
  } else {
    for (let j = 0; j < cols; j++) {
      const end = Number(x.indptr[j + 1]);
      for (let e = Number(x.indptr[j]); e < end; e++)
        out[Number(x.indices[e]) * cols + j] = Number(x.data[e]);
    }
  }
  return out;
}

/** Columns of an obsm entry, and its matrix. */
async function obsmMatrix(a: AxisArray, key: string): Promise<Matrix> {
  if (a.kind === "dataframe") throw new Error(`neighbors: obsm "${key}" is a data frame, not a matrix`);
  return loadMatrix(a);
}

/** The float32 rows neighbors searches, `d` values each. */
interface NeighborsInput {
  readonly data: Float32Array;
  readonly d: number;
  /** PCA computed on the way, to store too (scanpy's fallback). */
  readonly pcaChange?: TableChange;
}

/**
 * scanpy's `_choose_representation` as neighbors uses it: float32 rows, and a PCA computed on the way
 * when there is none (the `sc.tl` tools' variant, without that fallback, is `tl/helpers.ts`).
 */
async function neighborsInput(t: Table, params: NeighborsParams, ctx: OpContext): Promise<NeighborsInput> {
  const nPcs = params.n_pcs ?? null;
  let useRep = params.use_rep ?? null;
  if (useRep === null && nPcs === 0) useRep = "X";
  const fromMatrix = (x: Matrix, what: string): NeighborsInput => {
    const width = x.shape.length > 1 ? (x.shape[1] as number) : 1;
    if (nPcs !== null && nPcs > width && useRep !== "X") {
      throw new Error(`neighbors: ${what} has ${width} dimensions, fewer than n_pcs=${nPcs}`);
    }
    const d = nPcs !== null && useRep !== "X" ? nPcs : width;
    return { data: toFloat32Rows(x, d), d };
  };
  if (useRep === null) {
    if (nVars(t) <= 50) {
      if (!t.X) throw new Error("neighbors: the table has no X");
      ctx.log("neighbors: using X directly");
      return fromMatrix(await loadMatrix(t.X), "X");
    }
    const key = ["pca", "X_pca"].find((k) => k in t.obsm);
    if (key) return fromMatrix(await obsmMatrix(t.obsm[key]!, key), `obsm "${key}"`);
    ctx.log(`neighbors: no X_pca; computing PCA with n_comps=${nPcs ?? 50} and default parameters`);
    const r = await runPca(t, { n_comps: nPcs ?? 50 }, ctx);
    const k = r.xPca.shape[1] as number;
    return { data: toFloat32Rows(r.xPca, k), d: k, pcaChange: pcaTableChange(r, {}) };
  }
  if (useRep === "X") {
    if (!t.X) throw new Error("neighbors: use_rep='X' but the table has no X");
    return fromMatrix(await loadMatrix(t.X), "X");
  }
  const a = t.obsm[useRep];
  if (!a) throw new Error(`neighbors: did not find "${useRep}" in obsm; compute it first`);
  return fromMatrix(await obsmMatrix(a, useRep), `obsm "${useRep}"`);
}

/** The kNN distances as scanpy stores them: CSR, k − 1 non-self entries per row in ascending distance. */
function distancesMatrix(g: KnnGraph): SparseMatrix {
  const { n, k } = g;
  const h = k - 1;
  const indptr = allocArray("int32", n + 1) as Int32Array;
  const indices = allocArray("int32", n * h) as Int32Array;
  const data = allocArray("float32", n * h) as Float32Array;
  let w = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 1; j < k; j++) {
      const c = g.indices[i * k + j];
      if (c < 0) continue;
      indices[w] = c;
      data[w++] = g.distances[i * k + j];
    }
    indptr[i + 1] = w;
  }
  const nnz = w;
  return {
    kind: "csr",
    dtype: "float32",
    shape: [n, n],
    data: nnz === data.length ? data : data.slice(0, nnz),
    indices: nnz === indices.length ? indices : indices.slice(0, nnz),
    indptr,
  };
}

/** All pairwise squared distances (n × n) for the dense gauss kernel. */
function denseSqDistances(x: Float32Array, n: number, d: number, metric: KnnMetric): Float64Array {
  const out = new Float64Array(n * n);
  let y = x;
  if (metric === "cosine") {
    y = new Float32Array(x.length);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let t = 0; t < d; t++) s += x[i * d + t] ** 2;
      const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
      for (let t = 0; t < d; t++) y[i * d + t] = x[i * d + t] * inv;
    }
  }
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let s = 0;
      for (let t = 0; t < d; t++) {
        const u = y[i * d + t] - y[j * d + t];
        s += metric === "manhattan" ? Math.abs(u) : u * u;
      }
      const dist = metric === "manhattan" ? s : metric === "cosine" ? s / 2 : Math.sqrt(s);
      out[i * n + j] = dist * dist;
      out[j * n + i] = dist * dist;
    }
  }
  return out;
}

/**
 * Compute a neighbourhood graph of observations (McInnes 2018): `obsp["distances"]` (kNN distances),
 * `obsp["connectivities"]` (weighted symmetric adjacency) and `uns["neighbors"]`, as
 * `sc.pp.neighbors`.
 *
 * The search is exact up to 2,048 cells and approximate above (random projection forest + NN-descent,
 * seeded by `random_state`; recall ≥ 0.95 against the exact graph). Each row of `distances` holds the
 * `n_neighbors − 1` nearest other cells in ascending distance, as scanpy's exact path stores them.
 * @peakMemory n_obs * max(n_neighbors, 15) * 96 + n_obs * max(n_pcs, 50) * 8
 */
export async function neighbors(sd: SpatialData, params: NeighborsParams, ctx: OpContext): Promise<Change> {
  const t = sd.tables[ctx.table];
  if (!t) throw new Error(`neighbors: no table "${ctx.table}"`);
  const n = nObs(t);
  if (n < 2) throw new Error("neighbors: need at least 2 cells");
  const method = params.method ?? "umap";
  if (method !== "umap" && method !== "gauss")
    throw new Error(`neighbors: unknown method "${method as string}"`);
  const metric: KnnMetric = params.metric ?? "euclidean";
  const useKnn = params.knn ?? true;
  if (!useKnn && method !== "gauss")
    throw new Error(`neighbors: method "${method}" only works with knn=true`);
  let k = params.n_neighbors ?? 15;
  if (!Number.isInteger(k) || k < 2)
    throw new Error(`neighbors: n_neighbors must be an integer ≥ 2, got ${k}`);
  if (k > n) {
    k = 1 + Math.floor(0.5 * n);
    ctx.log(`neighbors: n_obs too small: adjusting to n_neighbors = ${k}`);
  }
  const randomState = params.random_state ?? 0;
  const rep = await neighborsInput(t, params, ctx);
  ctx.signal.throwIfAborted();

  let distances: SparseMatrix | DenseArray;
  let connectivities: SparseMatrix | DenseArray;
  if (!useKnn) {
    if (n > DENSE_MAX_ROWS) {
      throw new Error(
        `neighbors: knn=false builds dense n × n matrices; ${n} cells is over ${DENSE_MAX_ROWS}`,
      );
    }
    assertFinite(rep.data, n, rep.d); // the kNN builders check for themselves
    const sq = denseSqDistances(rep.data, n, rep.d, metric);
    const dist = allocArray("float64", n * n) as Float64Array;
    for (let i = 0; i < n * n; i++) dist[i] = Math.sqrt(sq[i]);
    distances = { kind: "dense", dtype: "float64", shape: [n, n], data: dist };
    connectivities = { kind: "dense", dtype: "float64", shape: [n, n], data: gaussDense(sq, n, k) };
  } else {
    const g = await knnAsync(rep.data, n, rep.d, k, {
      metric,
      rng: new Rng(randomState),
      threads: ctx.threads,
      signal: ctx.signal,
      progress: (f) => ctx.progress(0.9 * f, "searching neighbours"),
    });
    ctx.progress(0.9, "connectivities");
    distances = distancesMatrix(g);
    connectivities =
      method === "umap"
        ? await fuzzySimplicialSetAsync(g.indices, g.distances, n, k, ctx.threads, ctx.signal)
        : gaussKnn(g.indices, g.distances, n, k);
  }

  const key = params.key_added ?? "neighbors";
  const distKey = params.key_added ? `${params.key_added}_distances` : "distances";
  const connKey = params.key_added ? `${params.key_added}_connectivities` : "connectivities";
  const nbParams: Record<string, UnsValue> = { n_neighbors: k, method, random_state: randomState, metric };
  if (params.use_rep != null) nbParams.use_rep = params.use_rep;
  if (params.n_pcs != null) nbParams.n_pcs = params.n_pcs;
  // The whole dict is replaced, so stale entries of an earlier run do not survive.
  const uns: Record<string, UnsValue> = {
    [key]: unsDict({ connectivities_key: connKey, distances_key: distKey, params: unsDict(nbParams) }),
  };
  const change: TableChange = {
    ...(rep.pcaChange ?? {}),
    obsp: { [distKey]: distances, [connKey]: connectivities },
    uns: { ...(rep.pcaChange?.uns ?? {}), ...uns },
  };
  ctx.progress(1);
  return { tables: { [ctx.table]: change } };
}

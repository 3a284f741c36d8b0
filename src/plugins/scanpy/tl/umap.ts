/**
 * `sc.tl.umap`: UMAP coordinates of the neighbourhood graph with scanpy's names, defaults and outputs
 * (obsm `X_umap`, uns `umap/params` with `a`, `b`). The layout (spectral initialisation, SGD) lives in
 * `sdk/math/umap-layout.ts`.
 */
import { allocArray, type DenseArray } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs, type Table } from "../../../sdk/data/table.js";
import { isUnsDict, type UnsValue, unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { Rng } from "../../../sdk/math/rng.js";
import { findAbParams, umapLayoutAsync } from "../../../sdk/math/umap-layout.js";
import { activeTable } from "../helpers.js";
import { chooseGraph } from "./cluster.js";

/** Params of `umap`. */
export interface UmapParams {
  /**
   * The effective minimum distance between embedded points: smaller values clump neighbours together,
   * larger ones spread them evenly (umap-learn's own default is 0.1).
   * @default 0.5
   * @minimum 0
   */
  min_dist?: number;
  /**
   * The effective scale of embedded points; with `min_dist` it sets how clumped the embedding is.
   * @default 1
   * @exclusiveMinimum 0
   */
  spread?: number;
  /**
   * Dimensions of the embedding.
   * @default 2
   * @minimum 1
   * @asType integer
   */
  n_components?: number;
  /**
   * Epochs of the optimisation (umap's `n_epochs`); unset: 500 up to 10,000 cells, else 200.
   * @minimum 0
   * @asType integer
   */
  maxiter?: number | null;
  /**
   * Initial learning rate of the optimisation.
   * @default 1
   * @exclusiveMinimum 0
   */
  alpha?: number;
  /**
   * Weight of the negative (repulsive) samples.
   * @default 1
   * @minimum 0
   */
  gamma?: number;
  /**
   * Negative samples per positive one.
   * @default 5
   * @minimum 0
   * @asType integer
   */
  negative_sample_rate?: number;
  /**
   * Initial positions: `spectral` (spectral embedding of the graph), `random`, or an obsm key whose
   * first `n_components` columns are used.
   * @default "spectral"
   */
  init_pos?: string;
  /**
   * Seed of the initialisation and the negative sampling.
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /** Curve parameter a of 1/(1 + a·d^(2b)); with `b` unset both are fitted from `min_dist` and `spread`. */
  a?: number | null;
  /** Curve parameter b of 1/(1 + a·d^(2b)); with `a` unset both are fitted from `min_dist` and `spread`. */
  b?: number | null;
  /**
   * Implementation (only umap-learn's simplicial set embedding).
   * @default "umap"
   */
  method?: "umap";
  /** obsm key of the coordinates (uns key of the parameters is the same); unset: `X_umap` and `umap`. */
  key_added?: string | null;
  /**
   * uns key of the neighbors settings; the graph is obsp[uns[key].connectivities_key].
   * @default "neighbors"
   */
  neighbors_key?: string;
}

/** Rows of an obsm entry as a dense row-major array with its width. */
async function obsmDense(t: Table, key: string): Promise<{ values: ArrayLike<number>; width: number }> {
  const a = t.obsm[key];
  if (!a) throw new Error(`umap: obsm "${key}" not found`);
  if (a.kind === "dataframe") throw new Error(`umap: obsm "${key}" is a data frame, not a matrix`);
  const m = await loadMatrix(a);
  if (m.kind !== "dense") throw new Error(`umap: obsm "${key}" is sparse; a dense matrix is needed`);
  const width = m.shape.length > 1 ? (m.shape[1] as number) : 1;
  const src = m.data as unknown as ArrayLike<number | bigint>;
  const values =
    typeof src[0] === "bigint"
      ? Float64Array.from(src as ArrayLike<bigint>, Number)
      : (src as ArrayLike<number>);
  return { values, width };
}

/** The first `cols` columns of a row-major matrix of width `width`. */
function leadingColumns(values: ArrayLike<number>, n: number, width: number, cols: number): Float64Array {
  const out = new Float64Array(n * cols);
  for (let i = 0; i < n; i++) for (let d = 0; d < cols; d++) out[i * cols + d] = values[i * width + d]!;
  return out;
}

/**
 * Embed the neighbourhood graph using UMAP, seeded by `random_state`: a spectral initialisation,
 * then stochastic gradient descent on the fuzzy-set cross entropy (McInnes, Healy and Melville 2018).
 *
 * Writes obsm `X_umap` (cells × n_components, float32) and uns `umap/params` (`a`, `b`,
 * `random_state`). Run `sc.pp.neighbors` first.
 * @peakMemory n_obs * 15 * 64 + n_obs * max(n_components, 2) * 52
 */
export async function umap(sd: SpatialData, params: UmapParams, ctx: OpContext): Promise<Change> {
  const t = activeTable(sd, ctx, "umap");
  const minDist = params.min_dist ?? 0.5;
  const spread = params.spread ?? 1;
  const dim = params.n_components ?? 2;
  const seed = params.random_state ?? 0;
  const method = params.method ?? "umap";
  if (method !== "umap") throw new Error(`umap: unknown method ${method}`);
  if (!Number.isInteger(dim) || dim < 1)
    throw new Error(`umap: n_components must be a positive integer, got ${dim}`);
  if (!Number.isInteger(seed)) throw new Error(`umap: random_state must be an integer, got ${seed}`);
  const neighborsKey = params.neighbors_key ?? "neighbors";
  const entry = unsGet(t.uns, neighborsKey);
  if (!isUnsDict(entry) && !(neighborsKey === "neighbors" && t.obsp.connectivities)) {
    throw new Error(`umap: did not find uns["${neighborsKey}"]; run sc.pp.neighbors first`);
  }
  const graph = await chooseGraph(t, ctx.table, "umap", null, neighborsKey, ctx);
  const n = nObs(t);
  const neighParams = isUnsDict(entry) ? unsGet(entry, "params") : undefined;
  const neighMethod = isUnsDict(neighParams) ? neighParams.entries.method : undefined;
  if (neighMethod !== undefined && neighMethod !== "umap")
    ctx.log(`umap: the connectivities were not computed with method "umap" (got "${String(neighMethod)}")`);

  let a = params.a ?? null;
  let b = params.b ?? null;
  if (a === null || b === null) ({ a, b } = findAbParams(spread, minDist));

  // Initial positions.
  const initPos = params.init_pos ?? "spectral";
  let init: "spectral" | "random" | Float64Array;
  if (initPos in t.obsm) {
    const { values, width } = await obsmDense(t, initPos);
    if (width < dim)
      throw new Error(
        `umap: init_pos obsm "${initPos}" has ${width} columns, fewer than n_components=${dim}`,
      );
    init = leadingColumns(values, n, width, dim);
  } else if (initPos === "spectral" || initPos === "random") init = initPos;
  else if (initPos === "paga")
    throw new Error("umap: init_pos='paga' needs PAGA positions, which are not available; use 'spectral'");
  else throw new Error(`umap: init_pos "${initPos}" is neither 'spectral', 'random' nor an obsm key`);

  // The representation the graph came from: only used to place many disconnected components.
  let data: { values: ArrayLike<number>; width: number } | undefined;
  if (init === "spectral") {
    const useRep = isUnsDict(neighParams) ? neighParams.entries.use_rep : undefined;
    const nPcs = isUnsDict(neighParams) ? neighParams.entries.n_pcs : undefined;
    const repKey = typeof useRep === "string" ? useRep : "X_pca" in t.obsm ? "X_pca" : null;
    if (repKey && repKey in t.obsm) {
      try {
        const rep = await obsmDense(t, repKey);
        const cols = typeof nPcs === "number" && nPcs > 0 && nPcs < rep.width ? nPcs : rep.width;
        data = { values: leadingColumns(rep.values, n, rep.width, cols), width: cols };
      } catch {
        data = undefined; // a representation we cannot read only costs the components' placement
      }
    }
  }

  ctx.progress(0.01, "initialising");
  const rng = new Rng(seed);
  const coords = await umapLayoutAsync(
    graph,
    {
      nComponents: dim,
      nEpochs: params.maxiter ?? null,
      a,
      b,
      gamma: params.gamma ?? 1,
      initialAlpha: params.alpha ?? 1,
      negativeSampleRate: params.negative_sample_rate ?? 5,
      init,
      data,
      rng,
      signal: ctx.signal,
      onProgress: (f) => ctx.progress(0.02 + 0.97 * f),
    },
    ctx.threads,
  );
  const out = allocArray("float32", n * dim) as Float32Array;
  out.set(coords);
  const embedding: DenseArray = { kind: "dense", dtype: "float32", shape: [n, dim], data: out };
  const obsmKey = params.key_added ?? "X_umap";
  const unsKey = params.key_added ?? "umap";
  const uns: Record<string, UnsValue> = {
    [`${unsKey}/params/a`]: a,
    [`${unsKey}/params/b`]: b,
    [`${unsKey}/params/random_state`]: seed,
  };
  ctx.progress(1);
  return { tables: { [ctx.table]: { obsm: { [obsmKey]: embedding }, uns } } };
}

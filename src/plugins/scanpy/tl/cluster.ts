/**
 * `sc.tl.leiden` and `sc.tl.louvain`: community detection on the neighbourhood graph, with scanpy's
 * names, defaults and outputs (obs `<key_added>` categorical "0", "1", … by decreasing size, uns
 * `<key_added>/params`). The algorithms live in `sdk/math/leiden.ts`.
 */
import {
  allocArray,
  type Categorical,
  type Matrix,
  type SparseMatrix,
  strings,
} from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { loadMatrix, type MatrixSlot } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs, type Table } from "../../../sdk/data/table.js";
import { isUnsDict, type UnsValue, unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import {
  type CommunityOptions,
  type CommunityResult,
  graphFromSparse,
  leiden as leidenKernel,
  louvain as louvainKernel,
} from "../../../sdk/math/leiden.js";
import { Rng } from "../../../sdk/math/rng.js";
import { activeTable } from "../helpers.js";

/** `restrict_to`: an obs categorical key and the categories whose cells are re-clustered. */
export type RestrictTo = [string, string[]];

/** Params of `leiden`. */
export interface LeidenParams {
  /**
   * Coarseness of the clustering: higher values give more clusters.
   * @default 1
   * @minimum 0
   */
  resolution?: number;
  /**
   * Re-cluster only the cells of these categories of an obs key (`[key, [categories]]`); the result
   * goes to `<key_added>_R` when `key_added` is the default, labelled `"<cats>,<cluster>"`.
   */
  restrict_to?: RestrictTo | null;
  /**
   * Seed of the random node orders and refinement choices.
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /**
   * obs key of the cluster labels (and uns key of the parameters).
   * @default "leiden"
   */
  key_added?: string;
  /**
   * Treat the graph as directed. The graph is symmetrised (A + Aᵀ) either way, which for scanpy's
   * symmetric connectivities gives the same quality; `flavor="igraph"` refuses `true`.
   */
  directed?: boolean | null;
  /**
   * Use the edge weights (connectivities); false counts every edge as 1.
   * @default true
   */
  use_weights?: boolean;
  /**
   * Iterations of the algorithm; -1 runs until the partition stops changing (scanpy's default with
   * leidenalg), 2 is igraph's usual choice.
   * @default -1
   * @asType integer
   */
  n_iterations?: number;
  /**
   * Which scanpy implementation to mirror: `leidenalg` (scanpy 1.12's default) or `igraph`. Both run
   * the same Leiden algorithm here; they differ in the `directed` default as in scanpy.
   * @default "leidenalg"
   */
  flavor?: "leidenalg" | "igraph";
  /** uns key of the neighbors settings (default `neighbors`): the graph is obsp[uns[key].connectivities_key]. */
  neighbors_key?: string | null;
  /** An obsp key to cluster instead (exclusive with `neighbors_key`). */
  obsp?: string | null;
}

/** Params of `louvain`. */
export interface LouvainParams {
  /**
   * Coarseness of the clustering: higher values give more clusters; unset means 1 (ignored by
   * `flavor="igraph"`, as in scanpy).
   * @minimum 0
   */
  resolution?: number | null;
  /**
   * Seed of the random node orders.
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /** Re-cluster only the cells of these categories of an obs key (`[key, [categories]]`). */
  restrict_to?: RestrictTo | null;
  /**
   * obs key of the cluster labels (and uns key of the parameters).
   * @default "louvain"
   */
  key_added?: string;
  /**
   * Which implementation to mirror: `vtraag` (the `louvain` package, scanpy's default) or `igraph`
   * (`community_multilevel`, resolution 1).
   * @default "vtraag"
   */
  flavor?: "vtraag" | "igraph";
  /**
   * Interpret the graph as directed (symmetrised here either way; the same for symmetric graphs).
   * @default true
   */
  directed?: boolean;
  /**
   * Use the edge weights; scanpy's louvain defaults to an unweighted graph.
   * @default false
   */
  use_weights?: boolean;
  /** uns key of the neighbors settings (default `neighbors`). */
  neighbors_key?: string | null;
  /** An obsp key to cluster instead (exclusive with `neighbors_key`). */
  obsp?: string | null;
}

/** A square sparse matrix from an obsp slot (dense slots are compressed to CSR). */
async function sparseOf(slot: MatrixSlot, what: string): Promise<SparseMatrix> {
  const m: Matrix = await loadMatrix(slot);
  if (m.kind === "csr" || m.kind === "csc") return m;
  const [rows, cols] = m.shape as [number, number];
  if (rows !== cols) throw new Error(`${what} is ${rows} × ${cols}, not square`);
  const src = m.data as unknown as ArrayLike<number | bigint>;
  let nnz = 0;
  for (let k = 0; k < rows * cols; k++) if (Number(src[k]) !== 0) nnz++;
  const indptr = new Int32Array(rows + 1);
  const indices = new Int32Array(nnz);
  const data = new Float64Array(nnz);
  let w = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = Number(src[i * cols + j]);
      if (v !== 0) {
        indices[w] = j;
        data[w++] = v;
      }
    }
    indptr[i + 1] = w;
  }
  return { kind: "csr", dtype: "float64", shape: [rows, cols], data, indices, indptr };
}

/**
 * scanpy's `_choose_graph`: obsp[`obsp`], or the connectivities named by uns[`neighbors_key`]. Errors
 * say to run `sc.pp.neighbors` first when there is no graph.
 * @internal
 */
export async function chooseGraph(
  t: Table,
  table: string,
  op: string,
  obsp: string | null | undefined,
  neighborsKey: string | null | undefined,
  ctx?: OpContext,
): Promise<SparseMatrix> {
  if (obsp != null && neighborsKey != null)
    throw new Error(`${op}: give either obsp or neighbors_key, not both`);
  if (obsp != null) {
    const slot = t.obsp[obsp];
    if (!slot) throw new Error(`${op}: table "${table}" has no obsp "${obsp}"`);
    return sparseOf(slot, `${op}: obsp "${obsp}"`);
  }
  const key = neighborsKey ?? "neighbors";
  const entry = unsGet(t.uns, key);
  let connKey = "connectivities";
  if (isUnsDict(entry)) {
    const named = entry.entries.connectivities_key;
    if (key !== "neighbors" && typeof named === "string") connKey = named;
  } else if (key !== "neighbors" || !t.obsp.connectivities) {
    throw new Error(
      `${op}: table "${table}" has no neighbors graph (no uns "${key}"); run sc.pp.neighbors first`,
    );
  } else {
    ctx?.log(`${op}: no uns "neighbors"; using obsp "connectivities"`);
  }
  const slot = t.obsp[connKey];
  if (!slot)
    throw new Error(
      `${op}: table "${table}" has no obsp "${connKey}" (the neighbors graph); run sc.pp.neighbors first`,
    );
  const m = await sparseOf(slot, `${op}: obsp "${connKey}"`);
  if (m.shape[0] !== nObs(t))
    throw new Error(`${op}: obsp "${connKey}" has ${m.shape[0]} rows for ${nObs(t)} cells`);
  return m;
}

/** The labels of a categorical obs column as strings (missing → null). */
function labelsOf(col: Categorical): (string | null)[] {
  const cats =
    col.categories.kind === "string"
      ? col.categories.values.map((v) => v ?? "")
      : Array.from(col.categories.data as ArrayLike<number | bigint>, (v) => String(v));
  return Array.from(col.codes, (c) => (c < 0 ? null : cats[c]!));
}

/** `restrict_to`: the cells of the chosen categories and the adjacency restricted to them. */
function restrictAdjacency(
  t: Table,
  op: string,
  restrict: RestrictTo,
  adjacency: SparseMatrix,
): { mask: Uint8Array; sub: SparseMatrix; labels: (string | null)[]; prefix: string } {
  const [key, cats] = restrict;
  const col = t.obs.columns[key];
  if (!col) throw new Error(`${op}: restrict_to names obs "${key}", which the table does not have`);
  if (col.kind !== "categorical")
    throw new Error(`${op}: restrict_to needs a categorical obs column; "${key}" is ${col.kind}`);
  if (!Array.isArray(cats) || cats.length === 0)
    throw new Error(`${op}: restrict_to needs at least one category of "${key}"`);
  const labels = labelsOf(col);
  const known = new Set(
    col.categories.kind === "string"
      ? col.categories.values.map((v) => v ?? "")
      : Array.from(col.categories.data as ArrayLike<number | bigint>, (v) => String(v)),
  );
  for (const c of cats) {
    if (typeof c !== "string")
      throw new Error(`${op}: restrict_to categories must be strings, e.g. '1' instead of 1`);
    if (!known.has(c)) throw new Error(`${op}: '${c}' is not a valid category for '${key}'`);
  }
  const wanted = new Set(cats);
  const n = labels.length;
  const mask = new Uint8Array(n);
  const newIndex = new Int32Array(n).fill(-1);
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (labels[i] !== null && wanted.has(labels[i]!)) {
      mask[i] = 1;
      newIndex[i] = m++;
    }
  }
  // The adjacency's compressed axis is rows for CSR, columns for CSC: the same restriction either way.
  const major = adjacency.shape[0];
  const indptr = new Int32Array(m + 1);
  let nnz = 0;
  for (let i = 0; i < major; i++) {
    if (!mask[i]) continue;
    for (let k = Number(adjacency.indptr[i]); k < Number(adjacency.indptr[i + 1]); k++)
      if (mask[adjacency.indices[k] as number]) nnz++;
  }
  const indices = new Int32Array(nnz);
  const data = new Float64Array(nnz);
  const src = adjacency.data as unknown as ArrayLike<number | bigint>;
  let w = 0;
  for (let i = 0; i < major; i++) {
    if (!mask[i]) continue;
    for (let k = Number(adjacency.indptr[i]); k < Number(adjacency.indptr[i + 1]); k++) {
      const j = adjacency.indices[k] as number;
      if (!mask[j]) continue;
      indices[w] = newIndex[j]!;
      data[w++] = Number(src[k]);
    }
    indptr[newIndex[i]! + 1] = w;
  }
  const sub: SparseMatrix = { kind: adjacency.kind, dtype: "float64", shape: [m, m], data, indices, indptr };
  return { mask, sub, labels, prefix: `${cats.join("-")},` };
}

/** natsort's order: digit runs compare as numbers, the rest as text. */
export function naturalCompare(a: string, b: string): number {
  const ra = a.match(/\d+|\D+/g) ?? [];
  const rb = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(ra.length, rb.length); i++) {
    const x = ra[i]!;
    const y = rb[i]!;
    const nx = /^\d/.test(x);
    const ny = /^\d/.test(y);
    if (nx && ny) {
      const d = Number(x) - Number(y);
      if (d !== 0) return d;
    } else if (nx !== ny) return nx ? -1 : 1;
    else if (x !== y) return x < y ? -1 : 1;
  }
  return ra.length - rb.length;
}

/** A categorical of string labels, categories in natural order. */
function categoricalOf(values: readonly (string | null)[]): Categorical {
  const cats = [...new Set(values.filter((v): v is string => v !== null))].sort(naturalCompare);
  const at = new Map(cats.map((c, i) => [c, i]));
  const codes = allocArray("int32", values.length) as Int32Array;
  for (let i = 0; i < values.length; i++) codes[i] = values[i] === null ? -1 : at.get(values[i]!)!;
  return { kind: "categorical", codes, categories: strings(cats), ordered: false };
}

interface ClusterRun {
  readonly op: "leiden" | "louvain";
  readonly keyAdded: string;
  readonly restrict: RestrictTo | null;
  readonly useWeights: boolean;
  readonly obsp: string | null | undefined;
  readonly neighborsKey: string | null | undefined;
  readonly options: Omit<CommunityOptions, "rng" | "signal" | "onProgress">;
  readonly seed: number;
  readonly params: Record<string, UnsValue>;
}

/** Shared body of leiden and louvain: graph, restriction, kernel, labels, Change. */
async function cluster(sd: SpatialData, run: ClusterRun, ctx: OpContext): Promise<Change> {
  const t = activeTable(sd, ctx, run.op);
  if (!Number.isInteger(run.seed))
    throw new Error(`${run.op}: random_state must be an integer, got ${run.seed}`);
  let adjacency = await chooseGraph(t, ctx.table, run.op, run.obsp, run.neighborsKey, ctx);
  let restricted: ReturnType<typeof restrictAdjacency> | null = null;
  if (run.restrict) {
    restricted = restrictAdjacency(t, run.op, run.restrict, adjacency);
    adjacency = restricted.sub;
  }
  ctx.progress(0.05, "building the graph");
  const graph = graphFromSparse(adjacency, { useWeights: run.useWeights });
  ctx.signal.throwIfAborted();
  const kernel = run.op === "leiden" ? leidenKernel : louvainKernel;
  const result: CommunityResult = kernel(graph, {
    ...run.options,
    rng: new Rng(run.seed),
    signal: ctx.signal,
    onProgress: (f) => ctx.progress(0.1 + 0.85 * f),
  });
  ctx.log(
    `${run.op}: ${result.nCommunities} clusters in ${result.iterations} iteration(s), modularity ${result.modularity.toFixed(4)}`,
  );
  let keyAdded = run.keyAdded;
  let column: Categorical;
  if (restricted) {
    if (keyAdded === run.op) keyAdded = `${run.op}_R`;
    const values = restricted.labels.slice();
    let k = 0;
    for (let i = 0; i < values.length; i++)
      if (restricted.mask[i]) values[i] = `${restricted.prefix}${result.membership[k++]}`;
    column = categoricalOf(values);
  } else {
    const codes = allocArray("int32", result.membership.length) as Int32Array;
    codes.set(result.membership);
    const cats = Array.from({ length: result.nCommunities }, (_, i) => String(i));
    column = { kind: "categorical", codes, categories: strings(cats), ordered: false };
  }
  const uns: Record<string, UnsValue> = {};
  for (const [k, v] of Object.entries(run.params)) uns[`${keyAdded}/params/${k}`] = v;
  if (run.op === "leiden") uns[`${keyAdded}/modularity`] = result.modularity;
  ctx.progress(1);
  return { tables: { [ctx.table]: { obs: { [keyAdded]: column }, uns } } };
}

/**
 * Cluster cells into subgroups with the Leiden algorithm on the neighbourhood graph, optimising
 * modularity at the given resolution (Traag, Waltman and van Eck 2019).
 *
 * Writes obs `leiden` (categorical "0", "1", … by decreasing size) and uns `leiden/params`
 * (`resolution`, `random_state`, `n_iterations`) and `leiden/modularity`. Run `sc.pp.neighbors` first.
 */
export async function leiden(sd: SpatialData, params: LeidenParams, ctx: OpContext): Promise<Change> {
  const flavor = params.flavor ?? "leidenalg";
  if (flavor !== "leidenalg" && flavor !== "igraph")
    throw new Error(`leiden: flavor must be either 'igraph' or 'leidenalg', but '${flavor}' was passed`);
  if (flavor === "igraph" && params.directed === true)
    throw new Error("leiden: cannot use igraph's leiden implementation with a directed graph");
  const resolution = params.resolution ?? 1;
  if (!(resolution >= 0)) throw new Error(`leiden: resolution must be ≥ 0, got ${resolution}`);
  const nIterations = params.n_iterations ?? -1;
  if (!Number.isInteger(nIterations) || nIterations === 0)
    throw new Error(`leiden: n_iterations must be a non-zero integer (-1: until stable), got ${nIterations}`);
  const seed = params.random_state ?? 0;
  return cluster(
    sd,
    {
      op: "leiden",
      keyAdded: params.key_added ?? "leiden",
      restrict: params.restrict_to ?? null,
      useWeights: params.use_weights ?? true,
      obsp: params.obsp,
      neighborsKey: params.neighbors_key,
      options: { resolution, nIterations },
      seed,
      params: { resolution, random_state: seed, n_iterations: nIterations },
    },
    ctx,
  );
}

/**
 * Cluster cells into subgroups with the Louvain algorithm on the neighbourhood graph, optimising
 * modularity (Blondel, Guillaume, Lambiotte and Lefebvre 2008).
 *
 * Writes obs `louvain` (categorical "0", "1", … by decreasing size) and uns `louvain/params`
 * (`resolution`, `random_state`). As in scanpy, the graph is unweighted unless `use_weights`.
 */
export async function louvain(sd: SpatialData, params: LouvainParams, ctx: OpContext): Promise<Change> {
  const flavor = params.flavor ?? "vtraag";
  if (flavor !== "vtraag" && flavor !== "igraph")
    throw new Error(`louvain: flavor needs to be "vtraag" or "igraph", got "${flavor}"`);
  const given = params.resolution ?? null;
  if (given !== null && !(given >= 0)) throw new Error(`louvain: resolution must be ≥ 0, got ${given}`);
  if (flavor === "igraph" && given !== null)
    ctx.log('louvain: `resolution` has no effect for flavor "igraph"');
  const resolution = flavor === "igraph" ? 1 : (given ?? 1);
  const seed = params.random_state ?? 0;
  const unsParams: Record<string, UnsValue> = { random_state: seed };
  if (given !== null) unsParams.resolution = given;
  return cluster(
    sd,
    {
      op: "louvain",
      keyAdded: params.key_added ?? "louvain",
      restrict: params.restrict_to ?? null,
      useWeights: params.use_weights ?? false,
      obsp: params.obsp,
      neighborsKey: params.neighbors_key,
      options: { resolution },
      seed,
      params: unsParams,
    },
    ctx,
  );
}

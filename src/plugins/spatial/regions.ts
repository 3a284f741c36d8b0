/**
 * Spatial domains by graph clustering: `custom.identify_regions_leiden` (Leiden on the kNN graph of
 * the coordinates: contiguous regions) and `custom.cellular_neighborhoods` (each cell's window of
 * nearest cells summarised as a cell-type composition, then Leiden in composition space: recurring
 * neighbourhoods, after Schürch et al. 2020, Cell 182:1341).
 */
import { allocArray, type SparseMatrix } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { nObs } from "../../sdk/data/table.js";
import { type UnsValue, unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { knn } from "../../sdk/math/knn.js";
import { graphFromSparse, leiden } from "../../sdk/math/leiden.js";
import { Rng } from "../../sdk/math/rng.js";
import { spatialGraph } from "../../sdk/math/spatial/graph.js";
import { fuzzySimplicialSet } from "../../sdk/math/umap-graph.js";
import { stringArray } from "../tessera/tables.js";
import { matrixFrame } from "./frames.js";
import { activeTable, type Coordinates, categoricalOf, labelsOf, spatialCoordinates } from "./inputs.js";
import { graphMatrix } from "./neighbours.js";

/** Params of `identify_regions_leiden`. */
export interface IdentifyRegionsLeidenParams {
  /**
   * Neighbours per cell in the spatial kNN graph.
   * @default 15
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  n_neighbors?: number;
  /**
   * Leiden resolution: higher gives more, smaller regions.
   * @default 1
   * @minimum 0
   */
  resolution?: number;
  /**
   * Leiden iterations (negative: until the partition is stable).
   * @default 2
   * @asType integer
   */
  n_iterations?: number;
  /**
   * Seed of the Leiden node orders and refinement.
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /**
   * Categorical obs column of the libraries (samples, sections): no edge joins two libraries.
   * @widget obs_categorical
   * @maxLength 256
   */
  library_key?: string | null;
  /**
   * obsm key of the coordinates.
   * @default "spatial"
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * obs key of the region labels.
   * @default "leiden_spatial"
   * @maxLength 256
   */
  key_added?: string;
}

/** Library codes of the cells, when a library key is given. */
function libraryCodes(
  sd: SpatialData,
  table: string,
  key: string | null | undefined,
): Int32Array | undefined {
  if (!key) return undefined;
  return labelsOf(sd.tables[table]!, table, key).codes;
}

/** Leiden on a spatial graph's connectivities: labels "0", "1", … by decreasing size. */
function clusterGraph(
  m: ReturnType<typeof graphMatrix>,
  opts: { resolution: number; nIterations: number; seed: number },
  ctx: OpContext,
): { codes: Int32Array; names: string[] } {
  if (!Number.isInteger(opts.nIterations) || opts.nIterations === 0)
    throw new Error(`n_iterations must be a non-zero integer (-1: until stable), got ${opts.nIterations}`);
  if (!(opts.resolution >= 0)) throw new Error(`resolution must be ≥ 0, got ${opts.resolution}`);
  const res = leiden(graphFromSparse(m), {
    resolution: opts.resolution,
    nIterations: opts.nIterations,
    rng: new Rng(opts.seed),
    signal: ctx.signal,
  });
  return {
    codes: res.membership,
    names: Array.from({ length: res.nCommunities }, (_, c) => String(c)),
  };
}

/**
 * Contiguous tissue regions: Leiden clustering of the kNN graph of the spatial coordinates (each
 * cell joined to its `n_neighbors` nearest cells, unweighted, symmetrised), so that clusters are
 * spatially connected patches rather than expression groups.
 *
 * Writes obs `<key_added>` (categorical "0", "1", … by decreasing size) and uns `<key_added>/params`.
 */
export async function identify_regions_leiden(
  sd: SpatialData,
  params: IdentifyRegionsLeidenParams,
  ctx: OpContext,
): Promise<Change> {
  const t = activeTable(sd, ctx.table);
  const coords = await spatialCoordinates(t, ctx.table, params.spatial_key ?? "spatial");
  const k = params.n_neighbors ?? 15;
  const key = params.key_added ?? "leiden_spatial";
  const libraries = libraryCodes(sd, ctx.table, params.library_key);
  ctx.progress(0, "spatial graph");
  const g = spatialGraph(coords.xy, coords.n, coords.dim, {
    mode: "knn",
    nNeighs: Math.min(k, Math.max(1, coords.n - 1)),
    ...(libraries ? { libraries } : {}),
  });
  ctx.progress(0.3, "leiden");
  const resolution = params.resolution ?? 1;
  const nIterations = params.n_iterations ?? 2;
  const seed = params.random_state ?? 0;
  const { codes, names } = clusterGraph(
    graphMatrix(g.connectivities),
    { resolution, nIterations, seed },
    ctx,
  );
  ctx.progress(1);
  ctx.log(
    `identify_regions_leiden: ${names.length} regions from a ${k}-NN spatial graph; added obs["${key}"]`,
  );
  return {
    tables: {
      [ctx.table]: {
        obs: { [key]: categoricalOf(codes, names) },
        uns: {
          [key]: unsDict({
            params: unsDict({
              n_neighbors: k,
              resolution,
              n_iterations: nIterations,
              random_state: seed,
              library_key: params.library_key ?? null,
            }),
          }),
        },
      },
    },
  };
}

/** Params of `cellular_neighborhoods`. */
export interface CellularNeighborhoodsParams {
  /**
   * Categorical obs column of the cell types whose composition defines a window.
   * @widget obs_categorical
   * @maxLength 256
   */
  cell_type_key: string;
  /**
   * Cells per window: the cell and its k − 1 nearest cells.
   * @default 20
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  k?: number;
  /**
   * Neighbours per window in the composition-space kNN graph that Leiden clusters.
   * @default 15
   * @asType integer
   * @minimum 2
   * @maximum 1000
   */
  n_neighbors?: number;
  /**
   * Leiden resolution in composition space.
   * @default 0.1
   * @minimum 0
   */
  resolution?: number;
  /**
   * Leiden iterations (negative: until the partition is stable).
   * @default 2
   * @asType integer
   */
  n_iterations?: number;
  /**
   * Seed of the composition-space kNN search and of Leiden.
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /**
   * Categorical obs column of the libraries: windows never reach across libraries.
   * @widget obs_categorical
   * @maxLength 256
   */
  library_key?: string | null;
  /**
   * obsm key of the coordinates.
   * @default "spatial"
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * obs key of the neighbourhood labels (also the uns key, and obsm `<key_added>_composition`).
   * @default "cellular_neighborhood"
   * @maxLength 256
   */
  key_added?: string;
}

/**
 * Window compositions: for each cell, the fraction of each type among the labelled cells of its
 * window (itself and its k − 1 nearest), n × L float32 on shared memory.
 */
export function windowComposition(
  coords: Coordinates,
  types: Int32Array,
  nTypes: number,
  k: number,
  libraries: Int32Array | undefined,
): Float32Array {
  const n = coords.n;
  const comp = allocArray("float32", n * nTypes) as Float32Array;
  const others = Math.min(k - 1, n - 1);
  if (others > 0) {
    const g = spatialGraph(coords.xy, n, coords.dim, {
      mode: "knn",
      nNeighs: others,
      ...(libraries ? { libraries } : {}),
    });
    const { indptr, indices } = g.connectivities;
    for (let i = 0; i < n; i++) {
      let total = 0;
      const own = types[i]!;
      if (own >= 0) {
        comp[i * nTypes + own]! += 1;
        total++;
      }
      for (let e = indptr[i]!; e < indptr[i + 1]!; e++) {
        const c = types[indices[e]!]!;
        if (c >= 0) {
          comp[i * nTypes + c]! += 1;
          total++;
        }
      }
      if (total > 0) for (let c = 0; c < nTypes; c++) comp[i * nTypes + c]! /= total;
    }
  } else {
    for (let i = 0; i < n; i++) if (types[i]! >= 0) comp[i * nTypes + types[i]!] = 1;
  }
  return comp;
}

/** Distinct rows of an n × d matrix: the rows (u × d), and which distinct row each input row is. */
function uniqueRows(
  m: Float32Array,
  n: number,
  d: number,
): { rows: Float32Array; of: Int32Array; count: number } {
  const seen = new Map<string, number>();
  const of = new Int32Array(n);
  const first: number[] = [];
  for (let i = 0; i < n; i++) {
    const key = m.subarray(i * d, (i + 1) * d).join(",");
    let r = seen.get(key);
    if (r === undefined) {
      r = first.length;
      seen.set(key, r);
      first.push(i);
    }
    of[i] = r;
  }
  const rows = new Float32Array(first.length * d);
  first.forEach((i, r) => {
    rows.set(m.subarray(i * d, (i + 1) * d), r * d);
  });
  return { rows, of, count: first.length };
}

/**
 * The unique-row graph with a self-loop of weight (m − 1) on a row shared by m cells: the copies of a
 * window count towards their node's degree (a patch of 300 identical windows weighs more than one
 * window), without making the copies a separate component.
 */
function withMultiplicity(conn: SparseMatrix, of: Int32Array, u: number): SparseMatrix {
  const mult = new Float64Array(u);
  for (const r of of) mult[r]! += 1;
  const indptr = new Int32Array(u + 1);
  const src = conn.data as unknown as ArrayLike<number>;
  const idx: number[] = [];
  const val: number[] = [];
  for (let i = 0; i < u; i++) {
    let diag = false;
    for (let e = Number(conn.indptr[i]); e < Number(conn.indptr[i + 1]); e++) {
      const j = conn.indices[e] as number;
      if (!diag && j >= i) {
        if (mult[i]! > 1) {
          idx.push(i);
          val.push((j === i ? src[e]! : 0) + mult[i]! - 1);
        }
        diag = true;
        if (j === i) continue;
      }
      idx.push(j);
      val.push(src[e]!);
    }
    if (!diag && mult[i]! > 1) {
      idx.push(i);
      val.push(mult[i]! - 1);
    }
    indptr[i + 1] = idx.length;
  }
  return {
    kind: "csr",
    dtype: "float64",
    shape: [u, u],
    data: Float64Array.from(val),
    indices: Int32Array.from(idx),
    indptr,
  };
}

/** Relabel clusters 0… by decreasing number of cells (ties: the cluster seen first), as scanpy numbers them. */
function bySize(codes: Int32Array, k: number): { codes: Int32Array; names: string[] } {
  const size = new Int32Array(k);
  const firstAt = new Int32Array(k).fill(codes.length);
  codes.forEach((c, i) => {
    size[c]!++;
    if (i < firstAt[c]!) firstAt[c] = i;
  });
  const order = Array.from({ length: k }, (_, c) => c)
    .filter((c) => size[c]! > 0)
    .sort((a, b) => size[b]! - size[a]! || firstAt[a]! - firstAt[b]!);
  const rank = new Int32Array(k);
  order.forEach((c, r) => {
    rank[c] = r;
  });
  return { codes: Int32Array.from(codes, (c) => rank[c]!), names: order.map((_, r) => String(r)) };
}

/**
 * Cellular neighbourhoods: every cell's window (itself and its k − 1 nearest cells, within its
 * library) is summarised as the fraction of each cell type, and the windows are clustered by Leiden
 * on a kNN graph in composition space (euclidean, `n_neighbors`, UMAP connectivities as
 * `sc.pp.neighbors` builds them) at a low resolution, so each cluster is a recurring mix of types.
 * Identical windows are clustered as one node (they are one point of composition space).
 *
 * Writes obs `<key_added>` (categorical "0", "1", … by decreasing size), obsm
 * `<key_added>_composition` (n × types), and uns `<key_added>`: `composition` (mean window
 * composition per neighbourhood), `enrichment` (log2 of that over the overall type fractions), the
 * type names `cell_types`, and `params`.
 * @peakMemory n_obs * (4 * 64 + 8 * 30) + n_obs * 15 * 24
 */
export async function cellular_neighborhoods(
  sd: SpatialData,
  params: CellularNeighborhoodsParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "cellular_neighborhoods";
  const t = activeTable(sd, ctx.table);
  const n = nObs(t);
  const types = labelsOf(t, ctx.table, params.cell_type_key);
  const coords = await spatialCoordinates(t, ctx.table, params.spatial_key ?? "spatial");
  const k = params.k ?? 20;
  const nNeighbors = params.n_neighbors ?? 15;
  const resolution = params.resolution ?? 0.1;
  const nIterations = params.n_iterations ?? 2;
  const seed = params.random_state ?? 0;
  const key = params.key_added ?? "cellular_neighborhood";
  const L = types.names.length;
  if (L === 0) throw new Error(`${op}: obs "${params.cell_type_key}" has no categories`);
  if (n < 3) throw new Error(`${op}: needs at least 3 cells, the table has ${n}`);
  const libraries = libraryCodes(sd, ctx.table, params.library_key);
  ctx.progress(0, "windows");
  const comp = windowComposition(coords, types.codes, L, k, libraries);
  ctx.signal.throwIfAborted();
  ctx.progress(0.3, "composition-space neighbours");
  // Identical windows (common: every window inside a pure patch) are one node, else a kNN graph
  // among hundreds of copies never leaves them and each set of copies becomes its own cluster.
  const uniq = uniqueRows(comp, n, L);
  const u = uniq.count;
  let codes: Int32Array;
  let names: string[];
  if (u === 1) {
    codes = new Int32Array(n);
    names = ["0"];
  } else {
    const kk = Math.min(nNeighbors, u);
    const g = knn(uniq.rows, u, L, kk, { rng: new Rng(seed), signal: ctx.signal });
    const conn = withMultiplicity(fuzzySimplicialSet(g.indices, g.distances, u, kk), uniq.of, u);
    ctx.progress(0.6, "leiden");
    const part = clusterGraph(conn, { resolution, nIterations, seed }, ctx);
    ({ codes, names } = bySize(
      Int32Array.from(uniq.of, (r) => part.codes[r]!),
      part.names.length,
    ));
  }
  // Summaries per neighbourhood: mean composition and its log2 enrichment over the overall mix.
  const nCn = names.length;
  const mean = new Float64Array(nCn * L);
  const size = new Float64Array(nCn);
  const overall = new Float64Array(L);
  let labelled = 0;
  for (let i = 0; i < n; i++) {
    const c = codes[i]!;
    size[c]! += 1;
    for (let j = 0; j < L; j++) mean[c * L + j]! += comp[i * L + j];
    if (types.codes[i]! >= 0) {
      overall[types.codes[i]!]! += 1;
      labelled++;
    }
  }
  const enrichment = new Float64Array(nCn * L);
  for (let c = 0; c < nCn; c++)
    for (let j = 0; j < L; j++) {
      mean[c * L + j]! /= size[c];
      enrichment[c * L + j] = Math.log2(mean[c * L + j]! / (overall[j]! / labelled));
    }
  const entries: Record<string, UnsValue> = {
    composition: matrixFrame(mean, names, types.names),
    enrichment: matrixFrame(enrichment, names, types.names),
    cell_types: stringArray(types.names),
    params: unsDict({
      cell_type_key: params.cell_type_key,
      k,
      n_neighbors: nNeighbors,
      resolution,
      n_iterations: nIterations,
      random_state: seed,
      library_key: params.library_key ?? null,
    }),
  };
  ctx.progress(1);
  ctx.log(`${op}: ${nCn} neighbourhoods from windows of ${k} cells over ${L} types; added obs["${key}"]`);
  return {
    tables: {
      [ctx.table]: {
        obs: { [key]: categoricalOf(codes, names) },
        obsm: { [`${key}_composition`]: { kind: "dense", dtype: "float32", shape: [n, L], data: comp } },
        uns: { [key]: unsDict(entries) },
      },
    },
  };
}

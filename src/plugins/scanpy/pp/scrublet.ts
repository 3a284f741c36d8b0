/**
 * `sc.pp.scrublet` (scanpy's `preprocessing/_scrublet/__init__.py`): the operation — parameters, the
 * batches, the outputs in obs and uns. The simulation and scoring are in `scrublet-core.ts`.
 */
import { allocArray, dense } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { type Column, nRows } from "../../../sdk/data/dataframe.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { type UnsDict, type UnsValue, unsDict } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { rowMatrix } from "../../../sdk/math/regression.js";
import { Rng } from "../../../sdk/math/rng.js";
import { activeTable } from "../helpers.js";
import { matrixOf, obsGroups } from "./helpers.js";
import { runScrublet, type ScrubletRun } from "./scrublet-core.js";

/** Parameters of `scrublet`. */
export interface ScrubletParams {
  /** Obs column of batches; Scrublet then runs on each batch independently. */
  batch_key?: string | null;
  /**
   * Number of doublets to simulate relative to the number of observed transcriptomes.
   * @default 2
   * @exclusiveMinimum 0
   */
  sim_doublet_ratio?: number;
  /**
   * The estimated doublet rate of the experiment.
   * @default 0.05
   * @exclusiveMinimum 0
   * @exclusiveMaximum 1
   */
  expected_doublet_rate?: number;
  /**
   * Uncertainty in the expected doublet rate.
   * @default 0.02
   * @minimum 0
   */
  stdev_doublet_rate?: number;
  /**
   * Rate for sampling UMIs when creating synthetic doublets: 1 adds the counts of two cells; below
   * 1 the summed counts are thinned binomially at this rate.
   * @default 1
   * @exclusiveMinimum 0
   * @maximum 1
   */
  synthetic_doublet_umi_subsampling?: number;
  /**
   * Distance metric of the nearest-neighbour search.
   * @default "euclidean"
   */
  knn_dist_metric?: "euclidean" | "cosine" | "manhattan";
  /**
   * Scale each gene to unit variance (over the observed cells) before the embedding.
   * @default true
   */
  normalize_variance?: boolean;
  /**
   * Log-transform (log1p) observed and simulated counts before normalising them.
   * @default false
   */
  log_transform?: boolean;
  /**
   * Centre each gene (PCA); without it a truncated SVD of the uncentred data is used.
   * @default true
   */
  mean_center?: boolean;
  /**
   * Number of principal components of the embedding the kNN classifier works in.
   * @default 30
   * @asType integer
   * @minimum 1
   */
  n_prin_comps?: number;
  /**
   * Approximate neighbours (a random-projection forest searched exactly within its leaves; Euclidean
   * only); null chooses exact search up to 20,000 points (observed + simulated) and the forest above.
   */
  use_approx_neighbors?: boolean | null;
  /**
   * Also store, per observed cell, the parents of its simulated-doublet neighbours
   * (`uns["scrublet"]["doublet_neighbor_parents"]`, as one index list per cell).
   * @default false
   */
  get_doublet_neighbor_parents?: boolean;
  /**
   * Neighbours of the kNN graph; default round(0.5 · √n_obs).
   * @asType integer
   * @minimum 1
   */
  n_neighbors?: number | null;
  /**
   * Doublet score threshold; null finds it at the minimum between the two modes of the simulated
   * doublets' score histogram (scikit-image's `threshold_minimum`).
   */
  threshold?: number | null;
  /**
   * Log summary statistics.
   * @default true
   */
  verbose?: boolean;
  /**
   * Seed of the doublet simulation and the embedding.
   * @default 0
   * @asType integer
   */
  random_state?: number;
}

/** One run's uns entry, laid out as scanpy's `uns["scrublet"]`. */
function scrubletUns(run: ScrubletRun, params: ScrubletParams, seed: number): UnsDict {
  const entries: Record<string, UnsValue> = {
    doublet_scores_sim: dense(toSharedF64(run.scoresSim)),
    doublet_parents: dense(run.parents, [run.parents.length / 2, 2], "int32"),
    parameters: unsDict({
      expected_doublet_rate: params.expected_doublet_rate ?? 0.05,
      sim_doublet_ratio: params.sim_doublet_ratio ?? 2,
      n_neighbors: run.nNeighbors,
      random_state: seed,
    }),
  };
  if (run.threshold !== null) entries.threshold = run.threshold;
  if (run.neighborParents) {
    entries.doublet_neighbor_parents = unsDict(
      Object.fromEntries(run.neighborParents.map((a, i) => [String(i), dense(a, [a.length], "int32")])),
    );
  }
  return unsDict(entries);
}

function toSharedF64(a: Float64Array): Float64Array {
  const out = allocArray("float64", a.length) as Float64Array;
  out.set(a);
  return out;
}

/**
 * Predict doublets with Scrublet (Wolock et al. 2019): a nearest-neighbour classifier of observed
 * transcriptomes and simulated doublets.
 *
 * X must be raw counts. As scanpy's wrapper does: genes in fewer than 3 cells and cells with fewer
 * than 3 genes are set aside; the counts are normalised to the median total, highly variable genes
 * picked (seurat flavour, default cut-offs); doublets are simulated by summing the counts of random
 * distinct pairs of cells; observed and simulated cells are normalised to 10⁶ per cell, z-scored with
 * the observed statistics and embedded by a PCA fitted on the observed cells; each cell's score is the
 * Bayesian doublet likelihood from the fraction of simulated doublets among its k·(1 + n_sim/n_obs)
 * neighbours. Writes obs `doublet_score` and `predicted_doublet` and uns `scrublet`
 * (`doublet_scores_sim`, `doublet_parents` as row positions of the table, `parameters`, `threshold`);
 * with `batch_key` per batch under `uns["scrublet"]["batches"]` plus `batched_by`. The random streams
 * differ from numpy's, so scores agree with scanpy in distribution, not digit for digit.
 */
export async function scrublet(sd: SpatialData, params: ScrubletParams, ctx: OpContext): Promise<Change> {
  const op = "scrublet";
  const t = activeTable(sd, ctx, op);
  const n = nRows(t.obs);
  const seed = params.random_state ?? 0;
  const full = {
    sim_doublet_ratio: params.sim_doublet_ratio ?? 2,
    expected_doublet_rate: params.expected_doublet_rate ?? 0.05,
    stdev_doublet_rate: params.stdev_doublet_rate ?? 0.02,
    synthetic_doublet_umi_subsampling: params.synthetic_doublet_umi_subsampling ?? 1,
    knn_dist_metric: params.knn_dist_metric ?? "euclidean",
    normalize_variance: params.normalize_variance ?? true,
    log_transform: params.log_transform ?? false,
    mean_center: params.mean_center ?? true,
    n_prin_comps: params.n_prin_comps ?? 30,
    use_approx_neighbors: params.use_approx_neighbors ?? null,
    get_doublet_neighbor_parents: params.get_doublet_neighbor_parents ?? false,
    n_neighbors: params.n_neighbors ?? null,
    threshold: params.threshold ?? null,
    verbose: params.verbose ?? true,
    random_state: seed,
  };
  const x = await matrixOf(t, null, op);
  const y = rowMatrix(x);
  const rng = new Rng(seed);
  const scores = allocArray("float64", n) as Float64Array;
  const called = new Int8Array(n).fill(-1);
  let uns: UnsDict;
  const runOn = (rows: Int32Array, label: string, from: number, to: number, r: Rng) => {
    const run = runScrublet(y, rows, full, r, ctx, (f, msg) =>
      ctx.progress(from + (to - from) * f, `${label}${msg}`),
    );
    for (let i = 0; i < rows.length; i++) {
      scores[rows[i]!] = run.scores[i]!;
      called[rows[i]!] = run.called[i]!;
    }
    if (full.verbose && run.stats) ctx.log(`${op}: ${label}${run.stats}`);
    return run;
  };
  if (params.batch_key) {
    const groups = obsGroups(t, params.batch_key, op, "batch_key");
    const batches: Record<string, UnsValue> = {};
    for (let b = 0; b < groups.labels.length; b++) {
      const rows = Int32Array.from(
        (function* () {
          for (let i = 0; i < n; i++) if (groups.codes[i] === b) yield i;
        })(),
      );
      const from = b / groups.labels.length;
      const run = runOn(
        rows,
        `batch ${groups.labels[b]}: `,
        from,
        (b + 1) / groups.labels.length,
        rng.fork(b),
      );
      batches[groups.labels[b]!] = scrubletUns(run, full, seed);
    }
    uns = unsDict({ batches: unsDict(batches), batched_by: params.batch_key });
  } else {
    const rows = Int32Array.from({ length: n }, (_, i) => i);
    uns = scrubletUns(runOn(rows, "", 0, 1, rng), full, seed);
  }
  const anyMissing = called.some((c) => c < 0);
  const boolData = allocArray("bool", n) as Uint8Array;
  for (let i = 0; i < n; i++) boolData[i] = called[i] === 1 ? 1 : 0;
  const predicted: Column = anyMissing
    ? {
        kind: "nullable",
        dtype: "bool",
        data: boolData,
        mask: Uint8Array.from(called, (c) => (c < 0 ? 1 : 0)),
      }
    : dense(boolData, [n], "bool");
  ctx.progress(1);
  return {
    tables: {
      [ctx.table]: {
        obs: { doublet_score: dense(scores), predicted_doublet: predicted },
        uns: { scrublet: uns },
      },
    },
  };
}

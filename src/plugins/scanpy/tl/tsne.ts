/**
 * `sc.tl.tsne` (scanpy's `tools/_tsne.py`): t-SNE coordinates of a representation, with scanpy's
 * parameters and outputs (obsm `X_tsne`, uns `tsne/params`). The optimiser is `sdk/math/tsne.ts`.
 */
import type { Change } from "../../../sdk/data/change.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { unsFromJson } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { tsne as tsneKernel } from "../../../sdk/math/tsne.js";
import { activeTable } from "../helpers.js";
import { chooseRepresentation, float32Matrix } from "./helpers.js";

/** Params of `tsne`. */
export interface TsneParams {
  /**
   * Number of principal components of `X_pca` to use (all when unset).
   * @asType integer
   * @minimum 1
   */
  n_pcs?: number;
  /** Representation to use: an obsm key or `X` (default: `X_pca`, or X with at most 50 variables). */
  use_rep?: string;
  /**
   * Number of embedding dimensions; only 2 (the Barnes-Hut quadtree) is supported.
   * @asType integer
   * @default 2
   * @minimum 2
   * @maximum 2
   */
  n_components?: number;
  /**
   * Perplexity: the effective number of neighbours of each cell (3·perplexity neighbours are used).
   * @default 30
   * @exclusiveMinimum 0
   */
  perplexity?: number;
  /**
   * Distance metric of the neighbour search; only `euclidean`.
   * @default "euclidean"
   */
  metric?: "euclidean";
  /**
   * Factor on the affinities during the first 250 iterations (spreads clusters apart).
   * @default 12
   * @exclusiveMinimum 0
   */
  early_exaggeration?: number;
  /**
   * Gradient-descent step size (scanpy's default 1000), or `auto` = max(n / early_exaggeration / 4, 50).
   * @default 1000
   */
  learning_rate?: number | "auto";
  /**
   * Seed of the PCA initialisation's start vector.
   * @asType integer
   * @default 0
   */
  random_state?: number;
  /**
   * Threads (recorded; the run uses one thread).
   * @asType integer
   */
  n_jobs?: number;
  /** Key of the obsm embedding and the uns parameters (default `X_tsne` and `tsne`). */
  key_added?: string;
}

/**
 * t-SNE embedding (Barnes-Hut, van der Maaten 2014) of a cell representation, as scanpy's default
 * scikit-learn backend computes it: exact 3·perplexity-nearest-neighbour affinities, PCA initialisation,
 * 250 exaggerated iterations then up to 1000 in all. Writes `obsm/X_tsne` and `uns/tsne/params`.
 *
 * Cost: an exact kNN (O(n²·d), with pruning) plus O(n log n) per iteration; about 27 s of CPU
 * at 10k cells on one core. Partially supported above ~50k cells: it runs, but takes several minutes.
 */
export async function tsne(sd: SpatialData, params: TsneParams, ctx: OpContext): Promise<Change> {
  const op = "tsne";
  const t = activeTable(sd, ctx, op);
  if ((params.n_components ?? 2) !== 2) throw new Error(`${op}: only n_components = 2 is supported`);
  if ((params.metric ?? "euclidean") !== "euclidean")
    throw new Error(`${op}: only metric "euclidean" is supported`);
  const perplexity = params.perplexity ?? 30;
  const rep = await chooseRepresentation(t, op, params.use_rep, params.n_pcs);
  const learningRate = params.learning_rate ?? 1000;
  const res = tsneKernel(rep.data, rep.n, rep.d, {
    perplexity,
    earlyExaggeration: params.early_exaggeration ?? 12,
    learningRate,
    seed: params.random_state ?? 0,
    init: "pca",
    signal: ctx.signal,
    progress: (f, m) => ctx.progress(f, m),
  });
  const last = res.klHistory[res.klHistory.length - 1];
  ctx.log(`t-SNE: ${res.iterations} iterations, KL divergence ${last ? last.kl.toFixed(4) : "n/a"}`);
  const obsmKey = params.key_added ?? "X_tsne";
  const unsKey = params.key_added ?? "tsne";
  const recorded: Record<string, unknown> = {
    perplexity,
    early_exaggeration: params.early_exaggeration ?? 12,
    learning_rate: learningRate,
    n_jobs: params.n_jobs ?? ctx.threads,
    metric: "euclidean",
    n_components: 2,
  };
  if (params.use_rep != null) recorded.use_rep = params.use_rep;
  return {
    tables: {
      [ctx.table]: {
        obsm: { [obsmKey]: float32Matrix(res.embedding, rep.n, 2) },
        uns: { [unsKey]: unsFromJson({ params: recorded }) },
      },
    },
  };
}

/**
 * Cluster-level statistics over the spatial graph, stored as squidpy 1.8.3 stores them:
 * `nhood_enrichment` (uns `{cluster_key}_nhood_enrichment` with `zscore` and `count`),
 * `interaction_matrix` (uns `{cluster_key}_interactions`) and `centrality_scores` (uns
 * `{cluster_key}_centrality_scores`, a data frame by cluster).
 */
import type { DenseArray } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import { type Column, dataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import {
  averageClustering,
  groupCloseness,
  groupDegree,
  undirected,
} from "../../sdk/math/spatial/centrality.js";
import { interactionMatrix, nhoodEnrichment } from "../../sdk/math/spatial/nhood.js";
import { clusters, connectivitiesKey, needCategories, obspGraph, tableOf } from "./inputs.js";

/** A K × K float64 matrix value. */
function square(data: Float64Array, k: number): DenseArray<Float64Array> {
  return { kind: "dense", dtype: "float64", shape: [k, k], data };
}

/** Parameters of `nhood_enrichment`. */
export interface NhoodEnrichmentParams {
  /**
   * Categorical obs column of the clusters.
   * @widget obs_categorical
   * @maxLength 256
   */
  cluster_key: string;
  /**
   * Categorical obs column of libraries: labels are shuffled within each library only.
   * @widget obs_categorical
   */
  library_key?: string | null;
  /**
   * obsp key of the spatial graph (`spatial` → `spatial_connectivities`). Default `spatial_connectivities`.
   * @maxLength 256
   */
  connectivity_key?: string | null;
  /**
   * Permutations of the cluster labels.
   * @default 1000
   * @minimum 1
   * @maximum 100000
   * @asType integer
   */
  n_perms?: number;
  /**
   * Seed of the permutations.
   * @asType integer
   */
  seed?: number | null;
}

/**
 * Neighbourhood enrichment of clusters (squidpy's `gr.nhood_enrichment`): edge counts between each
 * pair of clusters and their z-scores against random relabellings of the cells.
 */
export async function nhood_enrichment(
  sd: SpatialData,
  params: NhoodEnrichmentParams,
  ctx: OpContext,
): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  const { codes, labels } = clusters(t, ctx.table, params.cluster_key);
  needCategories(labels, params.cluster_key, 2);
  if (codes.some((c) => c < 0)) {
    throw new Error(
      `nhood_enrichment: obs column "${params.cluster_key}" has missing values; every cell needs a cluster`,
    );
  }
  const g = await obspGraph(t, ctx.table, connectivitiesKey(params.connectivity_key));
  const libs = params.library_key ? clusters(t, ctx.table, params.library_key).codes : null;
  const nPerms = params.n_perms ?? 1000;
  const k = labels.length;
  ctx.log(`nhood_enrichment: ${k} clusters, ${nPerms} permutations on ${ctx.threads} thread(s)`);
  const r = await nhoodEnrichment(g, codes, k, {
    nPerms,
    seed: params.seed ?? 0,
    libraries: libs,
    threads: ctx.threads,
    signal: ctx.signal,
  });
  const count = Uint32Array.from(r.count);
  return {
    tables: {
      [ctx.table]: {
        uns: {
          [`${params.cluster_key}_nhood_enrichment`]: unsDict({
            zscore: square(r.zscore, k),
            count: { kind: "dense", dtype: "uint32", shape: [k, k], data: count },
          }),
        },
      },
    },
  };
}

/** Parameters of `interaction_matrix`. */
export interface InteractionMatrixParams {
  /**
   * Categorical obs column of the clusters.
   * @widget obs_categorical
   * @maxLength 256
   */
  cluster_key: string;
  /**
   * obsp key of the spatial graph. Default `spatial_connectivities`.
   * @maxLength 256
   */
  connectivity_key?: string | null;
  /**
   * Divide each row by its sum.
   * @default false
   */
  normalized?: boolean;
  /**
   * Sum the edge weights instead of counting edges.
   * @default false
   */
  weights?: boolean;
}

/**
 * Interaction matrix of clusters (squidpy's `gr.interaction_matrix`): edges from cluster a to cluster
 * b, cells without a cluster left out.
 */
export async function interaction_matrix(
  sd: SpatialData,
  params: InteractionMatrixParams,
  ctx: OpContext,
): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  const { codes, labels } = clusters(t, ctx.table, params.cluster_key);
  if (!codes.some((c) => c >= 0)) {
    throw new Error(`interaction_matrix: obs column "${params.cluster_key}" has no non-missing values`);
  }
  const g = await obspGraph(t, ctx.table, connectivitiesKey(params.connectivity_key));
  const k = labels.length;
  const m = interactionMatrix(g, codes, k, params.weights ?? false, params.normalized ?? false);
  return { tables: { [ctx.table]: { uns: { [`${params.cluster_key}_interactions`]: square(m, k) } } } };
}

/** A centrality measure. */
export type CentralityName = "degree_centrality" | "average_clustering" | "closeness_centrality";

/** Parameters of `centrality_scores`. */
export interface CentralityScoresParams {
  /**
   * Categorical obs column of the clusters.
   * @widget obs_categorical
   * @maxLength 256
   */
  cluster_key: string;
  /** Measures to compute (unset: all three, in squidpy's order). */
  score?: CentralityName | CentralityName[] | null;
  /**
   * obsp key of the spatial graph. Default `spatial_connectivities`.
   * @maxLength 256
   */
  connectivity_key?: string | null;
}

const ALL_SCORES: CentralityName[] = ["degree_centrality", "average_clustering", "closeness_centrality"];

/**
 * Centrality of each cluster in the spatial graph (squidpy's `gr.centrality_scores`): group degree
 * centrality, average clustering coefficient and group closeness centrality, as networkx defines them.
 */
export async function centrality_scores(
  sd: SpatialData,
  params: CentralityScoresParams,
  ctx: OpContext,
): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  const { codes, labels } = clusters(t, ctx.table, params.cluster_key);
  const g = undirected(await obspGraph(t, ctx.table, connectivitiesKey(params.connectivity_key)));
  const scores =
    params.score == null ? ALL_SCORES : Array.isArray(params.score) ? params.score : [params.score];
  const k = labels.length;
  const members: Int32Array[] = labels.map((_, c) => {
    const out: number[] = [];
    for (let i = 0; i < codes.length; i++) if (codes[i] === c) out.push(i);
    return Int32Array.from(out);
  });
  const columns: Record<string, Column> = {};
  for (const s of scores) {
    const v = new Float64Array(k);
    members.forEach((m, c) => {
      v[c] =
        s === "degree_centrality"
          ? groupDegree(g, m)
          : s === "average_clustering"
            ? averageClustering(g, m)
            : groupCloseness(g, m);
      ctx.signal.throwIfAborted();
    });
    columns[s] = { kind: "dense", dtype: "float64", shape: [k], data: v };
  }
  return {
    tables: {
      [ctx.table]: { uns: { [`${params.cluster_key}_centrality_scores`]: dataFrame(labels, columns) } },
    },
  };
}

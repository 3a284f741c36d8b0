/**
 * `gr.sepal`: spatially variable genes by simulated diffusion on a grid graph (Visium: hexagonal, 6
 * neighbours; ST: square, 4), stored as squidpy 1.8.3 stores it: uns `sepal_score`, a data frame of
 * genes sorted by score (highest first).
 */
import type { Change } from "../../sdk/data/change.js";
import { dataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { sepalGraph, sepalScores } from "../../sdk/math/spatial/sepal.js";
import { geneFeatures } from "./features.js";
import { obspGraph, spatialCoords, tableOf } from "./inputs.js";

/** Parameters of `sepal`. */
export interface SepalParams {
  /** Neighbours of a node inside the grid: 6 for hexagonal (Visium), 4 for square (ST, Dbit-seq). */
  max_neighs: 4 | 6;
  /**
   * Genes to score (unset: the `highly_variable` genes, else all).
   * @maxItems 50000
   */
  genes?: string | string[] | null;
  /**
   * Most diffusion steps per gene; a gene not converged by then scores NaN.
   * @default 30000
   * @minimum 1
   * @maximum 10000000
   * @asType integer
   */
  n_iter?: number;
  /**
   * Time step.
   * @default 0.001
   * @exclusiveMinimum 0
   */
  dt?: number;
  /**
   * Entropy change under which the diffusion counts as converged.
   * @default 1e-8
   * @exclusiveMinimum 0
   */
  thresh?: number;
  /**
   * obsp key of the grid graph (from `spatial_neighbors` with `coord_type` grid).
   * @default "spatial_connectivities"
   * @maxLength 256
   */
  connectivity_key?: string;
  /**
   * obsm key of the spatial coordinates.
   * @default "spatial"
   * @maxLength 256
   */
  spatial_key?: string;
  /** A layer instead of X. */
  layer?: string | null;
  /**
   * Read raw X (genes looked up in raw's var names) instead of X.
   * @default false
   */
  use_raw?: boolean;
}

/**
 * Sepal scores of genes (squidpy's `gr.sepal`): how long each gene's expression takes to diffuse to
 * equilibrium on the spot grid; spatially patterned genes take longer.
 */
export async function sepal(sd: SpatialData, params: SepalParams, ctx: OpContext): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  if (params.max_neighs !== 4 && params.max_neighs !== 6) {
    throw new Error(`sepal: max_neighs must be 4 or 6, got ${params.max_neighs}`);
  }
  const g = await obspGraph(t, ctx.table, params.connectivity_key ?? "spatial_connectivities");
  const { coords, dim } = await spatialCoords(t, ctx.table, params.spatial_key ?? "spatial");
  const graph = sepalGraph(g.indptr, g.indices, coords, dim, params.max_neighs);
  const genes = params.genes == null ? null : Array.isArray(params.genes) ? params.genes : [params.genes];
  const f = await geneFeatures(t, genes, params.layer ?? null, "sepal", params.use_raw ?? false);
  if (f.nFeatures === 0) throw new Error("sepal: no genes to score");
  const n = f.nCells;
  ctx.progress(0, "diffusion");
  const scores = await sepalScores(f.data, f.nFeatures, n, graph, {
    nIter: params.n_iter ?? 30000,
    dt: params.dt ?? 0.001,
    thresh: params.thresh ?? 1e-8,
    threads: ctx.threads,
    signal: ctx.signal,
  });
  const nan = Array.from(scores).filter(Number.isNaN).length;
  if (nan) ctx.log(`sepal: ${nan} gene(s) did not converge in n_iter steps (NaN); consider a larger n_iter`);
  const order = Array.from({ length: f.nFeatures }, (_, k) => k).sort((a, b) => {
    const va = scores[a] as number;
    const vb = scores[b] as number;
    if (Number.isNaN(va) || Number.isNaN(vb)) return Number.isNaN(va) ? (Number.isNaN(vb) ? 0 : 1) : -1;
    return vb - va;
  });
  const df = dataFrame(
    order.map((k) => f.names[k] as string),
    {
      sepal_score: {
        kind: "dense",
        dtype: "float64",
        shape: [order.length],
        data: Float64Array.from(order, (k) => scores[k] as number),
      },
    },
  );
  return { tables: { [ctx.table]: { uns: { sepal_score: df } } } };
}

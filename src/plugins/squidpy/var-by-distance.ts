/**
 * `tl.var_by_distance`: a design matrix of each cell's distance to the nearest cell of anchor
 * clusters, stored as squidpy 1.8.3 stores it: obsm `{design_matrix_key}`, a frame with the cluster
 * column, per anchor the distance min–max scaled to [0, 1] (`{anchor}`; cells of the anchor itself
 * NaN) and the raw distance (`{anchor}_raw`), then any covariates.
 */
import type { Change } from "../../sdk/data/change.js";
import { type Column, dataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { buildKdTree, kdKnnQuery } from "../../sdk/math/spatial/kdtree.js";
import { clusters, spatialCoords, tableOf } from "./inputs.js";

/** An anchor cluster. @maxLength 256 */
export type AnchorName = string;

/** Parameters of `var_by_distance`. */
export interface VarByDistanceParams {
  /**
   * Anchor cluster(s) of `cluster_key`: distances are to their nearest cell.
   * @maxItems 1000
   */
  groups: AnchorName | AnchorName[];
  /**
   * Categorical obs column the anchors are categories of.
   * @widget obs_categorical
   * @maxLength 256
   */
  cluster_key: string;
  /**
   * obsm key of the design matrix written.
   * @default "design_matrix"
   * @maxLength 256
   */
  design_matrix_key?: string;
  /**
   * obs columns copied into the design matrix.
   * @maxItems 1000
   */
  covariates?: string | string[] | null;
  /**
   * Distance metric (only euclidean is implemented).
   * @default "euclidean"
   */
  metric?: "euclidean";
  /**
   * obsm key of the spatial coordinates.
   * @default "spatial"
   * @widget obsm_key
   * @maxLength 256
   */
  spatial_key?: string;
}

/**
 * Distance of every cell to the nearest cell of anchor clusters (squidpy's `tl.var_by_distance`), as
 * a design matrix in obsm for modelling expression along those distances.
 */
export async function var_by_distance(
  sd: SpatialData,
  params: VarByDistanceParams,
  ctx: OpContext,
): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  const { codes, labels, column } = clusters(t, ctx.table, params.cluster_key);
  const anchors = Array.isArray(params.groups) ? params.groups : [params.groups];
  if (anchors.length === 0) throw new Error("var_by_distance: groups names no anchor cluster");
  const { coords, n, dim } = await spatialCoords(t, ctx.table, params.spatial_key ?? "spatial");
  const columns: Record<string, Column> = { [params.cluster_key]: column };
  for (const a of anchors) {
    const code = labels.indexOf(a);
    if (code < 0)
      throw new Error(`var_by_distance: "${a}" is not a category of obs column "${params.cluster_key}"`);
    const members: number[] = [];
    for (let i = 0; i < n; i++) if (codes[i] === code) members.push(i);
    if (members.length === 0) throw new Error(`var_by_distance: cluster "${a}" has no cells`);
    const pts = new Float64Array(members.length * dim);
    members.forEach((g, l) => {
      for (let d = 0; d < dim; d++) pts[l * dim + d] = coords[g * dim + d] as number;
    });
    const raw = kdKnnQuery(buildKdTree(pts, members.length, dim), coords, n, 1).distances;
    // squidpy: zero distances become NaN, the smallest remaining one 0, then min–max scaling.
    const scaled = Float64Array.from(raw, (v) => (v === 0 ? Number.NaN : v));
    let argmin = -1;
    for (let i = 0; i < n; i++)
      if (
        !Number.isNaN(scaled[i] as number) &&
        (argmin < 0 || (scaled[i] as number) < (scaled[argmin] as number))
      )
        argmin = i;
    if (argmin >= 0) scaled[argmin] = 0;
    let max = 0;
    for (let i = 0; i < n; i++)
      if (!Number.isNaN(scaled[i] as number)) max = Math.max(max, scaled[i] as number);
    for (let i = 0; i < n; i++) scaled[i] = max > 0 ? (scaled[i] as number) / max : (scaled[i] as number) * 0;
    columns[a] = { kind: "dense", dtype: "float64", shape: [n], data: scaled };
    columns[`${a}_raw`] = { kind: "dense", dtype: "float64", shape: [n], data: raw };
  }
  const cov =
    params.covariates == null
      ? []
      : Array.isArray(params.covariates)
        ? params.covariates
        : [params.covariates];
  for (const c of cov) {
    const col = Object.hasOwn(t.obs.columns, c) ? t.obs.columns[c] : undefined;
    if (!col) throw new Error(`var_by_distance: no obs column "${c}" (covariates)`);
    columns[c] = col;
  }
  const key = params.design_matrix_key ?? "design_matrix";
  return { tables: { [ctx.table]: { obsm: { [key]: dataFrame(t.obs.index, columns) } } } };
}

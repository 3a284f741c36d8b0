/**
 * `gr.spatial_neighbors`: a graph from spatial coordinates (kNN, radius, Delaunay, or Visium-like grid
 * rings), stored as squidpy 1.8.3 stores it: obsp `{key_added}_connectivities` (float32, 1 per edge),
 * obsp `{key_added}_distances` (float64) and uns `{key_added}_neighbors`.
 */
import type { SparseMatrix } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { type UnsValue, unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { type CsrGraph, type SpatialGraphOptions, spatialGraph } from "../../sdk/math/spatial/graph.js";
import { clusters, spatialCoords, tableOf } from "./inputs.js";

/** A [min, max] distance interval. @minItems 2 @maxItems 2 */
export type RadiusInterval = number[];

/** Parameters of `spatial_neighbors`. */
export interface SpatialNeighborsParams {
  /**
   * obsm key of the spatial coordinates.
   * @default "spatial"
   * @widget obsm_key
   */
  spatial_key?: string;
  /**
   * Categorical obs column of libraries (samples): one graph per library, no edges between them.
   * @widget obs_key
   */
  library_key?: string | null;
  /**
   * `grid` (Visium-like lattices: `n_neighs` nearest, rings), `generic` (kNN, radius or Delaunay).
   * Unset: `grid` when uns has a `spatial` entry (a Visium dataset), otherwise `generic`.
   */
  coord_type?: "grid" | "generic" | null;
  /**
   * Neighbours per point: the k of the kNN graph (generic), or the neighbouring tiles (grid; 6 for
   * Visium's hexagons, 4 for squares). Ignored with `delaunay` or `radius` (generic). Default 6.
   * @minimum 1
   * @maximum 1000
   * @asType integer
   */
  n_neighs?: number | null;
  /**
   * Generic only. A number: connect every point within this distance. An interval [min, max]:
   * build with max and keep edges with length in [min, max]; with `delaunay`, only an interval is
   * used (to prune the triangulation's edges), a number is ignored.
   */
  radius?: number | RadiusInterval | null;
  /**
   * Connect points by Delaunay triangulation (generic), or take the grid's base neighbours from it.
   * @default false
   */
  delaunay?: boolean | null;
  /**
   * Rings of neighbours (grid only): ring 2 holds the neighbours' neighbours, and so on; the
   * distances matrix holds each neighbour's ring number. Default 1.
   * @minimum 1
   * @maximum 100
   * @asType integer
   */
  n_rings?: number | null;
  /**
   * Generic only: drop edges longer than this percentile (0–100) of the distances.
   * @minimum 0
   * @maximum 100
   */
  percentile?: number | null;
  /** Transform of the connectivities: `spectral` (D^-1/2 A D^-1/2) or `cosine` (row cosine similarity). */
  transform?: "spectral" | "cosine" | null;
  /**
   * Put 1.0 on the connectivities' diagonal.
   * @default false
   */
  set_diag?: boolean;
  /**
   * Prefix of the keys written: obsp `{key_added}_connectivities`, `{key_added}_distances`, uns
   * `{key_added}_neighbors`.
   * @default "spatial"
   * @maxLength 256
   */
  key_added?: string;
}

/** A CsrGraph as an n × n SparseMatrix. */
export function graphMatrix(g: CsrGraph, dtype: "float32" | "float64"): SparseMatrix {
  return { kind: "csr", dtype, shape: [g.n, g.n], data: g.data, indices: g.indices, indptr: g.indptr };
}

/**
 * Build a spatial graph of the cells from their coordinates (squidpy's `gr.spatial_neighbors`): kNN
 * (default, 6 neighbours), radius, Delaunay, or grid rings for Visium spots.
 */
export async function spatial_neighbors(
  sd: SpatialData,
  params: SpatialNeighborsParams,
  ctx: OpContext,
): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  const spatialKey = params.spatial_key ?? "spatial";
  const { coords, n, dim } = await spatialCoords(t, ctx.table, spatialKey);
  const coordType = params.coord_type ?? (Object.hasOwn(t.uns.entries, "spatial") ? "grid" : "generic");
  const delaunay = params.delaunay ?? false;
  const radius = params.radius ?? null;
  if (Array.isArray(radius) && radius.length !== 2)
    throw new Error(`radius: an interval has 2 numbers, got ${radius.length}`);
  if (coordType === "generic" && delaunay && params.n_neighs != null) {
    ctx.log("spatial_neighbors: n_neighs is ignored when delaunay=True");
  }
  if (coordType === "grid" && radius != null)
    ctx.log("spatial_neighbors: radius is ignored for grid coordinates");
  const mode: SpatialGraphOptions["mode"] =
    coordType === "grid" ? "grid" : delaunay ? "delaunay" : radius != null ? "radius" : "knn";
  const interval = Array.isArray(radius) ? ([radius[0], radius[1]] as [number, number]) : null;
  const libs = params.library_key ? clusters(t, ctx.table, params.library_key) : null;
  const g = spatialGraph(coords, n, dim, {
    mode,
    nNeighs: params.n_neighs ?? 6,
    radius: mode === "delaunay" ? interval : mode === "radius" ? (interval ?? (radius as number)) : null,
    percentile: params.percentile ?? null,
    nRings: params.n_rings ?? 1,
    delaunay,
    setDiag: params.set_diag ?? false,
    transform: params.transform ?? null,
    ...(libs ? { libraries: libs.codes } : {}),
  });
  const key = params.key_added ?? "spatial";
  const transform = params.transform ?? null;
  const p: Record<string, UnsValue> =
    mode === "grid"
      ? {
          coord_type: "grid",
          n_neighbors: params.n_neighs ?? 6,
          n_rings: params.n_rings ?? 1,
          delaunay,
          transform,
        }
      : mode === "knn"
        ? { coord_type: "generic", n_neighbors: params.n_neighs ?? 6, transform }
        : {
            coord_type: "generic",
            radius: unsRadius(mode === "delaunay" ? interval : (interval ?? (radius as number))),
            transform,
          };
  const conns = `${key}_connectivities`;
  const dists = `${key}_distances`;
  ctx.log(`spatial_neighbors: ${mode} graph, ${g.connectivities.indices.length} edges over ${n} cells`);
  return {
    tables: {
      [ctx.table]: {
        obsp: {
          [conns]: graphMatrix(g.connectivities, "float32"),
          [dists]: graphMatrix(g.distances, "float64"),
        },
        uns: {
          [`${key}_neighbors`]: unsDict({
            connectivities_key: conns,
            distances_key: dists,
            params: unsDict(p),
          }),
        },
      },
    },
  };
}

/** The radius as squidpy stores it: a number, a 2-element list, or None (null). */
function unsRadius(r: number | readonly [number, number] | null): UnsValue {
  if (r == null) return null;
  if (typeof r === "number") return r;
  return { kind: "dense", dtype: "float64", shape: [2], data: Float64Array.from(r) };
}

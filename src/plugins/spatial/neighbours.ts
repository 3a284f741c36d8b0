/**
 * Spatial neighbour lists for the plugin's operations, from the shared k-d tree (`sdk/math/spatial`),
 * and the conversion of a spatial graph to the sparse matrix the Leiden kernel reads. Not an
 * operations module.
 */
import type { SparseMatrix } from "../../sdk/data/arrays.js";
import type { NeighbourLists } from "../../sdk/math/nearest-label.js";
import type { CsrGraph } from "../../sdk/math/spatial/graph.js";
import { buildKdTree, kdKnnSelf } from "../../sdk/math/spatial/kdtree.js";
import type { Coordinates } from "./inputs.js";

/** Each cell's `k` nearest other cells (fewer when there are fewer cells), ascending. */
export function neighbourLists(c: Coordinates, k: number): NeighbourLists {
  const kk = Math.max(1, Math.min(k, c.n - 1));
  const { indices, distances } = kdKnnSelf(buildKdTree(c.xy, c.n, c.dim), kk);
  return { k: kk, indices, distances };
}

/** A spatial graph's CSR as a table-style sparse matrix (shared arrays, no copy). */
export function graphMatrix(g: CsrGraph): SparseMatrix {
  return {
    kind: "csr",
    dtype: g.data instanceof Float32Array ? "float32" : "float64",
    shape: [g.n, g.n],
    data: g.data,
    indices: g.indices,
    indptr: g.indptr,
  };
}

/**
 * The Delaunay graph of 2-d points: two points are neighbours when they share a triangle edge of the
 * Delaunay triangulation (scipy's `Delaunay(coords).vertex_neighbor_vertices`, which squidpy's
 * `delaunay=True` reads). The triangulation is delaunator's (robust predicates); for points in
 * general position the Delaunay triangulation is unique, so the edges are the same as qhull's.
 * Duplicate points are left out of the triangulation by both and get no neighbours.
 */
import Delaunator from "delaunator";

/** Symmetric neighbour lists as CSR (columns ascending, no self), with euclidean edge lengths. */
export interface DelaunayGraph {
  readonly indptr: Int32Array;
  readonly indices: Int32Array;
  readonly distances: Float64Array;
}

/**
 * Delaunay neighbours of `n` 2-d points (x, y interleaved). Throws when the points do not span a
 * plane (fewer than three, or all on one line), as qhull does.
 */
export function delaunayNeighbors(points: ArrayLike<number>, n: number): DelaunayGraph {
  const coords = new Float64Array(2 * n);
  for (let i = 0; i < 2 * n; i++) {
    const v = points[i] as number;
    if (!Number.isFinite(v)) {
      throw new Error(`Delaunay: coordinate ${i % 2} of point ${i >> 1} is ${v}, not a finite number`);
    }
    coords[i] = v;
  }
  if (n < 3) throw new Error(`Delaunay: need at least 3 points to triangulate, got ${n}`);
  const d = new Delaunator(coords);
  const { triangles, halfedges } = d;
  if (triangles.length === 0) {
    throw new Error("Delaunay: the points all lie on one line; there is no triangulation");
  }
  // Every undirected edge once: a half-edge whose twin has a larger id, or which is on the hull.
  const degree = new Int32Array(n + 1);
  const m = triangles.length;
  for (let e = 0; e < m; e++) {
    const twin = halfedges[e] as number;
    if (twin !== -1 && twin < e) continue;
    const a = triangles[e] as number;
    const b = triangles[e % 3 === 2 ? e - 2 : e + 1] as number;
    degree[a + 1]++;
    degree[b + 1]++;
  }
  const indptr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) indptr[i + 1] = (indptr[i] as number) + (degree[i + 1] as number);
  const fill = indptr.slice(0, n);
  const indices = new Int32Array(indptr[n] as number);
  for (let e = 0; e < m; e++) {
    const twin = halfedges[e] as number;
    if (twin !== -1 && twin < e) continue;
    const a = triangles[e] as number;
    const b = triangles[e % 3 === 2 ? e - 2 : e + 1] as number;
    indices[fill[a]++] = b;
    indices[fill[b]++] = a;
  }
  const distances = new Float64Array(indices.length);
  for (let i = 0; i < n; i++) {
    const s = indptr[i] as number;
    const e = indptr[i + 1] as number;
    indices.subarray(s, e).sort();
    const x = coords[2 * i] as number;
    const y = coords[2 * i + 1] as number;
    for (let p = s; p < e; p++) {
      const j = indices[p] as number;
      const dx = x - (coords[2 * j] as number);
      const dy = y - (coords[2 * j + 1] as number);
      distances[p] = Math.sqrt(dx * dx + dy * dy);
    }
  }
  return { indptr, indices, distances };
}

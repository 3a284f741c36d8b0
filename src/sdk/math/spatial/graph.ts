/**
 * Spatial neighbour graphs from coordinates, as squidpy 1.8.3's graph builders make them
 * (`squidpy.gr.neighbors`: KNNBuilder, RadiusBuilder, DelaunayBuilder, GridBuilder and their
 * post-processors), so that `gr.spatial_neighbors` gives the same edges and distances:
 *
 * - `knn`: each point's `nNeighs` nearest other points (directed; not symmetrised).
 * - `radius`: every other point within `radius` (≤); a `[min, max]` interval builds with max and
 *   keeps edges whose length lies in the interval.
 * - `delaunay`: Delaunay triangulation edges (2-d only); an interval prunes them afterwards.
 * - `grid` (Visium-like lattices): `nNeighs` nearest, kept when shorter than 1.3 × the median of all
 *   those distances (or the Delaunay edges with `delaunay`), then rings: the distance matrix holds
 *   each neighbour's ring number (1, 2, … `nRings`), not a length.
 *
 * Then, for generic coordinates, `percentile` drops edges longer than that percentile of the
 * distances; `transform` rescales the connectivities. Connectivities are 1.0 per edge (float32), the
 * diagonal only with `setDiag`; distances are float64 with no diagonal and no zero-length entries.
 * With `libraries` each library gets its own graph (block diagonal; no edge between libraries).
 */
import { allocArray } from "../../data/arrays.js";
import { delaunayNeighbors } from "./delaunay.js";
import { cosineTransform, spectralTransform } from "./graph-transform.js";
import { gridKnnSelf } from "./grid-knn.js";
import { buildKdTree, kdKnnSelf, kdRadiusSelf } from "./kdtree.js";

/** A square CSR matrix with sorted columns (the arrays are on shared memory where available). */
export interface CsrGraph<T extends Float32Array | Float64Array = Float32Array | Float64Array> {
  readonly n: number;
  readonly indptr: Int32Array;
  readonly indices: Int32Array;
  readonly data: T;
}

/** How to connect points. */
export type SpatialGraphMode = "knn" | "radius" | "delaunay" | "grid";

/** squidpy's adjacency transforms. */
export type SpatialTransform = "spectral" | "cosine" | null;

/** Options of `spatialGraph`. */
export interface SpatialGraphOptions {
  readonly mode: SpatialGraphMode;
  /** Neighbours per point for `knn` and `grid` (default 6). */
  readonly nNeighs?: number;
  /**
   * `radius`: the radius (or a [min, max] interval: build with max, keep lengths in the interval).
   * `delaunay`: only an interval is used, to prune edges (a number is ignored, as in squidpy's
   * `spatial_neighbors`; pass [0, r] to keep edges ≤ r).
   */
  readonly radius?: number | readonly [number, number] | null;
  /** Drop edges longer than this percentile (0–100) of the distances (generic modes only). */
  readonly percentile?: number | null;
  /** Rings of neighbours for `grid` (default 1). */
  readonly nRings?: number;
  /** `grid`: take the base neighbours from a Delaunay triangulation instead of kNN. */
  readonly delaunay?: boolean;
  /** Put 1.0 on the diagonal of the connectivities. */
  readonly setDiag?: boolean;
  readonly transform?: SpatialTransform;
  /**
   * Library of each point (codes 0…nLibraries−1, e.g. a categorical's codes): a separate graph per
   * library. Points with a negative code get no edges.
   */
  readonly libraries?: ArrayLike<number>;
}

/** The graph: connectivities (float32) and distances (float64). */
export interface SpatialGraph {
  readonly connectivities: CsrGraph<Float32Array>;
  readonly distances: CsrGraph<Float64Array>;
}

/** Directed edges of one build, before post-processing: row-sorted CSR, no self entries. */
interface RawEdges {
  readonly indptr: Int32Array;
  readonly indices: Int32Array;
  /** Euclidean length (generic modes) or ring number (grid). */
  readonly dist: Float64Array;
}

/**
 * Build a spatial graph over `n` points of `dim` coordinates (row-major float64, usually obsm
 * `spatial`). Errors name what was wrong (a bad parameter, a non-finite coordinate, a Delaunay on
 * points in a line).
 */
export function spatialGraph(
  points: ArrayLike<number>,
  n: number,
  dim: number,
  opts: SpatialGraphOptions,
): SpatialGraph {
  checkOptions(opts, dim);
  if (points.length < n * dim)
    throw new Error(`spatial graph: ${points.length} coordinates are fewer than ${n} × ${dim}`);
  if (!opts.libraries) return finish(buildOne(points, n, dim, opts), n, opts);
  const libs = opts.libraries;
  if (libs.length !== n) throw new Error(`spatial graph: ${libs.length} library codes for ${n} points`);
  // Points of each library in ascending order; built separately, then put back in place.
  let nLib = 0;
  for (let i = 0; i < n; i++) nLib = Math.max(nLib, (libs[i] as number) + 1);
  const members: number[][] = Array.from({ length: nLib }, () => []);
  for (let i = 0; i < n; i++) {
    const c = libs[i] as number;
    if (c >= 0) (members[c] as number[]).push(i);
  }
  const parts: { ids: number[]; g: SpatialGraph }[] = [];
  for (const ids of members) {
    if (ids.length === 0) continue;
    const sub = new Float64Array(ids.length * dim);
    ids.forEach((g, l) => {
      for (let a = 0; a < dim; a++) sub[l * dim + a] = points[g * dim + a] as number;
    });
    parts.push({ ids, g: finish(buildOne(sub, ids.length, dim, opts), ids.length, opts) });
  }
  return {
    connectivities: scatterBlocks(
      parts.map((p) => ({ ids: p.ids, m: p.g.connectivities })),
      n,
      "float32",
    ) as CsrGraph<Float32Array>,
    distances: scatterBlocks(
      parts.map((p) => ({ ids: p.ids, m: p.g.distances })),
      n,
      "float64",
    ) as CsrGraph<Float64Array>,
  };
}

function checkOptions(o: SpatialGraphOptions, dim: number): void {
  const k = o.nNeighs ?? 6;
  if (!Number.isInteger(k) || k < 1) throw new Error(`n_neighs must be a positive integer, got ${k}`);
  const rings = o.nRings ?? 1;
  if (!Number.isInteger(rings) || rings < 1)
    throw new Error(`n_rings must be a positive integer, got ${rings}`);
  if (o.percentile != null && !(o.percentile >= 0 && o.percentile <= 100)) {
    throw new Error(`percentile must lie in [0, 100], got ${o.percentile}`);
  }
  if (o.mode === "grid" && o.percentile != null) {
    throw new Error("percentile is not supported for grid coordinates; it only applies to generic graphs");
  }
  if (o.mode === "radius") {
    const r = o.radius;
    if (r == null) throw new Error("radius mode needs a radius");
    const vals = typeof r === "number" ? [r] : [...r];
    if (vals.some((v) => !(Number.isFinite(v) && v >= 0))) {
      throw new Error(`radius must be finite and ≥ 0, got ${JSON.stringify(r)}`);
    }
  }
  if ((o.mode === "delaunay" || (o.mode === "grid" && o.delaunay)) && dim !== 2) {
    throw new Error(`Delaunay graphs need 2-d coordinates, got ${dim}-d`);
  }
}

/** The interval of a radius option, sorted, or null. */
function interval(r: SpatialGraphOptions["radius"]): [number, number] | null {
  if (r == null || typeof r === "number") return null;
  const [a, b] = r;
  return a <= b ? [a, b] : [b, a];
}

function buildOne(points: ArrayLike<number>, n: number, dim: number, o: SpatialGraphOptions): RawEdges {
  if (n === 0) return { indptr: new Int32Array(1), indices: new Int32Array(0), dist: new Float64Array(0) };
  switch (o.mode) {
    case "knn":
      return knnEdges(points, n, dim, o.nNeighs ?? 6);
    case "radius": {
      const r = o.radius as number | readonly [number, number];
      const t = buildKdTree(points, n, dim);
      const g = kdRadiusSelf(t, typeof r === "number" ? r : Math.max(r[0], r[1]));
      return { indptr: g.indptr, indices: g.indices, dist: g.distances };
    }
    case "delaunay": {
      const g = delaunayNeighbors(points, n);
      return { indptr: g.indptr, indices: g.indices, dist: g.distances };
    }
    case "grid":
      return gridEdges(points, n, dim, o);
  }
}

/** kNN edges (k per row, fewer when there are fewer other points), rows sorted by column. */
function knnEdges(points: ArrayLike<number>, n: number, dim: number, k: number): RawEdges {
  const { indices: nbr, distances } = knnSelf(points, n, dim, k);
  return rowsFromDense(nbr, distances, n, k, () => true);
}

/** Exact kNN of every point (itself left out): a bucket grid in 2-d, a k-d tree otherwise. */
function knnSelf(points: ArrayLike<number>, n: number, dim: number, k: number) {
  return dim === 2 ? gridKnnSelf(points, n, k) : kdKnnSelf(buildKdTree(points, n, dim), k);
}

/** CSR (columns sorted) from n × k neighbour lists, keeping entries where `keep(distance)`. */
function rowsFromDense(
  nbr: Int32Array,
  dists: Float64Array,
  n: number,
  k: number,
  keep: (d: number) => boolean,
): RawEdges {
  const indptr = new Int32Array(n + 1);
  const indices = new Int32Array(n * k);
  const dist = new Float64Array(n * k);
  let w = 0;
  for (let i = 0; i < n; i++) {
    const start = w;
    for (let j = 0; j < k; j++) {
      const col = nbr[i * k + j] as number;
      const d = dists[i * k + j] as number;
      if (col < 0 || !keep(d)) continue;
      // Insertion by column: k is small (a handful of neighbours).
      let p = w++;
      while (p > start && (indices[p - 1] as number) > col) {
        indices[p] = indices[p - 1] as number;
        dist[p] = dist[p - 1] as number;
        p--;
      }
      indices[p] = col;
      dist[p] = d;
    }
    indptr[i + 1] = w;
  }
  return { indptr, indices: indices.slice(0, w), dist: dist.slice(0, w) };
}

/** numpy's median (mean of the two middle values for an even count). */
function median(values: Float64Array): number {
  const s = Float64Array.from(values).sort();
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Grid base adjacency, then rings by breadth-first distance; `dist` holds ring numbers. */
function gridEdges(points: ArrayLike<number>, n: number, dim: number, o: SpatialGraphOptions): RawEdges {
  let base: RawEdges;
  if (o.delaunay) {
    const g = delaunayNeighbors(points, n);
    base = { indptr: g.indptr, indices: g.indices, dist: new Float64Array(g.indices.length).fill(1) };
  } else {
    const k = o.nNeighs ?? 6;
    const { indices: nbr, distances } = knnSelf(points, n, dim, k);
    const present = distances.filter((d) => Number.isFinite(d));
    const cutoff = median(present) * 1.3;
    base = rowsFromDense(nbr, distances, n, k, (d) => d < cutoff);
    base.dist.fill(1);
  }
  const rings = o.nRings ?? 1;
  if (rings === 1) return base;
  // Ring r holds the points first reached in r steps along the (directed) base edges.
  const ring = new Int32Array(n);
  const indptr = new Int32Array(n + 1);
  const cols: number[] = [];
  const dist: number[] = [];
  let frontier: number[] = [];
  let next: number[] = [];
  const touched: number[] = [];
  for (let i = 0; i < n; i++) {
    ring[i] = -1;
    touched.push(i);
    frontier = [i];
    for (let r = 1; r <= rings; r++) {
      next = [];
      for (const u of frontier) {
        for (let p = base.indptr[u] as number; p < (base.indptr[u + 1] as number); p++) {
          const v = base.indices[p] as number;
          if (ring[v] !== 0) continue;
          ring[v] = r;
          touched.push(v);
          next.push(v);
        }
      }
      frontier = next;
      if (frontier.length === 0) break;
    }
    const found = touched.filter((v) => v !== i).sort((a, b) => a - b);
    for (const v of found) {
      cols.push(v);
      dist.push(ring[v] as number);
    }
    for (const v of touched) ring[v] = 0;
    touched.length = 0;
    indptr[i + 1] = cols.length;
  }
  return { indptr, indices: Int32Array.from(cols), dist: Float64Array.from(dist) };
}

/** numpy's default (linear) percentile of `values`. */
function percentileOf(values: Float64Array, q: number): number {
  const s = Float64Array.from(values).sort();
  if (s.length === 0) return Number.NaN;
  const pos = ((s.length - 1) * q) / 100;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, s.length - 1);
  const f = pos - lo;
  const a = s[lo] as number;
  const b = s[hi] as number;
  // numpy's _lerp: a + (b − a)·f, computed from the upper end when f ≥ 0.5.
  return f >= 0.5 ? b - (b - a) * (1 - f) : a + (b - a) * f;
}

/** squidpy's post-processing: interval, percentile, diagonal, zero elimination, transform. */
function finish(raw: RawEdges, n: number, o: SpatialGraphOptions): SpatialGraph {
  const m = raw.indices.length;
  const keep = new Uint8Array(m).fill(1);
  // Removed edges keep a stored zero distance until squidpy's eliminate_zeros, and the percentile
  // sees those zeros and the n zeros that setdiag(0.0) stored on the diagonal.
  const zeroed = new Uint8Array(m);
  const iv = o.mode === "grid" ? null : interval(o.radius);
  if (iv) {
    for (let e = 0; e < m; e++) {
      const d = raw.dist[e] as number;
      if (d < iv[0] || d > iv[1]) {
        keep[e] = 0;
        zeroed[e] = 1;
      }
    }
  }
  if (o.percentile != null && o.mode !== "grid") {
    const vals = new Float64Array(m + n);
    for (let e = 0; e < m; e++) vals[e] = zeroed[e] ? 0 : (raw.dist[e] as number);
    const threshold = percentileOf(vals, o.percentile);
    for (let e = 0; e < m; e++) if (!zeroed[e] && (raw.dist[e] as number) > threshold) keep[e] = 0;
  }
  const setDiag = o.setDiag ?? false;
  const cIndptr = allocArray("int32", n + 1) as Int32Array;
  const dIndptr = allocArray("int32", n + 1) as Int32Array;
  let nc = 0;
  let nd = 0;
  for (let i = 0; i < n; i++) {
    for (let e = raw.indptr[i] as number; e < (raw.indptr[i + 1] as number); e++) {
      if (!keep[e]) continue;
      nc++;
      if ((raw.dist[e] as number) !== 0) nd++;
    }
    if (setDiag) nc++;
    cIndptr[i + 1] = nc;
    dIndptr[i + 1] = nd;
  }
  const cIdx = allocArray("int32", nc) as Int32Array;
  const cData = allocArray("float32", nc) as Float32Array;
  const dIdx = allocArray("int32", nd) as Int32Array;
  const dData = allocArray("float64", nd) as Float64Array;
  let wc = 0;
  let wd = 0;
  for (let i = 0; i < n; i++) {
    let diagDone = !setDiag;
    for (let e = raw.indptr[i] as number; e < (raw.indptr[i + 1] as number); e++) {
      if (!keep[e]) continue;
      const j = raw.indices[e] as number;
      if (!diagDone && j > i) {
        cIdx[wc] = i;
        cData[wc++] = 1;
        diagDone = true;
      }
      cIdx[wc] = j;
      cData[wc++] = 1;
      const d = raw.dist[e] as number;
      if (d !== 0) {
        dIdx[wd] = j;
        dData[wd++] = d;
      }
    }
    if (!diagDone) {
      cIdx[wc] = i;
      cData[wc++] = 1;
    }
  }
  let connectivities: CsrGraph<Float32Array> = { n, indptr: cIndptr, indices: cIdx, data: cData };
  if (o.transform === "spectral") connectivities = spectralTransform(connectivities);
  else if (o.transform === "cosine") connectivities = cosineTransform(connectivities);
  return { connectivities, distances: { n, indptr: dIndptr, indices: dIdx, data: dData } };
}

/** One n × n CSR from per-library blocks (local indices mapped to the points' own). */
function scatterBlocks(
  blocks: { ids: number[]; m: CsrGraph }[],
  n: number,
  dtype: "float32" | "float64",
): CsrGraph {
  const counts = new Int32Array(n + 1);
  for (const { ids, m } of blocks) {
    ids.forEach((g, l) => {
      counts[g + 1] = (m.indptr[l + 1] as number) - (m.indptr[l] as number);
    });
  }
  const indptr = allocArray("int32", n + 1) as Int32Array;
  for (let i = 0; i < n; i++) indptr[i + 1] = (indptr[i] as number) + (counts[i + 1] as number);
  const nnz = indptr[n] as number;
  const indices = allocArray("int32", nnz) as Int32Array;
  const data = allocArray(dtype, nnz) as Float32Array | Float64Array;
  for (const { ids, m } of blocks) {
    ids.forEach((g, l) => {
      let w = indptr[g] as number;
      // ids ascend, so mapped columns stay sorted.
      for (let p = m.indptr[l] as number; p < (m.indptr[l + 1] as number); p++) {
        indices[w] = ids[m.indices[p] as number] as number;
        data[w++] = m.data[p] as number;
      }
    });
  }
  return { n, indptr, indices, data };
}

/**
 * Distance from every point to the nearest point of each label — the question behind proximity
 * tests and region margins, asked again for every label permutation.
 *
 * Each point's K nearest neighbours are found once (`kdKnnSelf`), sorted by distance; under any
 * labelling, the first neighbour carrying label b is the nearest b-point, provided one is among the
 * K. Labels not met in the list (rare ones) are looked up exactly, in one batch per label, in a k-d
 * tree over that label's points (`kdKnnQuery`), built only when needed. So a permutation costs about n·K label reads, not n·L tree searches.
 */
import { buildKdTree, kdKnnQuery } from "./spatial/kdtree.js";

/** Each point's K nearest other points, ascending (as `kdKnnSelf` returns them; −1 pads). */
export interface NeighbourLists {
  readonly k: number;
  readonly indices: Int32Array;
  readonly distances: Float64Array;
}

/**
 * For every point i and label b (0…nLabels−1), the distance from i to the nearest other point
 * labelled b, into `out` (n × nLabels, row-major); Infinity when no other point has label b. Points
 * with a negative label still get their distances; they are never anyone's neighbour of a label.
 */
export function nearestByLabel(
  coords: Float64Array,
  n: number,
  dim: number,
  labels: ArrayLike<number>,
  nLabels: number,
  lists: NeighbourLists,
  out: Float64Array = new Float64Array(n * nLabels),
): Float64Array {
  const { k, indices, distances } = lists;
  const size = new Int32Array(nLabels);
  for (let i = 0; i < n; i++) {
    const b = labels[i]!;
    if (b >= 0) size[b]!++;
  }
  const seen = new Int32Array(nLabels).fill(-1);
  // Pairs (cell, label) the lists did not settle, gathered per label for one batch query each.
  const missing: number[][] = Array.from({ length: nLabels }, () => []);
  for (let i = 0; i < n; i++) {
    const own = labels[i]!;
    // Labels with another member than i: how many to find.
    let want = 0;
    for (let b = 0; b < nLabels; b++) {
      const others = size[b]! - (b === own ? 1 : 0);
      if (others > 0) want++;
      else out[i * nLabels + b] = Number.POSITIVE_INFINITY;
    }
    let found = 0;
    for (let j = 0; j < k && found < want; j++) {
      const nb = indices[i * k + j]!;
      if (nb < 0) break;
      const b = labels[nb]!;
      if (b < 0 || seen[b] === i) continue;
      seen[b] = i;
      out[i * nLabels + b] = distances[i * k + j]!;
      found++;
    }
    if (found === want) continue;
    for (let b = 0; b < nLabels; b++)
      if (seen[b] !== i && size[b]! - (b === own ? 1 : 0) > 0) missing[b]!.push(i);
  }
  for (let b = 0; b < nLabels; b++) {
    const queries = missing[b]!;
    if (queries.length === 0) continue;
    const ids = new Int32Array(size[b]!);
    let m = 0;
    for (let i = 0; i < n; i++) if (labels[i] === b) ids[m++] = i;
    const pts = new Float64Array(m * dim);
    for (let j = 0; j < m; j++) for (let a = 0; a < dim; a++) pts[j * dim + a] = coords[ids[j]! * dim + a]!;
    const q = new Float64Array(queries.length * dim);
    queries.forEach((i, r) => {
      for (let a = 0; a < dim; a++) q[r * dim + a] = coords[i * dim + a]!;
    });
    // Two nearest, so that a query of label b can skip itself.
    const kk = Math.min(2, m);
    const res = kdKnnQuery(buildKdTree(pts, m, dim), q, queries.length, kk);
    queries.forEach((i, r) => {
      let d = Number.POSITIVE_INFINITY;
      for (let j = 0; j < kk; j++) {
        const local = res.indices[r * kk + j]!;
        if (local >= 0 && ids[local] !== i) {
          d = res.distances[r * kk + j]!;
          break;
        }
      }
      out[i * nLabels + b] = d;
    });
  }
  return out;
}

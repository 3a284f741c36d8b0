/**
 * Distance from every point to the nearest point of each label — the question behind proximity
 * tests and region margins, asked again for every label permutation.
 *
 * Each point's K nearest neighbours are found once (`kdKnnSelf`), sorted by distance; under any
 * labelling, the first neighbour carrying label b is the nearest b-point, provided one is among the
 * K. Labels not met in the list (rare ones) are looked up exactly in a k-d tree over that label's
 * points, built only when needed. So a permutation costs about n·K label reads, not n·L tree searches.
 */
import { buildKdTree, type KdTree } from "./spatial/kdtree.js";

/**
 * Ranges of a `buildKdTree` tree this small were left unsplit (its `LEAF_SIZE`); a search must scan
 * them whole. The nearest-query test against brute force catches a change of the tree's layout.
 */
const TREE_LEAF = 16;

/**
 * The nearest tree point to query `q[qo…qo+dim)` other than original id `exclude` (−1: none
 * excluded): returns its original id (−1 when the tree holds no other point) and writes the squared
 * distance to `d2[0]`.
 */
export function kdNearest(
  t: KdTree,
  q: ArrayLike<number>,
  qo: number,
  exclude: number,
  d2: Float64Array,
  stack: Int32Array = new Int32Array(3 * 128),
  bound: Float64Array = new Float64Array(128),
): number {
  const { n, dim, ids, coords } = t;
  let best = Number.POSITIVE_INFINITY;
  let bestId = -1;
  let sp = 0;
  stack[0] = 0;
  stack[1] = n;
  stack[2] = 0;
  bound[0] = 0;
  sp = 3;
  while (sp > 0) {
    sp -= 3;
    const lo = stack[sp]!;
    const hi = stack[sp + 1]!;
    const axis = stack[sp + 2]!;
    if (bound[sp / 3]! > best) continue;
    // Points to offer: the whole range at a leaf, else the splitting point m.
    const leaf = hi - lo <= TREE_LEAF;
    const m = (lo + hi) >> 1;
    for (let p = leaf ? lo : m, end = leaf ? hi : m + 1; p < end; p++) {
      const id = ids[p]!;
      if (id === exclude) continue;
      let s2 = 0;
      for (let a = 0; a < dim; a++) {
        const u = q[qo + a]! - coords[p * dim + a]!;
        s2 += u * u;
      }
      if (s2 < best || (s2 === best && id < bestId)) {
        best = s2;
        bestId = id;
      }
    }
    if (leaf) continue;
    const diff = q[qo + axis]! - coords[m * dim + axis]!;
    const next = (axis + 1) % dim;
    const b = bound[sp / 3]!;
    // Far side first on the stack, so the near side is searched first.
    stack[sp] = diff <= 0 ? m + 1 : lo;
    stack[sp + 1] = diff <= 0 ? hi : m;
    stack[sp + 2] = next;
    bound[sp / 3] = Math.max(b, diff * diff);
    sp += 3;
    stack[sp] = diff <= 0 ? lo : m + 1;
    stack[sp + 1] = diff <= 0 ? m : hi;
    stack[sp + 2] = next;
    bound[sp / 3] = b;
    sp += 3;
  }
  d2[0] = best;
  return bestId;
}

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
  const trees: (KdTree | null)[] = new Array(nLabels).fill(null);
  const members: (Int32Array | null)[] = new Array(nLabels).fill(null);
  const treeOf = (b: number): KdTree => {
    let t = trees[b];
    if (!t) {
      const ids = new Int32Array(size[b]!);
      let m = 0;
      for (let i = 0; i < n; i++) if (labels[i] === b) ids[m++] = i;
      const pts = new Float64Array(ids.length * dim);
      for (let j = 0; j < ids.length; j++)
        for (let a = 0; a < dim; a++) pts[j * dim + a] = coords[ids[j]! * dim + a]!;
      t = buildKdTree(pts, ids.length, dim);
      trees[b] = t;
      members[b] = ids;
    }
    return t;
  };
  const seen = new Int32Array(nLabels).fill(-1);
  const d2 = new Float64Array(1);
  const stack = new Int32Array(3 * 128);
  const bound = new Float64Array(128);
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
    for (let b = 0; b < nLabels; b++) {
      if (seen[b] === i || size[b]! - (b === own ? 1 : 0) <= 0) continue;
      const t = treeOf(b);
      const local = kdNearest(
        t,
        coords,
        i * dim,
        b === own ? localIndex(members[b]!, i) : -1,
        d2,
        stack,
        bound,
      );
      out[i * nLabels + b] = local < 0 ? Number.POSITIVE_INFINITY : Math.sqrt(d2[0]!);
    }
  }
  return out;
}

/** Position of point i among a label's ascending member list (binary search). */
function localIndex(ids: Int32Array, i: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = ids[mid]!;
    if (v === i) return mid;
    if (v < i) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * An exact k-d tree over low-dimensional float64 points (spatial coordinates: 2-d or 3-d), for
 * k-nearest-neighbour and fixed-radius queries. The tree is implicit, as in kdbush: the points are
 * reordered so that every range [lo, hi) splits at its middle on one axis (axes alternate with
 * depth), so the tree costs one index array and one copy of the coordinates in tree order (read
 * contiguously while searching), nothing per node.
 */

/** Ranges this small are scanned point by point instead of split further. */
const LEAF_SIZE = 16;

/** A built tree; build it with `buildKdTree`. */
export interface KdTree {
  /** Number of points. */
  readonly n: number;
  /** Coordinates per point. */
  readonly dim: number;
  /** Original index of the point at each tree position. */
  readonly ids: Int32Array;
  /** Coordinates in tree order (n × dim, row-major). */
  readonly coords: Float64Array;
}

/** Partially sort positions [lo, hi] so the k-th is in place on `axis` (Floyd–Rivest select). */
function select(
  ids: Int32Array,
  c: Float64Array,
  dim: number,
  k: number,
  lo: number,
  hi: number,
  axis: number,
) {
  while (hi > lo) {
    if (hi - lo > 600) {
      const n = hi - lo + 1;
      const m = k - lo + 1;
      const z = Math.log(n);
      const s = 0.5 * Math.exp((2 * z) / 3);
      const sd = 0.5 * Math.sqrt((z * s * (n - s)) / n) * (m - n / 2 < 0 ? -1 : 1);
      const newLo = Math.max(lo, Math.floor(k - (m * s) / n + sd));
      const newHi = Math.min(hi, Math.floor(k + ((n - m) * s) / n + sd));
      select(ids, c, dim, k, newLo, newHi, axis);
    }
    const t = c[k * dim + axis] as number;
    let i = lo;
    let j = hi;
    swap(ids, c, dim, lo, k);
    if ((c[hi * dim + axis] as number) > t) swap(ids, c, dim, lo, hi);
    while (i < j) {
      swap(ids, c, dim, i, j);
      i++;
      j--;
      while ((c[i * dim + axis] as number) < t) i++;
      while ((c[j * dim + axis] as number) > t) j--;
    }
    if (c[lo * dim + axis] === t) swap(ids, c, dim, lo, j);
    else {
      j++;
      swap(ids, c, dim, j, hi);
    }
    if (j <= k) lo = j + 1;
    if (k <= j) hi = j - 1;
  }
}

function swap(ids: Int32Array, c: Float64Array, dim: number, i: number, j: number): void {
  const t = ids[i] as number;
  ids[i] = ids[j] as number;
  ids[j] = t;
  for (let a = 0; a < dim; a++) {
    const u = c[i * dim + a] as number;
    c[i * dim + a] = c[j * dim + a] as number;
    c[j * dim + a] = u;
  }
}

function sortRange(
  ids: Int32Array,
  c: Float64Array,
  dim: number,
  lo: number,
  hi: number,
  axis: number,
): void {
  if (hi - lo <= LEAF_SIZE) return;
  const m = (lo + hi) >> 1;
  select(ids, c, dim, m, lo, hi - 1, axis);
  const next = (axis + 1) % dim;
  sortRange(ids, c, dim, lo, m, next);
  sortRange(ids, c, dim, m + 1, hi, next);
}

/**
 * Build the tree over `n` points of `dim` coordinates (row-major). Throws on a coordinate that is not
 * finite (NaN would break the ordering the search relies on).
 */
export function buildKdTree(points: ArrayLike<number>, n: number, dim: number): KdTree {
  if (!(dim >= 1)) throw new Error(`k-d tree: need at least one coordinate per point (got ${dim})`);
  if (points.length < n * dim)
    throw new Error(`k-d tree: ${points.length} values are fewer than ${n} × ${dim}`);
  const coords = new Float64Array(n * dim);
  for (let i = 0; i < n * dim; i++) {
    const v = points[i] as number;
    if (!Number.isFinite(v)) {
      throw new Error(
        `k-d tree: coordinate ${i % dim} of point ${Math.floor(i / dim)} is ${v}, not a finite number`,
      );
    }
    coords[i] = v;
  }
  const ids = new Int32Array(n);
  for (let i = 0; i < n; i++) ids[i] = i;
  sortRange(ids, coords, dim, 0, n, 0);
  return { n, dim, ids, coords };
}

/** Squared distance from query q (in `qc` at `qo`) to tree position p. */
function sqDist(t: KdTree, qc: ArrayLike<number>, qo: number, p: number): number {
  const { coords, dim } = t;
  if (dim === 2) {
    const dx = (qc[qo] as number) - (coords[2 * p] as number);
    const dy = (qc[qo + 1] as number) - (coords[2 * p + 1] as number);
    return dx * dx + dy * dy;
  }
  let s = 0;
  for (let a = 0; a < dim; a++) {
    const u = (qc[qo + a] as number) - (coords[p * dim + a] as number);
    s += u * u;
  }
  return s;
}

/**
 * The `k` nearest neighbours of every point, the point itself left out (scikit-learn's
 * `NearestNeighbors.kneighbors()` without a query), by ascending distance; equal distances in
 * ascending index. Returns n × k original indices and euclidean distances; a row has −1 and
 * Infinity past the end when there are fewer than k other points.
 */
export function kdKnnSelf(t: KdTree, k: number): { indices: Int32Array; distances: Float64Array } {
  const { n, dim, ids, coords } = t;
  const indices = new Int32Array(n * k).fill(-1);
  const distances = new Float64Array(n * k).fill(Number.POSITIVE_INFINITY);
  const bestD = new Float64Array(k);
  const bestI = new Int32Array(k);
  const stack = new Int32Array(3 * 128);
  const bound = new Float64Array(128);
  for (let p = 0; p < n; p++) {
    const self = ids[p] as number;
    bestD.fill(Number.POSITIVE_INFINITY);
    bestI.fill(-1);
    const count = searchKnn(t, coords, p * dim, self, k, bestD, bestI, stack, bound);
    const row = self * k;
    for (let j = 0; j < count; j++) {
      indices[row + j] = bestI[j] as number;
      distances[row + j] = Math.sqrt(bestD[j] as number);
    }
  }
  return { indices, distances };
}

/**
 * The k nearest tree points to the query at `qc[qo…]` (the point with original index `self` skipped),
 * into bestD/bestI sorted ascending (squared distances); returns how many were found.
 */
function searchKnn(
  t: KdTree,
  qc: ArrayLike<number>,
  qo: number,
  self: number,
  k: number,
  bestD: Float64Array,
  bestI: Int32Array,
  stack: Int32Array,
  bound: Float64Array,
): number {
  const { n, dim, coords } = t;
  let count = 0;
  // Iterative depth-first search; stack holds (lo, hi, axis) of ranges still to visit and `bound`
  // the squared distance from the query to the splitting plane that separates each from it.
  let sp = 0;
  stack[sp] = 0;
  stack[sp + 1] = n;
  stack[sp + 2] = 0;
  bound[sp / 3] = 0;
  sp += 3;
  while (sp > 0) {
    sp -= 3;
    const lo = stack[sp] as number;
    const hi = stack[sp + 1] as number;
    const axis = stack[sp + 2] as number;
    const b = bound[sp / 3] as number;
    if (count === k && b > (bestD[k - 1] as number)) continue;
    if (hi - lo <= LEAF_SIZE) {
      for (let q = lo; q < hi; q++) count = offer(t, qc, qo, q, self, k, bestD, bestI, count);
      continue;
    }
    const m = (lo + hi) >> 1;
    count = offer(t, qc, qo, m, self, k, bestD, bestI, count);
    const diff = (qc[qo + axis] as number) - (coords[m * dim + axis] as number);
    const next = (axis + 1) % dim;
    // The far side goes on the stack first so the near side is searched first (it shrinks the
    // k-th distance sooner, and the far side is then often skipped).
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
  return count;
}

/**
 * The `k` nearest tree points of each of `nq` query points (`dim` coordinates each, row-major), by
 * ascending distance: nq × k original indices and euclidean distances (−1 / Infinity past the end).
 */
export function kdKnnQuery(
  t: KdTree,
  queries: ArrayLike<number>,
  nq: number,
  k: number,
): { indices: Int32Array; distances: Float64Array } {
  const indices = new Int32Array(nq * k).fill(-1);
  const distances = new Float64Array(nq * k).fill(Number.POSITIVE_INFINITY);
  const bestD = new Float64Array(k);
  const bestI = new Int32Array(k);
  const stack = new Int32Array(3 * 128);
  const bound = new Float64Array(128);
  for (let q = 0; q < nq; q++) {
    bestD.fill(Number.POSITIVE_INFINITY);
    bestI.fill(-1);
    const count = searchKnn(t, queries, q * t.dim, -1, k, bestD, bestI, stack, bound);
    for (let j = 0; j < count; j++) {
      indices[q * k + j] = bestI[j] as number;
      distances[q * k + j] = Math.sqrt(bestD[j] as number);
    }
  }
  return { indices, distances };
}

/** Offer tree position q to the sorted best-k list of query p; returns the new count. */
function offer(
  t: KdTree,
  coords: ArrayLike<number>,
  qo: number,
  q: number,
  self: number,
  k: number,
  bestD: Float64Array,
  bestI: Int32Array,
  count: number,
): number {
  const id = t.ids[q] as number;
  if (id === self) return count;
  const d = sqDist(t, coords, qo, q);
  if (count === k) {
    const wd = bestD[k - 1] as number;
    if (d > wd || (d === wd && id > (bestI[k - 1] as number))) return count;
  } else count++;
  let j = count - 1;
  while (j > 0) {
    const pd = bestD[j - 1] as number;
    if (pd < d || (pd === d && (bestI[j - 1] as number) < id)) break;
    bestD[j] = pd;
    bestI[j] = bestI[j - 1] as number;
    j--;
  }
  bestD[j] = d;
  bestI[j] = id;
  return count;
}

/**
 * All other points within `radius` (distance ≤ radius) of every point, as a CSR of original indices
 * with columns ascending, and their distances.
 */
export function kdRadiusSelf(
  t: KdTree,
  radius: number,
): { indptr: Int32Array; indices: Int32Array; distances: Float64Array } {
  const { n, dim, ids, coords } = t;
  const r2 = radius * radius;
  const counts = new Int32Array(n + 1);
  let cols: Int32Array = new Int32Array(Math.max(16, n * 8));
  let dists: Float64Array = new Float64Array(cols.length);
  let w = 0;
  // Found per query in tree order; gathered by tree position then scattered to original rows.
  const starts = new Float64Array(n + 1);
  const stack = new Int32Array(3 * 64 * 2);
  for (let p = 0; p < n; p++) {
    const self = ids[p] as number;
    starts[p] = w;
    let sp = 0;
    stack[sp++] = 0;
    stack[sp++] = n;
    stack[sp++] = 0;
    while (sp > 0) {
      const axis = stack[--sp] as number;
      const hi = stack[--sp] as number;
      const lo = stack[--sp] as number;
      const scan = hi - lo <= LEAF_SIZE;
      const m = (lo + hi) >> 1;
      const from = scan ? lo : m;
      const to = scan ? hi : m + 1;
      for (let q = from; q < to; q++) {
        const id = ids[q] as number;
        if (id === self) continue;
        const d = sqDist(t, coords, p * dim, q);
        if (d <= r2) {
          if (w === cols.length) {
            const c2 = new Int32Array(cols.length * 2);
            c2.set(cols);
            cols = c2;
            const d2 = new Float64Array(dists.length * 2);
            d2.set(dists);
            dists = d2;
          }
          cols[w] = id;
          dists[w++] = Math.sqrt(d);
        }
      }
      if (scan) continue;
      const diff = (coords[p * dim + axis] as number) - (coords[m * dim + axis] as number);
      const next = (axis + 1) % dim;
      if (diff - radius <= 0) {
        stack[sp++] = lo;
        stack[sp++] = m;
        stack[sp++] = next;
      }
      if (diff + radius >= 0) {
        stack[sp++] = m + 1;
        stack[sp++] = hi;
        stack[sp++] = next;
      }
    }
    counts[self + 1] = w - starts[p];
  }
  starts[n] = w;
  const indptr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) indptr[i + 1] = (indptr[i] as number) + (counts[i + 1] as number);
  const indices = new Int32Array(w);
  const distances = new Float64Array(w);
  const order: number[] = [];
  for (let p = 0; p < n; p++) {
    const self = ids[p] as number;
    const s = starts[p] as number;
    const e = starts[p + 1] as number;
    order.length = 0;
    for (let x = s; x < e; x++) order.push(x);
    order.sort((a, b) => (cols[a] as number) - (cols[b] as number));
    let o = indptr[self] as number;
    for (const x of order) {
      indices[o] = cols[x] as number;
      distances[o++] = dists[x] as number;
    }
  }
  return { indptr, indices, distances };
}

/**
 * k-nearest-neighbour graphs of the rows of a dense float matrix (PCA space, usually n × 50).
 *
 * - `knnExact`: brute force over query blocks (every pair, exact), fine up to a few thousand rows.
 * - `knnDescent` / `knnDescentAsync` (in `knn-descent.ts`): a random-projection forest for the
 *   initial graph, then NN-descent, seeded, on one thread or several.
 * - `knn` / `knnAsync`: pick one by size.
 *
 * Results put each row itself first (distance 0), then its k − 1 nearest others by ascending
 * distance, as scanpy's `knn_indices`/`knn_dists` are laid out.
 */
import { type KnnDescentOptions, knnDescent, knnDescentAsync } from "./knn-descent.js";
import { assertFinite, heapsToGraph, type KnnGraph, type KnnMetric } from "./knn-graph.js";

export type { KnnDescentOptions } from "./knn-descent.js";
export { knnDescent, knnDescentAsync } from "./knn-descent.js";
export type { KnnGraph, KnnMetric } from "./knn-graph.js";

/** Options shared by the kNN builders. */
export interface KnnOptions {
  readonly metric?: KnnMetric;
  readonly signal?: AbortSignal;
  readonly progress?: (f: number) => void;
}

/**
 * Rows ≤ this use the exact search in `knn`. Measured on 50-d PCA data, the brute force takes about
 * 3× as long as NN-descent at 4k rows; at 2k both are well under half a second, so exact results cost
 * nothing there.
 */
export const EXACT_KNN_MAX_ROWS = 2048;

/** Squared euclidean distance between rows a and b (offsets into data). */
function sqEuclid(x: Float32Array, a: number, b: number, d: number): number {
  // Four running sums: independent adds pipeline, where one sum waits on the previous add.
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const d4 = d - (d % 4);
  let t = 0;
  for (; t < d4; t += 4) {
    const u0 = x[a + t] - x[b + t];
    const u1 = x[a + t + 1] - x[b + t + 1];
    const u2 = x[a + t + 2] - x[b + t + 2];
    const u3 = x[a + t + 3] - x[b + t + 3];
    s0 += u0 * u0;
    s1 += u1 * u1;
    s2 += u2 * u2;
    s3 += u3 * u3;
  }
  for (; t < d; t++) {
    const u = x[a + t] - x[b + t];
    s0 += u * u;
  }
  return s0 + s1 + (s2 + s3);
}

/** L1 distance between rows a and b. */
function manhattan(x: Float32Array, a: number, b: number, d: number): number {
  let s = 0;
  for (let t = 0; t < d; t++) s += Math.abs(x[a + t] - x[b + t]);
  return s;
}

/**
 * The data a metric searches in and how its "internal" distance (what the search compares) maps to
 * the reported one: euclidean searches squared distances, cosine searches squared distances of unit
 * rows (‖a − b‖² / 2 = 1 − cos θ).
 */
function prepare(data: Float32Array, n: number, d: number, metric: KnnMetric) {
  assertFinite(data, n, d);
  if (metric === "cosine") {
    const x = new Float32Array(n * d);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let t = 0; t < d; t++) s += data[i * d + t] * data[i * d + t];
      const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
      for (let t = 0; t < d; t++) x[i * d + t] = data[i * d + t] * inv;
    }
    return { x, l1: false, finish: (v: number) => v / 2 };
  }
  if (metric === "manhattan") return { x: data, l1: true, finish: (v: number) => v };
  if (metric !== "euclidean") throw new Error(`knn: unknown metric "${metric as string}"`);
  return { x: data, l1: false, finish: (v: number) => Math.sqrt(v) };
}

/** Sift the max-heap of row p (size h, arrays offset p·h) down from the root. */
function siftDown(hi: Int32Array, hd: Float64Array, base: number, h: number): void {
  let i = 0;
  const ind = hi[base];
  const dis = hd[base];
  for (;;) {
    const l = 2 * i + 1;
    if (l >= h) break;
    const r = l + 1;
    const c = r < h && hd[base + r] > hd[base + l] ? r : l;
    if (hd[base + c] <= dis) break;
    hi[base + i] = hi[base + c];
    hd[base + i] = hd[base + c];
    i = c;
  }
  hi[base + i] = ind;
  hd[base + i] = dis;
}

/**
 * Exact kNN by brute force: every pair, rows in query blocks so a block's rows stay in cache while
 * all candidates stream past. O(n² d); use for n up to a few thousand.
 */
export function knnExact(
  data: Float32Array,
  n: number,
  d: number,
  k: number,
  opts: KnnOptions = {},
): KnnGraph {
  if (k < 1 || k > n) throw new Error(`knnExact: k must be in [1, ${n}], got ${k}`);
  const { x, l1, finish } = prepare(data, n, d, opts.metric ?? "euclidean");
  const h = k - 1;
  const hi = new Int32Array(n * h).fill(-1);
  const hd = new Float64Array(n * h).fill(Infinity);
  if (h === 0) return heapsToGraph(hi, hd, n, h, finish);
  // Each pair once (j > i), offered to both rows' heaps; i in blocks so the block stays in cache.
  const QB = 16;
  const offer = (p: number, q: number, dist: number): void => {
    const base = p * h;
    if (dist < hd[base]) {
      hi[base] = q;
      hd[base] = dist;
      siftDown(hi, hd, base, h);
    }
  };
  for (let q0 = 0; q0 < n; q0 += QB) {
    if ((q0 & 511) === 0) {
      opts.signal?.throwIfAborted();
      opts.progress?.(1 - ((n - q0) / n) ** 2);
    }
    const q1 = Math.min(n, q0 + QB);
    for (let c = q0 + 1; c < n; c++) {
      const cb = c * d;
      const qEnd = Math.min(q1, c);
      for (let q = q0; q < qEnd; q++) {
        const dist = l1 ? manhattan(x, q * d, cb, d) : sqEuclid(x, q * d, cb, d);
        offer(q, c, dist);
        offer(c, q, dist);
      }
    }
  }
  return heapsToGraph(hi, hd, n, h, finish);
}

/**
 * kNN graph with self first: exact when n ≤ `exactMaxRows` (default `EXACT_KNN_MAX_ROWS`), else
 * NN-descent.
 */
export function knn(
  data: Float32Array,
  n: number,
  d: number,
  k: number,
  opts: KnnDescentOptions & { exactMaxRows?: number },
): KnnGraph {
  return n <= (opts.exactMaxRows ?? EXACT_KNN_MAX_ROWS)
    ? knnExact(data, n, d, k, opts)
    : knnDescent(data, n, d, k, opts);
}

/** `knn` with NN-descent shared among `opts.threads` threads (same graph as one thread's). */
export async function knnAsync(
  data: Float32Array,
  n: number,
  d: number,
  k: number,
  opts: KnnDescentOptions & { exactMaxRows?: number },
): Promise<KnnGraph> {
  return n <= (opts.exactMaxRows ?? EXACT_KNN_MAX_ROWS)
    ? knnExact(data, n, d, k, opts)
    : knnDescentAsync(data, n, d, k, opts);
}

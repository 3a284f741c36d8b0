/**
 * The kNN graph shape shared by the exact and approximate searches, and how their per-row heaps
 * become one: each row itself first (distance 0), then its k − 1 nearest others by ascending
 * distance, as scanpy's `knn_indices`/`knn_dists` are laid out.
 */

/** Distance metrics: euclidean, cosine (1 − cos θ, as pynndescent), manhattan (L1). */
export type KnnMetric = "euclidean" | "cosine" | "manhattan";

/** A kNN graph: n × k row-major neighbour indices and distances, self first. */
export interface KnnGraph {
  readonly n: number;
  readonly k: number;
  readonly indices: Int32Array;
  readonly distances: Float32Array;
}

/**
 * Throw, naming the cell and column, when the n × d rows hold NaN or an infinity: a distance to such a
 * row is NaN, and NaN never compares, so it would sit in a neighbour heap for good (sklearn and
 * pynndescent refuse such input too).
 */
export function assertFinite(data: ArrayLike<number>, n: number, d: number): void {
  for (let e = 0; e < n * d; e++) {
    if (!Number.isFinite(data[e])) throw nonFinite(data[e], Math.floor(e / d), e % d);
  }
}

/** The error for a non-finite value at row i, column t. */
export function nonFinite(v: number, i: number, t: number): Error {
  return new Error(
    `knn: the data holds ${v} at cell ${i} (column ${t}); remove or impute non-finite values first`,
  );
}

/**
 * Sort each row's heap (h entries at p·h; index −1 = empty) ascending by distance, then index, and
 * emit the graph with self first; `finish` maps a searched value to the reported distance. When the
 * search ran on reordered rows, `order[r]` is the original row of searched row r: heap row r becomes
 * graph row order[r] and every index is mapped back.
 */
export function heapsToGraph(
  hi: Int32Array,
  hd: Float32Array | Float64Array,
  n: number,
  h: number,
  finish: (v: number) => number,
  order?: Int32Array,
): KnnGraph {
  const k = h + 1;
  const indices = new Int32Array(n * k);
  const distances = new Float32Array(n * k);
  const ri = new Int32Array(h);
  const rd = new Float64Array(h);
  for (let r = 0; r < n; r++) {
    const base = r * h;
    const p = order ? order[r] : r;
    // Insertion sort: h is small (k − 1, usually 14).
    for (let j = 0; j < h; j++) {
      const qr = hi[base + j];
      const q = order && qr >= 0 ? order[qr] : qr;
      const v = hd[base + j];
      let i = j;
      while (i > 0 && (rd[i - 1] > v || (rd[i - 1] === v && ri[i - 1] > q))) {
        ri[i] = ri[i - 1];
        rd[i] = rd[i - 1];
        i--;
      }
      ri[i] = q;
      rd[i] = v;
    }
    indices[p * k] = p;
    distances[p * k] = 0;
    for (let j = 0; j < h; j++) {
      const v = rd[j];
      indices[p * k + 1 + j] = ri[j];
      distances[p * k + 1 + j] = v === Number.POSITIVE_INFINITY ? v : finish(v);
    }
  }
  return { n, k, indices, distances };
}

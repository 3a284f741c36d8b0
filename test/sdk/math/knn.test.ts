import { describe, expect, it } from "vitest";
import {
  type KnnMetric,
  knn,
  knnAsync,
  knnDescent,
  knnDescentAsync,
  knnExact,
} from "../../../src/sdk/math/knn.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import {
  fuzzySimplicialSet,
  fuzzySimplicialSetAsync,
  gaussKnn,
  smoothKnnDist,
} from "../../../src/sdk/math/umap-graph.js";

/** n points in d dims around 10 centres (a PCA-like space). */
function clustered(n: number, d: number, seed = 2): Float32Array {
  const rng = new Rng(seed);
  const centres = Array.from({ length: 10 }, () => Float64Array.from({ length: d }, () => rng.normal() * 3));
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    const c = centres[rng.int(10)]!;
    for (let t = 0; t < d; t++) x[i * d + t] = c[t]! + rng.normal() * (t < 5 ? 1.5 : 0.4);
  }
  return x;
}

/** Naive neighbours of row p: sort all others by the metric. */
function naive(x: Float32Array, n: number, d: number, p: number, k: number, metric: KnnMetric) {
  const dist = (a: number, b: number) => {
    if (metric === "manhattan") {
      let s = 0;
      for (let t = 0; t < d; t++) s += Math.abs(x[a * d + t]! - x[b * d + t]!);
      return s;
    }
    if (metric === "cosine") {
      let ab = 0;
      let aa = 0;
      let bb = 0;
      for (let t = 0; t < d; t++) {
        ab += x[a * d + t]! * x[b * d + t]!;
        aa += x[a * d + t]! ** 2;
        bb += x[b * d + t]! ** 2;
      }
      return 1 - ab / Math.sqrt(aa * bb);
    }
    let s = 0;
    for (let t = 0; t < d; t++) s += (x[a * d + t]! - x[b * d + t]!) ** 2;
    return Math.sqrt(s);
  };
  const all: [number, number][] = [];
  for (let q = 0; q < n; q++) if (q !== p) all.push([dist(p, q), q]);
  all.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return all.slice(0, k - 1);
}

describe("exact kNN", () => {
  const n = 400;
  const d = 12;
  const k = 10;
  const x = clustered(n, d);
  for (const metric of ["euclidean", "cosine", "manhattan"] as const) {
    it(`${metric}: self first, then the k − 1 nearest in ascending distance`, () => {
      const g = knnExact(x, n, d, k, { metric });
      for (const p of [0, 17, 199, 399]) {
        expect(g.indices[p * k]).toBe(p);
        expect(g.distances[p * k]).toBe(0);
        const ref = naive(x, n, d, p, k, metric);
        for (let j = 1; j < k; j++) {
          expect(g.distances[p * k + j]).toBeCloseTo(ref[j - 1]![0], 4);
          expect(g.distances[p * k + j]!).toBeGreaterThanOrEqual(g.distances[p * k + j - 1]!);
        }
        expect(new Set(g.indices.subarray(p * k + 1, p * k + k))).toEqual(new Set(ref.map((e) => e[1])));
      }
    });
  }
});

describe("NN-descent", () => {
  it("recall ≥ 0.95 against the exact graph, deterministic per seed", () => {
    const n = 3000;
    const d = 30;
    const k = 15;
    const x = clustered(n, d, 5);
    const exact = knnExact(x, n, d, k);
    const a = knnDescent(x, n, d, k, { rng: new Rng(0) });
    let hits = 0;
    for (let p = 0; p < n; p++) {
      const truth = new Set(exact.indices.subarray(p * k + 1, p * k + k));
      expect(a.indices[p * k]).toBe(p);
      for (let j = 1; j < k; j++) if (truth.has(a.indices[p * k + j]!)) hits++;
    }
    const recall = hits / (n * (k - 1));
    console.log(`NN-descent recall on 3000 × 30: ${recall.toFixed(4)}`);
    expect(recall).toBeGreaterThanOrEqual(0.95);
    const b = knnDescent(x, n, d, k, { rng: new Rng(0) });
    expect(b.indices).toEqual(a.indices);
    // knn() picks exact for small n.
    const small = knn(x.subarray(0, 100 * d), 100, d, 5, { rng: new Rng(0) });
    expect(small.indices).toEqual(knnExact(x.subarray(0, 100 * d), 100, d, 5).indices);
  });
});

describe("NN-descent on several threads", () => {
  it("gives the same graph as one thread for the same seed, and recalls the exact graph", async () => {
    const n = 24000; // two threads' worth (MIN_ROWS_PER_THREAD each)
    const d = 18; // not a multiple of four: the SIMD rows are padded
    const k = 10;
    const x = clustered(n, d, 4);
    const one = knnDescent(x, n, d, k, { rng: new Rng(7) });
    const two = await knnDescentAsync(x, n, d, k, { rng: new Rng(7), threads: 2 });
    expect(two.indices).toEqual(one.indices);
    expect(two.distances).toEqual(one.distances);
    let hits = 0;
    const samples = 200;
    for (let s = 0; s < samples; s++) {
      const p = s * 97;
      const truth = new Set(naive(x, n, d, p, k, "euclidean").map((e) => e[1]));
      for (let j = 1; j < k; j++) if (truth.has(two.indices[p * k + j]!)) hits++;
      // Distances ascend and are the real euclidean distances of the listed rows.
      for (let j = 2; j < k; j++)
        expect(two.distances[p * k + j]!).toBeGreaterThanOrEqual(two.distances[p * k + j - 1]!);
      const q = two.indices[p * k + 1]!;
      let sq = 0;
      for (let t = 0; t < d; t++) sq += (x[p * d + t]! - x[q * d + t]!) ** 2;
      expect(two.distances[p * k + 1]).toBeCloseTo(Math.sqrt(sq), 4);
    }
    expect(hits / (samples * (k - 1))).toBeGreaterThanOrEqual(0.95);
  }, 60_000);

  for (const metric of ["cosine", "manhattan"] as const) {
    it(`${metric}: reports the metric's distances`, async () => {
      const n = 3000;
      const d = 9;
      const k = 8;
      const x = clustered(n, d, 11);
      const g = await knnAsync(x, n, d, k, { rng: new Rng(1), metric, threads: 2 });
      let hits = 0;
      for (const p of [0, 500, 2999]) {
        const ref = naive(x, n, d, p, k, metric);
        const truth = new Set(ref.map((e) => e[1]));
        for (let j = 1; j < k; j++) {
          const q = g.indices[p * k + j]!;
          if (truth.has(q)) hits++;
          const exact = naive(x, n, d, p, n, metric).find((e) => e[1] === q)![0];
          expect(g.distances[p * k + j]).toBeCloseTo(exact, 4);
        }
      }
      expect(hits / (3 * (k - 1))).toBeGreaterThanOrEqual(0.9);
    });
  }

  it("stops when the signal is aborted", async () => {
    const n = 24000;
    const d = 8;
    const x = clustered(n, d, 5);
    const controller = new AbortController();
    const run = knnDescentAsync(x, n, d, 10, {
      rng: new Rng(0),
      threads: 2,
      signal: controller.signal,
      progress: (f) => {
        if (f > 0.2) controller.abort(new Error("stop here"));
      },
    });
    await expect(run).rejects.toThrow("stop here");
  }, 60_000);

  it("refuses NaN or infinity, naming the cell and column, on both paths", async () => {
    const x = clustered(3000, 6);
    x[2 * 6 + 4] = Number.POSITIVE_INFINITY;
    expect(() => knnExact(x.subarray(0, 600), 100, 6, 5)).toThrow(/Infinity at cell 2 \(column 4\)/);
    x[2 * 6 + 4] = Number.NaN;
    await expect(knnDescentAsync(x, 3000, 6, 5, { rng: new Rng(0) })).rejects.toThrow(
      /NaN at cell 2 \(column 4\)/,
    );
  });

  it("rejects a bad k and an unknown metric", async () => {
    const x = clustered(100, 4);
    expect(() => knnDescent(x, 100, 4, 0, { rng: new Rng(0) })).toThrow(/k must be in/);
    await expect(
      knnDescentAsync(x, 100, 4, 5, { rng: new Rng(0), metric: "hamming" as KnnMetric }),
    ).rejects.toThrow(/unknown metric "hamming"/);
  });
});

describe("umap fuzzy simplicial set", () => {
  const n = 500;
  const d = 8;
  const k = 15;
  const g = knnExact(clustered(n, d, 9), n, d, k);

  it("smooth kNN distances hit Σ exp(−(d − ρ)/σ) = log2 k", () => {
    const { sigmas, rhos } = smoothKnnDist(g.distances, n, k);
    for (const i of [0, 250, 499]) {
      expect(rhos[i]).toBeCloseTo(g.distances[i * k + 1]!, 6);
      let psum = 0;
      for (let j = 1; j < k; j++) {
        const dd = g.distances[i * k + j]! - rhos[i]!;
        psum += dd > 0 ? Math.exp(-dd / sigmas[i]!) : 1;
      }
      expect(psum).toBeCloseTo(Math.log2(k), 3);
    }
  });

  it("connectivities are symmetric, in (0, 1], 1 to each nearest neighbour, w + wᵀ − w∘wᵀ", () => {
    const c = fuzzySimplicialSet(g.indices, g.distances, n, k);
    const { sigmas, rhos } = smoothKnnDist(g.distances, n, k);
    const w = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      for (let e = Number(c.indptr[i]); e < Number(c.indptr[i + 1]); e++) {
        const v = c.data[e] as number;
        expect(v).toBeGreaterThan(0);
        expect(v).toBeLessThanOrEqual(1);
        w.set(`${i},${c.indices[e]}`, v);
      }
      if (Number(c.indptr[i + 1]) > Number(c.indptr[i]) + 1) {
        for (let e = Number(c.indptr[i]) + 1; e < Number(c.indptr[i + 1]); e++) {
          expect(Number(c.indices[e])).toBeGreaterThan(Number(c.indices[e - 1]));
        }
      }
    }
    for (const [key, v] of w) {
      const [i, j] = key.split(",");
      expect(w.get(`${j},${i}`)).toBe(v);
    }
    for (let i = 0; i < n; i += 50) expect(w.get(`${i},${g.indices[i * k + 1]}`)).toBe(1);
    // One edge by hand.
    const i = 3;
    const j = g.indices[i * k + 5]!;
    const dir = (a: number, b: number) => {
      for (let t = 1; t < k; t++) {
        if (g.indices[a * k + t] === b) {
          const dd = Math.fround(g.distances[a * k + t]! - rhos[a]!);
          return dd <= 0 ? 1 : Math.fround(Math.exp(-dd / sigmas[a]!));
        }
      }
      return 0;
    };
    const a = dir(i, j);
    const b = dir(j, i);
    expect(w.get(`${i},${j}`)).toBeCloseTo(a + b - a * b, 6);
  });

  it("on two threads (rows shared out) gives the one-thread connectivities exactly", async () => {
    // 24,000 rows × 15 is over the threaded path's threshold; the rows need not be a true kNN graph.
    const big = 24000;
    const rng = new Rng(4);
    const ind = new Int32Array(big * k);
    const dist = new Float32Array(big * k);
    for (let i = 0; i < big; i++) {
      ind[i * k] = i;
      let acc = rng.next() < 0.05 ? 0 : 0.5 * rng.next(); // a few rows with duplicates at distance 0
      for (let j = 1; j < k; j++) {
        ind[i * k + j] = j === k - 1 && i % 97 === 0 ? -1 : Math.floor(rng.next() * big);
        acc += rng.next();
        dist[i * k + j] = acc;
      }
    }
    const one = fuzzySimplicialSet(ind, dist, big, k);
    const two = await fuzzySimplicialSetAsync(ind, dist, big, k, 2);
    // Counted mismatches (deep equality of 360,000-entry arrays is slow in the matcher).
    const differ = (x: ArrayLike<number | bigint>, y: ArrayLike<number | bigint>) => {
      let bad = Math.abs(x.length - y.length);
      for (let e = 0; e < Math.min(x.length, y.length); e++) if (x[e] !== y[e]) bad++;
      return bad;
    };
    expect(differ(two.indptr, one.indptr)).toBe(0);
    expect(differ(two.indices, one.indices)).toBe(0);
    expect(differ(two.data, one.data)).toBe(0);
    expect(one.indices.length).toBeGreaterThan(big * (k - 1));
  });

  it("gauss kernel: symmetric union of the kNN edges with the adaptive-width weights", () => {
    const c = gaussKnn(g.indices, g.distances, n, k);
    const w = new Map<string, number>();
    for (let i = 0; i < n; i++)
      for (let e = Number(c.indptr[i]); e < Number(c.indptr[i + 1]); e++)
        w.set(`${i},${c.indices[e]}`, c.data[e] as number);
    for (const [key, v] of w) {
      const [i, j] = key.split(",");
      expect(w.get(`${j},${i}`)).toBeCloseTo(v, 6);
    }
    expect(w.size).toBeGreaterThanOrEqual(n * (k - 1));
  });
});

import { describe, expect, it } from "vitest";
import type { SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { symEigenJacobi } from "../../../src/sdk/math/linalg.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import {
  connectedComponents,
  findAbParams,
  optimizeLayoutEuclidean,
  spectralLayout,
  topEigenpairs,
  umapLayout,
} from "../../../src/sdk/math/umap-layout.js";

/** A symmetric CSR graph from undirected weighted edges. */
function graph(
  n: number,
  edges: [number, number, number][],
): SparseMatrix & { n: number; weights: Float64Array; indptr: Int32Array; indices: Int32Array } {
  const both = edges.flatMap(([a, b, w]) => [
    [a, b, w],
    [b, a, w],
  ]) as [number, number, number][];
  both.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const indptr = new Int32Array(n + 1);
  for (const [r] of both) indptr[r + 1]!++;
  for (let i = 0; i < n; i++) indptr[i + 1]! += indptr[i];
  const weights = Float64Array.from(both, (e) => e[2]);
  return {
    kind: "csr",
    dtype: "float64",
    shape: [n, n],
    data: weights,
    indices: Int32Array.from(both, (e) => e[1]),
    indptr,
    n,
    weights,
  };
}

/** Gaussian blobs in 5-d and their exact kNN graph with UMAP-like weights exp(−(d − ρ)/σ), symmetrised. */
function blobGraph(perBlob: number, blobs: number, k: number, seed: number) {
  const rng = new Rng(seed);
  const n = perBlob * blobs;
  const D = 5;
  const x = new Float64Array(n * D);
  const label = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    label[i] = Math.floor(i / perBlob);
    for (let d = 0; d < D; d++)
      x[i * D + d] = (d === label[i]! % D ? 12 * (1 + Math.floor(label[i]! / D)) : 0) + rng.normal();
  }
  const edges = new Map<string, [number, number, number]>();
  for (let i = 0; i < n; i++) {
    const dist: [number, number][] = [];
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      let s = 0;
      for (let d = 0; d < D; d++) s += (x[i * D + d]! - x[j * D + d]!) ** 2;
      dist.push([Math.sqrt(s), j]);
    }
    dist.sort((a, b) => a[0] - b[0]);
    const rho = dist[0]![0];
    const sigma = dist[k - 1]![0] - rho || 1;
    for (let q = 0; q < k; q++) {
      const [dd, j] = dist[q]!;
      const w = Math.exp(-(dd - rho) / sigma);
      const key = i < j ? `${i},${j}` : `${j},${i}`;
      const old = edges.get(key);
      edges.set(key, [Math.min(i, j), Math.max(i, j), old ? old[2] + w - old[2] * w : w]);
    }
  }
  return { g: graph(n, [...edges.values()]), label, n };
}

describe("findAbParams", () => {
  it("fits the curve as umap-learn (scipy curve_fit) does", () => {
    // Values from umap.umap_.find_ab_params with scipy 1.17.
    const cases: [number, number, number, number][] = [
      [1, 0.5, 0.58303002, 1.33416699],
      [1, 0.1, 1.57694346, 0.89506088],
      [1, 0.0, 1.9328084, 0.79049497],
      [2, 0.5, 0.25887874, 1.0574997],
      [0.5, 0.1, 5.06930933, 1.00300542],
    ];
    for (const [spread, minDist, a, b] of cases) {
      const p = findAbParams(spread, minDist);
      expect(Math.abs(p.a / a - 1)).toBeLessThan(1e-5);
      expect(Math.abs(p.b / b - 1)).toBeLessThan(1e-5);
    }
    expect(() => findAbParams(0, 0.1)).toThrow(/spread/);
  });
});

describe("eigen solvers", () => {
  it("symEigenJacobi (the SDK's one small symmetric solver) decomposes a small matrix (values descending)", () => {
    const A = Float64Array.from([4, 1, 2, 1, 3, 0, 2, 0, 1]);
    const { values, vectors } = symEigenJacobi(A, 3);
    expect(values[0]).toBeGreaterThan(values[1]!);
    expect(values[1]).toBeGreaterThan(values[2]!);
    expect(values[0]! + values[1]! + values[2]!).toBeCloseTo(8, 10);
    for (let c = 0; c < 3; c++) {
      for (let r = 0; r < 3; r++) {
        let av = 0;
        for (let k = 0; k < 3; k++) av += A[r * 3 + k]! * vectors[k * 3 + c]!;
        expect(av).toBeCloseTo(values[c]! * vectors[r * 3 + c]!, 10);
      }
    }
  });

  it("topEigenpairs finds the largest eigenpairs of a path graph's adjacency, with deflation", () => {
    // Adjacency of a path on n nodes: eigenvalues 2cos(πk/(n+1)), k = 1…n.
    const n = 120;
    const matvec = (x: Float64Array, y: Float64Array) => {
      for (let i = 0; i < n; i++) y[i] = (i > 0 ? x[i - 1]! : 0) + (i < n - 1 ? x[i + 1]! : 0);
    };
    const exact = (k: number) => 2 * Math.cos((Math.PI * k) / (n + 1));
    const r = topEigenpairs(matvec, n, 3, new Rng(0), { tol: 1e-8, maxRestarts: 400 });
    for (let i = 0; i < 3; i++) expect(r.values[i]).toBeCloseTo(exact(i + 1), 6);
    const top = Float64Array.from({ length: n }, (_, i) => Math.sin((Math.PI * (i + 1)) / (n + 1)));
    const norm = Math.hypot(...top);
    for (let i = 0; i < n; i++) top[i]! /= norm;
    const d = topEigenpairs(matvec, n, 2, new Rng(0), { deflate: [top], tol: 1e-8, maxRestarts: 400 });
    expect(d.values[0]).toBeCloseTo(exact(2), 6);
    expect(d.values[1]).toBeCloseTo(exact(3), 6);
  });
});

describe("spectral initialisation", () => {
  it("labels connected components in order of their first node", () => {
    const g = graph(6, [
      [0, 3, 1],
      [1, 4, 1],
      [3, 5, 1],
    ]);
    const { labels, count } = connectedComponents(g);
    expect(count).toBe(3);
    expect(Array.from(labels)).toEqual([0, 1, 2, 0, 1, 0]);
  });

  it("embeds a ring along a circle and places separate components apart", () => {
    const n = 100;
    const ring = graph(
      n,
      Array.from({ length: n }, (_, i) => [i, (i + 1) % n, 1] as [number, number, number]),
    );
    const emb = spectralLayout(ring, 2, new Rng(0));
    // The two smallest non-trivial Laplacian eigenvectors of a cycle are cos/sin: all radii equal.
    const radii = Array.from({ length: n }, (_, i) => Math.hypot(emb[2 * i]!, emb[2 * i + 1]!));
    const mean = radii.reduce((a, b) => a + b, 0) / n;
    for (const r of radii) expect(Math.abs(r / mean - 1)).toBeLessThan(0.05);
    // Two rings: each in its own region around (±1, 0).
    const two = graph(2 * n, [
      ...Array.from({ length: n }, (_, i) => [i, (i + 1) % n, 1] as [number, number, number]),
      ...Array.from({ length: n }, (_, i) => [n + i, n + ((i + 1) % n), 1] as [number, number, number]),
    ]);
    const e2 = spectralLayout(two, 2, new Rng(0));
    let left = 0;
    let right = 0;
    for (let i = 0; i < n; i++) {
      expect(e2[2 * i]).toBeGreaterThanOrEqual(0);
      expect(e2[2 * (n + i)]).toBeLessThanOrEqual(0);
      right += e2[2 * i]! / n;
      left += e2[2 * (n + i)]! / n;
    }
    expect(right).toBeGreaterThan(0.5);
    expect(left).toBeLessThan(-0.5);
  });
});

describe("umapLayout", () => {
  const { g, label, n } = blobGraph(60, 6, 10, 1);

  it("separates clusters, is deterministic per seed, and honours n_components", () => {
    const { a, b } = findAbParams(1, 0.5);
    const run = (seed: number, dim = 2, init: "spectral" | "random" = "spectral") =>
      umapLayout(g, { nComponents: dim, a, b, rng: new Rng(seed), nEpochs: 200, init });
    const e = run(0);
    expect(e.length).toBe(n * 2);
    expect(e).toEqual(run(0));
    expect(e).not.toEqual(run(1));
    // Every point is nearer its own cluster's centroid than any other centroid.
    for (const emb of [e, run(0, 2, "random")]) {
      const cent = new Float64Array(6 * 2);
      for (let i = 0; i < n; i++)
        for (let d = 0; d < 2; d++) cent[label[i]! * 2 + d]! += emb[i * 2 + d]! / 60;
      let wrong = 0;
      for (let i = 0; i < n; i++) {
        let best = -1;
        let bestD = Infinity;
        for (let c = 0; c < 6; c++) {
          const d = Math.hypot(emb[i * 2]! - cent[c * 2]!, emb[i * 2 + 1]! - cent[c * 2 + 1]!);
          if (d < bestD) {
            bestD = d;
            best = c;
          }
        }
        if (best !== label[i]) wrong++;
      }
      expect(wrong).toBe(0);
    }
    const e3 = run(0, 3);
    expect(e3.length).toBe(n * 3);
    expect(e3.every(Number.isFinite)).toBe(true);
  });

  it("starts from given coordinates, scales them to [0, 10], and reports progress", () => {
    const init = Float64Array.from({ length: n * 2 }, (_, i) => i);
    const fractions: number[] = [];
    const zero = umapLayout(g, { nComponents: 2, a: 1, b: 1, rng: new Rng(0), nEpochs: 0, init });
    expect(Math.min(...zero)).toBe(0);
    expect(Math.max(...zero)).toBe(10);
    umapLayout(g, {
      nComponents: 2,
      a: 1,
      b: 1,
      rng: new Rng(0),
      nEpochs: 16,
      init,
      onProgress: (f) => fractions.push(f),
    });
    expect(fractions.at(-1)).toBe(1);
    expect(() => umapLayout(g, { nComponents: 2, a: 1, b: 1, rng: new Rng(0), init: [1, 2] })).toThrow(
      /initial/,
    );
    const ac = new AbortController();
    ac.abort();
    expect(() => umapLayout(g, { nComponents: 2, a: 1, b: 1, rng: new Rng(0), signal: ac.signal })).toThrow();
  });

  it("optimizeLayoutEuclidean pulls an edge's ends together", () => {
    const emb = Float32Array.from([0, 0, 10, 0]);
    optimizeLayoutEuclidean(
      emb,
      2,
      Int32Array.from([0, 1]),
      Int32Array.from([1, 0]),
      Float64Array.from([1, 1]),
      50,
      {
        a: 1.58,
        b: 0.9,
        rng: new Rng(0),
        negativeSampleRate: 0,
      },
    );
    expect(Math.hypot(emb[0]! - emb[2]!, emb[1]! - emb[3]!)).toBeLessThan(2);
  });
});

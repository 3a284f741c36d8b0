import { describe, expect, it } from "vitest";
import { Rng } from "../../../../src/sdk/math/rng.js";
import { delaunayNeighbors } from "../../../../src/sdk/math/spatial/delaunay.js";
import { type CsrGraph, spatialGraph } from "../../../../src/sdk/math/spatial/graph.js";
import { gridKnnSelf } from "../../../../src/sdk/math/spatial/grid-knn.js";
import { buildKdTree, kdKnnSelf } from "../../../../src/sdk/math/spatial/kdtree.js";

/** n clustered 2-d points (tissue-like: blobs of cells). */
function points(n: number, seed = 3): Float64Array {
  const rng = new Rng(seed);
  const centres = Array.from({ length: 8 }, () => [rng.uniform(0, 500), rng.uniform(0, 500)]);
  const x = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    const c = centres[rng.int(8)]!;
    x[2 * i] = c[0]! + rng.normal() * 40;
    x[2 * i + 1] = c[1]! + rng.normal() * 40;
  }
  return x;
}

function row(g: CsrGraph, i: number): { cols: number[]; vals: number[] } {
  const s = g.indptr[i]!;
  const e = g.indptr[i + 1]!;
  return { cols: Array.from(g.indices.subarray(s, e)), vals: Array.from(g.data.subarray(s, e)) };
}

function dist(x: Float64Array, i: number, j: number): number {
  return Math.hypot(x[2 * i]! - x[2 * j]!, x[2 * i + 1]! - x[2 * j + 1]!);
}

describe("spatialGraph", () => {
  const n = 1500;
  const x = points(n);

  it("knn: each point's k nearest others, by brute force, distances exact, no diagonal", () => {
    const k = 6;
    const g = spatialGraph(x, n, 2, { mode: "knn", nNeighs: k });
    for (let i = 0; i < n; i += 3) {
      const others = [...Array(n).keys()]
        .filter((j) => j !== i)
        .sort((a, b) => dist(x, i, a) - dist(x, i, b));
      const want = others.slice(0, k).sort((a, b) => a - b);
      const c = row(g.connectivities, i);
      expect(c.cols).toEqual(want);
      expect(c.vals.every((v) => v === 1)).toBe(true);
      const d = row(g.distances, i);
      expect(d.cols).toEqual(want);
      d.cols.forEach((j, t) => {
        expect(d.vals[t]).toBeCloseTo(dist(x, i, j), 12);
      });
    }
  });

  it("radius: every other point within r (≤ r), and a [min, max] interval prunes", () => {
    const r = 15;
    const g = spatialGraph(x, n, 2, { mode: "radius", radius: r });
    const gi = spatialGraph(x, n, 2, { mode: "radius", radius: [5, r] });
    let edges = 0;
    for (let i = 0; i < n; i++) {
      const want = [...Array(n).keys()].filter((j) => j !== i && dist(x, i, j) <= r);
      expect(row(g.connectivities, i).cols).toEqual(want);
      expect(row(gi.distances, i).cols).toEqual(want.filter((j) => dist(x, i, j) >= 5));
      edges += want.length;
    }
    expect(edges).toBeGreaterThan(n);
  });

  it("set_diag puts 1 on the connectivities' diagonal only", () => {
    const g = spatialGraph(x, n, 2, { mode: "knn", nNeighs: 4, setDiag: true });
    for (const i of [0, 17, n - 1]) {
      expect(row(g.connectivities, i).cols).toContain(i);
      expect(row(g.connectivities, i).cols).toHaveLength(5);
      expect(row(g.distances, i).cols).not.toContain(i);
    }
  });

  it("percentile keeps edges up to numpy's percentile of the stored distances (diagonal zeros included)", () => {
    const k = 6;
    const full = spatialGraph(x, n, 2, { mode: "knn", nNeighs: k });
    const g = spatialGraph(x, n, 2, { mode: "knn", nNeighs: k, percentile: 80 });
    const all = [...full.distances.data, ...new Array(n).fill(0)].sort((a, b) => a - b);
    const pos = ((all.length - 1) * 80) / 100;
    const lo = Math.floor(pos);
    const thr = all[lo]! + (all[lo + 1]! - all[lo]!) * (pos - lo);
    const kept = full.distances.data.filter((d) => d <= thr).length;
    expect(g.distances.data.length).toBe(kept);
    expect(Math.max(...g.distances.data)).toBeLessThanOrEqual(thr);
    expect(g.connectivities.indices.length).toBe(kept);
  });

  it("delaunay: symmetric, Euler's count of edges, and the empty-circle property of every edge's triangles", () => {
    const m = 400;
    const y = points(m, 5);
    const g = delaunayNeighbors(y, m);
    // Symmetric.
    for (let i = 0; i < m; i++) {
      for (let p = g.indptr[i]!; p < g.indptr[i + 1]!; p++) {
        const j = g.indices[p]!;
        expect(Array.from(g.indices.subarray(g.indptr[j]!, g.indptr[j + 1]!))).toContain(i);
      }
    }
    // A planar triangulation of m points with h on the convex hull has 3m − 3 − h edges.
    const h = convexHullSize(y, m);
    expect(g.indices.length / 2).toBe(3 * m - 3 - h);
    // Triangles (i, j, l) of mutual neighbours whose circumcircle holds no other point exist for every edge.
    const nb = (i: number) => new Set(g.indices.subarray(g.indptr[i]!, g.indptr[i + 1]!));
    for (let i = 0; i < m; i += 7) {
      for (const j of nb(i)) {
        const common = [...nb(i)].filter((l) => nb(j).has(l));
        const empty = common.some((l) => emptyCircle(y, m, i, j, l));
        expect(empty).toBe(true);
      }
    }
  });

  it("grid: hexagonal lattice with rings: ring numbers as distances", () => {
    // A 20 × 20 hex lattice like Visium spots (spacing 100, rows offset by half).
    const pts: number[] = [];
    for (let r = 0; r < 20; r++)
      for (let c = 0; c < 20; c++) pts.push(c * 100 + (r % 2) * 50, (r * 100 * Math.sqrt(3)) / 2);
    const p = Float64Array.from(pts);
    const g1 = spatialGraph(p, 400, 2, { mode: "grid", nNeighs: 6 });
    const inner = 10 * 20 + 10;
    expect(row(g1.connectivities, inner).cols).toHaveLength(6);
    expect(row(g1.distances, inner).vals.every((v) => v === 1)).toBe(true);
    const g2 = spatialGraph(p, 400, 2, { mode: "grid", nNeighs: 6, nRings: 2 });
    const d = row(g2.distances, inner);
    expect(d.vals.filter((v) => v === 1)).toHaveLength(6);
    expect(d.vals.filter((v) => v === 2)).toHaveLength(12);
    expect(row(g2.connectivities, inner).vals.every((v) => v === 1)).toBe(true);
  });

  it("libraries: a graph per library, none across", () => {
    const libs = Int8Array.from({ length: n }, (_, i) => i % 3);
    const g = spatialGraph(x, n, 2, { mode: "knn", nNeighs: 5, libraries: libs });
    for (let i = 0; i < n; i += 3) {
      const cols = row(g.connectivities, i).cols;
      expect(cols).toHaveLength(5);
      expect(cols.every((j) => j % 3 === i % 3)).toBe(true);
      const others = [...Array(n).keys()].filter((j) => j !== i && j % 3 === i % 3);
      others.sort((a, b) => dist(x, i, a) - dist(x, i, b));
      expect(cols).toEqual(others.slice(0, 5).sort((a, b) => a - b));
    }
  });

  it("bad input: clear errors", () => {
    expect(() => spatialGraph(x, n, 2, { mode: "knn", nNeighs: 0 })).toThrow(/n_neighs/);
    expect(() => spatialGraph(x, n, 2, { mode: "radius" })).toThrow(/radius/);
    expect(() => spatialGraph(x, n, 2, { mode: "grid", percentile: 50 })).toThrow(/percentile/);
    expect(() => spatialGraph(Float64Array.of(0, 0, 1, 1, 2, 2), 3, 2, { mode: "delaunay" })).toThrow(
      /one line/,
    );
    expect(() =>
      spatialGraph(Float64Array.of(0, 0, Number.NaN, 1), 2, 2, { mode: "knn", nNeighs: 1 }),
    ).toThrow(/NaN/);
  });
});

function convexHullSize(p: Float64Array, n: number): number {
  const idx = [...Array(n).keys()].sort((a, b) => p[2 * a]! - p[2 * b]! || p[2 * a + 1]! - p[2 * b + 1]!);
  const cross = (o: number, a: number, b: number) =>
    (p[2 * a]! - p[2 * o]!) * (p[2 * b + 1]! - p[2 * o + 1]!) -
    (p[2 * a + 1]! - p[2 * o + 1]!) * (p[2 * b]! - p[2 * o]!);
  const half = (ids: number[]) => {
    const h: number[] = [];
    for (const i of ids) {
      while (h.length >= 2 && cross(h[h.length - 2]!, h[h.length - 1]!, i) <= 0) h.pop();
      h.push(i);
    }
    return h;
  };
  const lower = half(idx);
  const upper = half([...idx].reverse());
  return lower.length + upper.length - 2;
}

function emptyCircle(p: Float64Array, n: number, a: number, b: number, c: number): boolean {
  const ax = p[2 * a]!;
  const ay = p[2 * a + 1]!;
  const bx = p[2 * b]!;
  const by = p[2 * b + 1]!;
  const cx = p[2 * c]!;
  const cy = p[2 * c + 1]!;
  const d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by));
  const ux =
    ((ax * ax + ay * ay) * (by - cy) + (bx * bx + by * by) * (cy - ay) + (cx * cx + cy * cy) * (ay - by)) / d;
  const uy =
    ((ax * ax + ay * ay) * (cx - bx) + (bx * bx + by * by) * (ax - cx) + (cx * cx + cy * cy) * (bx - ax)) / d;
  const r2 = (ax - ux) ** 2 + (ay - uy) ** 2;
  for (let i = 0; i < n; i++) {
    if (i === a || i === b || i === c) continue;
    if ((p[2 * i]! - ux) ** 2 + (p[2 * i + 1]! - uy) ** 2 < r2 * (1 - 1e-9)) return false;
  }
  return true;
}

describe("gridKnnSelf", () => {
  it("equals the k-d tree's exact neighbours (same order, ties by index) on clustered, uniform and lattice points", () => {
    const rng = new Rng(9);
    const sets: [Float64Array, number][] = [
      [points(4000, 11), 4000],
      [Float64Array.from({ length: 6000 }, () => rng.uniform(0, 100)), 3000],
      // A square lattice: many equal distances.
      [
        Float64Array.from({ length: 2 * 900 }, (_, i) =>
          i % 2 === 0 ? (i >> 1) % 30 : Math.floor((i >> 1) / 30),
        ),
        900,
      ],
    ];
    for (const [x, n] of sets) {
      for (const k of [1, 6, 15]) {
        const a = gridKnnSelf(x, n, k);
        const b = kdKnnSelf(buildKdTree(x, n, 2), k);
        expect(Array.from(a.indices)).toEqual(Array.from(b.indices));
        expect(Array.from(a.distances)).toEqual(Array.from(b.distances));
      }
    }
  });
});

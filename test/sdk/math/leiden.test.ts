import { describe, expect, it } from "vitest";
import type { SparseMatrix } from "../../../src/sdk/data/arrays.js";
import {
  type Graph,
  graphFromSparse,
  leiden,
  louvain,
  partitionQuality,
} from "../../../src/sdk/math/leiden.js";
import { Rng } from "../../../src/sdk/math/rng.js";

/** A CSR matrix from (row, col, value) triples. */
function csr(n: number, entries: [number, number, number][]): SparseMatrix {
  const sorted = [...entries].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const indptr = new Int32Array(n + 1);
  for (const [r] of sorted) indptr[r + 1]!++;
  for (let i = 0; i < n; i++) indptr[i + 1]! += indptr[i];
  return {
    kind: "csr",
    dtype: "float64",
    shape: [n, n],
    data: Float64Array.from(sorted, (e) => e[2]),
    indices: Int32Array.from(sorted, (e) => e[1]),
    indptr,
  };
}

/** Symmetric entries (both directions) of undirected edges. */
function undirected(edges: [number, number, number?][]): [number, number, number][] {
  return edges.flatMap(([a, b, w = 1]) => [
    [a, b, w],
    [b, a, w],
  ]);
}

/** `count` cliques of `size` nodes, consecutive cliques joined by one edge (a ring). */
function ringOfCliques(count: number, size: number): SparseMatrix {
  const edges: [number, number][] = [];
  for (let c = 0; c < count; c++) {
    const o = c * size;
    for (let i = 0; i < size; i++) for (let j = i + 1; j < size; j++) edges.push([o + i, o + j]);
    edges.push([o + size - 1, ((c + 1) % count) * size]);
  }
  return csr(count * size, undirected(edges));
}

/** A planted-partition graph: `groups` groups of `size`, edge probability pIn inside, pOut across. */
function plantedPartition(groups: number, size: number, pIn: number, pOut: number, seed: number) {
  const rng = new Rng(seed);
  const n = groups * size;
  const edges: [number, number, number][] = [];
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const same = Math.floor(i / size) === Math.floor(j / size);
      if (rng.next() < (same ? pIn : pOut)) edges.push([i, j, 0.5 + rng.next()]);
    }
  return {
    matrix: csr(n, undirected(edges)),
    truth: Int32Array.from({ length: n }, (_, i) => Math.floor(i / size)),
  };
}

/** Whether each community of `labels` is connected in `g`. */
function connected(g: Graph, labels: Int32Array): boolean {
  const seen = new Uint8Array(g.n);
  const started = new Set<number>();
  for (let s = 0; s < g.n; s++) {
    if (seen[s]) continue;
    if (started.has(labels[s]!)) return false;
    started.add(labels[s]!);
    const stack = [s];
    seen[s] = 1;
    while (stack.length) {
      const v = stack.pop()!;
      for (let k = g.indptr[v]!; k < g.indptr[v + 1]!; k++) {
        const u = g.indices[k]!;
        if (!seen[u] && labels[u] === labels[v]) {
          seen[u] = 1;
          stack.push(u);
        }
      }
    }
  }
  return true;
}

/** Whether two labelings are the same partition (up to renaming). */
function samePartition(a: Int32Array, b: Int32Array): boolean {
  const ab = new Map<number, number>();
  const ba = new Map<number, number>();
  for (let i = 0; i < a.length; i++) {
    if ((ab.get(a[i]!) ?? b[i]) !== b[i] || (ba.get(b[i]!) ?? a[i]) !== a[i]) return false;
    ab.set(a[i]!, b[i]!);
    ba.set(b[i]!, a[i]!);
  }
  return true;
}

describe("graphFromSparse", () => {
  it("builds the undirected graph A + Aᵀ, merging duplicates and reading CSC alike", () => {
    // 0→1 (2), 1→0 (2), 1→2 (1) only one way, a self-loop 2→2 (3), a duplicate 0→1 (1).
    const m = csr(3, [
      [0, 1, 2],
      [0, 1, 1],
      [1, 0, 2],
      [1, 2, 1],
      [2, 2, 3],
    ]);
    const g = graphFromSparse(m);
    const row = (i: number) =>
      Object.fromEntries(
        Array.from(g.indices.subarray(g.indptr[i], g.indptr[i + 1]), (j, k) => [
          j,
          g.weights[g.indptr[i]! + k],
        ]),
      );
    expect(row(0)).toEqual({ 1: 5 });
    expect(row(1)).toEqual({ 0: 5, 2: 1 });
    expect(row(2)).toEqual({ 1: 1, 2: 6 });
    expect(Array.from(g.nodeWeights)).toEqual([5, 6, 7]);
    expect(g.totalWeight).toBe(18);
    const unweighted = graphFromSparse(m, { useWeights: false });
    expect(Array.from(unweighted.nodeWeights)).toEqual([3, 4, 3]);
    const asCsc = graphFromSparse({ ...m, kind: "csc" });
    expect(asCsc.totalWeight).toBe(18);
    expect(() => graphFromSparse({ ...m, shape: [3, 4] })).toThrow(/square/);
  });
});

describe("leiden", () => {
  it("finds the cliques of a ring of cliques", () => {
    const g = graphFromSparse(ringOfCliques(8, 6));
    const r = leiden(g, { rng: new Rng(0) });
    expect(r.nCommunities).toBe(8);
    const truth = Int32Array.from({ length: 48 }, (_, i) => Math.floor(i / 6));
    expect(samePartition(r.membership, truth)).toBe(true);
    expect(r.modularity).toBeCloseTo(partitionQuality(g, truth), 12);
    // Modularity by hand: 8 cliques of 15 internal edges, 8 ring edges; m = 128.
    const m = 8 * 15 + 8;
    const expected = 8 * (15 / m - ((2 * 15 + 2) / (2 * m)) ** 2);
    expect(r.modularity).toBeCloseTo(expected, 12);
  });

  it("recovers a planted partition, with connected communities and a higher quality than the truth allows to beat", () => {
    const { matrix, truth } = plantedPartition(6, 40, 0.3, 0.01, 7);
    const g = graphFromSparse(matrix);
    for (const seed of [0, 1, 2]) {
      const r = leiden(g, { rng: new Rng(seed), nIterations: -1 });
      expect(samePartition(r.membership, truth)).toBe(true);
      expect(connected(g, r.membership)).toBe(true);
      expect(r.quality).toBeGreaterThanOrEqual(partitionQuality(g, truth) - 1e-12);
    }
  });

  it("keeps communities connected at any resolution on a noisy graph", () => {
    const { matrix } = plantedPartition(5, 60, 0.08, 0.02, 3);
    const g = graphFromSparse(matrix);
    for (const resolution of [0.5, 1, 2, 4]) {
      const r = leiden(g, { rng: new Rng(1), resolution, nIterations: 2 });
      expect(connected(g, r.membership)).toBe(true);
      expect(r.quality).toBeCloseTo(partitionQuality(g, r.membership, resolution), 12);
    }
    const coarse = leiden(g, { rng: new Rng(1), resolution: 0.3 });
    const fine = leiden(g, { rng: new Rng(1), resolution: 4 });
    expect(fine.nCommunities).toBeGreaterThan(coarse.nCommunities);
  });

  it("numbers communities by decreasing size, is deterministic per seed, and stops when stable", () => {
    const { matrix } = plantedPartition(4, 50, 0.2, 0.02, 11);
    const g = graphFromSparse(matrix);
    const a = leiden(g, { rng: new Rng(5), nIterations: -1 });
    const b = leiden(g, { rng: new Rng(5), nIterations: -1 });
    expect(a.membership).toEqual(b.membership);
    expect(a.iterations).toBeGreaterThanOrEqual(2); // the last one confirms nothing moved
    const sizes = new Array(a.nCommunities).fill(0);
    for (const c of a.membership) sizes[c]++;
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]).toBeLessThanOrEqual(sizes[i - 1]);
  });

  it("starts from a given partition and handles isolated nodes and an empty graph", () => {
    const m = csr(5, undirected([[0, 1]]));
    const g = graphFromSparse(m);
    const r = leiden(g, { rng: new Rng(0), initial: Int32Array.from([7, 7, 3, 3, 3]) });
    expect(r.membership[0]).toBe(r.membership[1]);
    const empty = leiden(graphFromSparse(csr(0, [])), { rng: new Rng(0) });
    expect(empty.nCommunities).toBe(0);
    expect(() => leiden(g, { rng: new Rng(0), initial: new Int32Array(3) })).toThrow(/initial partition/);
  });

  it("gives the same kind of answer on large graphs (renumbered breadth-first inside)", () => {
    // 2,100 cliques of 10 nodes, shuffled node numbers, each clique weakly tied to the next.
    const count = 2100;
    const size = 10;
    const n = count * size;
    const perm = new Rng(9).permutation(n);
    const edges: [number, number, number][] = [];
    for (let c = 0; c < count; c++) {
      for (let i = 0; i < size; i++)
        for (let j = i + 1; j < size; j++) edges.push([perm[c * size + i]!, perm[c * size + j]!, 1]);
      edges.push([perm[c * size]!, perm[((c + 1) % count) * size + 1]!, 0.01]);
    }
    const g = graphFromSparse(csr(n, undirected(edges)));
    const truth = new Int32Array(n);
    for (let i = 0; i < n; i++) truth[perm[i]!] = Math.floor(i / size);
    // At resolution 1 the resolution limit would merge neighbouring cliques; at 50 they stay apart.
    const r = leiden(g, { rng: new Rng(0), resolution: 50 });
    expect(samePartition(r.membership, truth)).toBe(true);
    expect(connected(g, r.membership)).toBe(true);
    const fromTruth = leiden(g, { rng: new Rng(0), resolution: 50, initial: truth });
    expect(samePartition(fromTruth.membership, truth)).toBe(true);
    const lv = louvain(g, { rng: new Rng(0), resolution: 50 });
    expect(samePartition(lv.membership, truth)).toBe(true);
  });

  it("honours an aborted signal", () => {
    const g = graphFromSparse(ringOfCliques(4, 4));
    const ac = new AbortController();
    ac.abort();
    expect(() => leiden(g, { rng: new Rng(0), signal: ac.signal })).toThrow();
  });
});

describe("louvain", () => {
  it("finds planted communities and reaches a modularity close to Leiden's", () => {
    const { matrix, truth } = plantedPartition(5, 40, 0.3, 0.01, 2);
    const g = graphFromSparse(matrix);
    const lv = louvain(g, { rng: new Rng(0) });
    const ld = leiden(g, { rng: new Rng(0) });
    expect(samePartition(lv.membership, truth)).toBe(true);
    expect(lv.modularity).toBeGreaterThan(ld.modularity - 0.01);
  });
});

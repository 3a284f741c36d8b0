import { describe, expect, it } from "vitest";
import { Rng } from "../../../src/sdk/math/rng.js";
import { findAbParams, optimizeLayoutEuclidean } from "../../../src/sdk/math/umap-layout.js";
import {
  attractiveCoeff,
  COEF_BITS,
  COEF_MAX_EXP,
  COEF_MIN_EXP,
  coefTable,
  optimizeLayout,
  repulsiveCoeff,
} from "../../../src/sdk/math/umap-sgd.js";

/**
 * Edges (row order, both directions) of `clusters` groups of `size` nodes, each node joined to 8
 * random others of its group with random weights; epochs per sample as umap-learn derives them.
 */
function clusteredEdges(clusters: number, size: number, nEpochs: number, seed: number) {
  const rng = new Rng(seed);
  const n = clusters * size;
  const adj: Map<number, number>[] = Array.from({ length: n }, () => new Map());
  for (let i = 0; i < n; i++) {
    const c = Math.floor(i / size);
    for (let e = 0; e < 8; e++) {
      const j = c * size + Math.floor(rng.next() * size);
      if (j === i) continue;
      const w = 0.2 + 0.8 * rng.next();
      adj[i]!.set(j, w);
      adj[j]!.set(i, w);
    }
  }
  const head: number[] = [];
  const tail: number[] = [];
  const w: number[] = [];
  for (let i = 0; i < n; i++)
    for (const [j, x] of [...adj[i]!].sort((a, b) => a[0] - b[0])) {
      head.push(i);
      tail.push(j);
      w.push(x);
    }
  const max = Math.max(...w);
  const eps = Float64Array.from(w, (x) => nEpochs / (nEpochs * (x / max)));
  const init = Float32Array.from({ length: n * 2 }, () => 10 * rng.next());
  return { n, head: Int32Array.from(head), tail: Int32Array.from(tail), eps, init };
}

/** Points nearer another group's centroid than their own. */
function misplaced(emb: Float32Array, n: number, size: number, clusters: number): number {
  const cent = new Float64Array(clusters * 2);
  for (let i = 0; i < n; i++)
    for (let d = 0; d < 2; d++) cent[Math.floor(i / size) * 2 + d]! += emb[i * 2 + d]! / size;
  let wrong = 0;
  for (let i = 0; i < n; i++) {
    let best = -1;
    let bestD = Infinity;
    for (let c = 0; c < clusters; c++) {
      const d = Math.hypot(emb[i * 2]! - cent[c * 2]!, emb[i * 2 + 1]! - cent[c * 2 + 1]!);
      if (d < bestD) {
        bestD = d;
        best = c;
      }
    }
    if (best !== Math.floor(i / size)) wrong++;
  }
  return wrong;
}

describe("optimizeLayout (UMAP SGD on threads)", () => {
  const nEpochs = 200;
  const { n, head, tail, eps, init } = clusteredEdges(5, 120, nEpochs, 7);
  const { a, b } = findAbParams(1, 0.5);
  const seedWords = (seed: number) => {
    const rng = new Rng(seed);
    const words: number[] = [];
    return (w: number) => {
      while (words.length <= w) words.push(rng.uint32());
      return words[w]!;
    };
  };
  const run = async (threads: number, seed = 0, blocks = 4) => {
    const emb = Float32Array.from(init);
    await optimizeLayout(emb, 2, head, tail, eps, nEpochs, threads, {
      a,
      b,
      seed: seedWords(seed),
      minSamplesPerThread: 1,
      blocks,
    });
    return emb;
  };

  it("in one block is the sequential SGD (optimizeLayoutEuclidean, this graph's default) exactly", async () => {
    const one = await run(1, 0, 1);
    const seq = Float32Array.from(init);
    optimizeLayoutEuclidean(seq, 2, head, tail, eps, nEpochs, { a, b, rng: new Rng(0) });
    expect(one).toEqual(seq);
    expect(await run(2, 0, 1)).toEqual(seq);
    const dflt = Float32Array.from(init);
    await optimizeLayout(dflt, 2, head, tail, eps, nEpochs, 2, { a, b, seed: seedWords(0) });
    expect(dflt).toEqual(seq);
  });

  it("in four blocks: the same layout on 1, 2, 3 and 4 threads, another for another seed, clusters apart", async () => {
    const one = await run(1);
    expect(await run(2)).toEqual(one);
    expect(await run(3)).toEqual(one);
    expect(await run(4)).toEqual(one);
    expect(one).not.toEqual(await run(1, 1));
    expect(one).not.toEqual(await run(1, 0, 1));
    expect(one.every(Number.isFinite)).toBe(true);
    expect(misplaced(one, n, 120, 5)).toBe(0);
    expect(misplaced(await run(2, 0, 3), n, 120, 5)).toBe(0);
  });

  it("stops when aborted and leaves the input alone", async () => {
    const ac = new AbortController();
    ac.abort();
    const emb = Float32Array.from(init);
    await expect(
      optimizeLayout(emb, 2, head, tail, eps, nEpochs, 2, {
        a,
        b,
        seed: seedWords(0),
        minSamplesPerThread: 1,
        blocks: 4,
        signal: ac.signal,
      }),
    ).rejects.toThrow();
    expect(emb).toEqual(init);
  });

  it("3-d layouts: the same on one and two threads, finite", async () => {
    const init3 = Float32Array.from({ length: n * 3 }, (_, i) => (i * 7919) % 10);
    const go = async (threads: number) => {
      const emb = Float32Array.from(init3);
      const o = { a, b, seed: seedWords(2), minSamplesPerThread: 1, blocks: 2 };
      await optimizeLayout(emb, 3, head, tail, eps, 50, threads, o);
      return emb;
    };
    const e = await go(2);
    expect(e).toEqual(await go(1));
    expect(e.every(Number.isFinite)).toBe(true);
    expect(e).not.toEqual(init3);
  });
});

describe("the SGD's coefficient table (read at the float32 bits of d²)", () => {
  it("interpolates both coefficients within 3e-4 of the exact ones (relative) over the whole range", () => {
    const { a, b } = findAbParams(1, 0.5);
    const gamma = 1.5;
    const table = coefTable(a, b, gamma);
    const shift = 23 - COEF_BITS;
    const lo = (COEF_MIN_EXP + 127) << COEF_BITS;
    const f = new Float32Array(1);
    const bits = new Int32Array(f.buffer);
    const read = (d2: number, slot: 0 | 1) => {
      f[0] = d2;
      const w = (bits[0]! >> shift) - lo;
      const c0 = table[2 * w + slot]!;
      return c0 + (bits[0]! & ((1 << shift) - 1)) * (1 / (1 << shift)) * (table[2 * w + 2 + slot]! - c0);
    };
    const rng = new Rng(3);
    let worst = 0;
    for (let t = 0; t < 20000; t++) {
      // log-uniform over the covered exponents, at float32 precision as the kernel sees it
      const d2 = Math.fround(2 ** (COEF_MIN_EXP + (COEF_MAX_EXP - COEF_MIN_EXP) * rng.next() * 0.999999));
      const att = attractiveCoeff(d2, a, b);
      const rep = repulsiveCoeff(d2, a, b, gamma);
      worst = Math.max(worst, Math.abs(read(d2, 0) - att) / Math.abs(att), Math.abs(read(d2, 1) - rep) / rep);
    }
    expect(worst).toBeLessThan(3e-4);
    expect(worst).toBeGreaterThan(0); // interpolated, not exact: the check can fail
  });
});

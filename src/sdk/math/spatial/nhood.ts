/**
 * Neighbourhood enrichment (squidpy's `gr.nhood_enrichment`): how often cells of cluster a have
 * graph neighbours of cluster b, against the same count under random relabelling of the cells
 * (within each library when libraries are given). The permutations run on the job's threads over
 * shared memory; permutation q is seeded by (seed, q), so results do not depend on the thread count.
 * Also the interaction matrix (squidpy's `gr.interaction_matrix`).
 */
import { allocArray, toShared } from "../../data/arrays.js";
import { runKernelThreads } from "../row-threads.js";
import type { CsrGraph } from "./graph.js";

/** Edge counts by (row cluster, column cluster): K × K, row-major. Labels must lie in [0, K). */
export function clusterPairCounts(g: CsrGraph, labels: Int32Array, k: number): Float64Array {
  const out = new Float64Array(k * k);
  const { n, indptr, indices } = g;
  for (let i = 0; i < n; i++) {
    const a = (labels[i] as number) * k;
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++)
      out[a + (labels[indices[p] as number] as number)]++;
  }
  return out;
}

/** Options of `nhoodEnrichment`. */
export interface NhoodOptions {
  readonly nPerms: number;
  readonly seed: number;
  /** Library of each cell (codes ≥ 0): labels are shuffled within libraries only. */
  readonly libraries?: Int32Array | null;
  readonly threads?: number;
  readonly signal?: AbortSignal;
}

/** Observed counts and z-scores (count − mean) / sd of the permuted counts (population sd). */
export interface NhoodResult {
  readonly count: Float64Array;
  readonly zscore: Float64Array;
}

/** Counts, and z-scores against `nPerms` relabellings. */
export async function nhoodEnrichment(
  g: CsrGraph,
  labels: Int32Array,
  k: number,
  opts: NhoodOptions,
): Promise<NhoodResult> {
  const count = clusterPairCounts(g, labels, k);
  const n = g.n;
  const parts = Math.max(1, Math.min(opts.threads ?? 1, opts.nPerms));
  const share = Math.ceil(opts.nPerms / parts);
  const sums = allocArray("float64", parts * k * k * 2) as Float64Array;
  // Library members in order, and each library's [start, end) in that list: shuffles stay inside.
  let order: Int32Array;
  let bounds: Int32Array;
  if (opts.libraries) {
    const libs = opts.libraries;
    let nLib = 0;
    for (let i = 0; i < n; i++) nLib = Math.max(nLib, (libs[i] as number) + 1);
    const sizes = new Int32Array(nLib + 1);
    for (let i = 0; i < n; i++) if ((libs[i] as number) >= 0) sizes[(libs[i] as number) + 1]++;
    for (let l = 0; l < nLib; l++) sizes[l + 1] = (sizes[l + 1] as number) + (sizes[l] as number);
    order = allocArray("int32", sizes[nLib] as number) as Int32Array;
    const fill = sizes.slice(0, nLib);
    for (let i = 0; i < n; i++) {
      const l = libs[i] as number;
      if (l >= 0) order[fill[l]++] = i;
    }
    bounds = toShared(sizes);
  } else {
    order = allocArray("int32", n) as Int32Array;
    for (let i = 0; i < n; i++) order[i] = i;
    bounds = toShared(Int32Array.of(0, n));
  }
  const shLabels = toShared(labels);
  const indptr = toShared(g.indptr);
  const indices = toShared(g.indices);
  await runKernelThreads(
    nhoodKernel,
    parts,
    (p) => [
      indptr,
      indices,
      shLabels,
      order,
      bounds,
      k,
      n,
      p * share,
      Math.min(opts.nPerms, (p + 1) * share),
      opts.seed,
      sums,
      p,
    ],
    opts.signal,
  );
  const zscore = new Float64Array(k * k);
  const kk = k * k;
  for (let c = 0; c < kk; c++) {
    let s = 0;
    let s2 = 0;
    for (let p = 0; p < parts; p++) {
      s += sums[p * 2 * kk + c] as number;
      s2 += sums[p * 2 * kk + kk + c] as number;
    }
    const mean = s / opts.nPerms;
    const variance = Math.max(0, s2 / opts.nPerms - mean * mean);
    zscore[c] = ((count[c] as number) - mean) / Math.sqrt(variance);
  }
  return { count, zscore };
}

/**
 * Permutations [from, to) of the labels (within each range of `bounds` over `order`), accumulating
 * per cluster pair Σ count and Σ count² into this part's slice of `sums`. Self-contained: it runs as
 * source text in worker threads.
 */
function nhoodKernel(
  indptr: Int32Array,
  indices: Int32Array,
  labels: Int32Array,
  order: Int32Array,
  bounds: Int32Array,
  k: number,
  n: number,
  from: number,
  to: number,
  seed: number,
  sums: Float64Array,
  part: number,
): void {
  const kk = k * k;
  // Labels fit a byte for up to 255 clusters: a quarter of the cache the edge loop's lookups touch.
  const perm = k <= 255 ? new Uint8Array(n) : new Int32Array(n);
  // Integer counts (an edge count fits 32 bits), summed into doubles once per permutation.
  const cnt = new Int32Array(kk);
  const base = part * 2 * kk;
  const nb = bounds.length - 1;
  // Without libraries the members are 0…n−1 in order: shuffle positions directly.
  let identity = nb === 1 && (bounds[0] as number) === 0 && (bounds[1] as number) === n;
  for (let i = 0; identity && i < n; i++) if ((order[i] as number) !== i) identity = false;
  const first = indptr[0] as number;
  for (let q = from; q < to; q++) {
    // The per-permutation stream (splitmix-like on a 32-bit counter), inlined: no closure per draw.
    let h = ((Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(q, 0x85ebca6b)) + 0x6a09e667) >>> 0;
    perm.set(labels);
    for (let b = 0; b < nb; b++) {
      const s = bounds[b] as number;
      const e = bounds[b + 1] as number;
      for (let i = e - 1; i > s; i--) {
        // One 32-bit draw below 2^16 choices (bias < 2^-16 of a choice's probability), else 53 bits.
        const span = i - s + 1;
        h = (h + 0x9e3779b9) >>> 0;
        let t = Math.imul(h ^ (h >>> 16), 0x21f0aaad);
        t = Math.imul(t ^ (t >>> 15), 0x735a2d97);
        let u = ((t ^ (t >>> 15)) >>> 0) / 4294967296;
        if (span > 65536) {
          h = (h + 0x9e3779b9) >>> 0;
          let t2 = Math.imul(h ^ (h >>> 16), 0x21f0aaad);
          t2 = Math.imul(t2 ^ (t2 >>> 15), 0x735a2d97);
          u = (u * 4294967296 * 2097152 + (((t2 ^ (t2 >>> 15)) >>> 0) >>> 11)) / 9007199254740992;
        }
        const j = s + Math.floor(u * span);
        const ci = identity ? i : (order[i] as number);
        const cj = identity ? j : (order[j] as number);
        const tmp = perm[ci] as number;
        perm[ci] = perm[cj] as number;
        perm[cj] = tmp;
      }
    }
    cnt.fill(0);
    let p = first;
    for (let i = 0; i < n; i++) {
      const a = (perm[i] as number) * k;
      const e = indptr[i + 1] as number;
      for (; p < e; p++) cnt[a + (perm[indices[p] as number] as number)]++;
    }
    for (let c = 0; c < kk; c++) {
      const v = cnt[c] as number;
      sums[base + c] += v;
      sums[base + kk + c] += v * v;
    }
  }
}

/**
 * squidpy's interaction matrix: Σ over edges (i → j) of 1 (or the edge weight) by (cluster of i,
 * cluster of j), cells with a missing label (< 0) left out; `normalized` divides each row by its sum.
 */
export function interactionMatrix(
  g: CsrGraph,
  labels: Int32Array,
  k: number,
  weights: boolean,
  normalized: boolean,
): Float64Array {
  const out = new Float64Array(k * k);
  const { n, indptr, indices, data } = g;
  // One pass over the CSR rows; counting edges never reads the weights.
  let p = indptr[0] as number;
  for (let i = 0; i < n; i++) {
    const e = indptr[i + 1] as number;
    const a = labels[i] as number;
    if (a < 0) {
      p = e;
      continue;
    }
    const row = a * k;
    if (weights) {
      for (; p < e; p++) {
        const b = labels[indices[p] as number] as number;
        if (b >= 0) out[row + b] += data[p] as number;
      }
    } else {
      for (; p < e; p++) {
        const b = labels[indices[p] as number] as number;
        if (b >= 0) out[row + b]++;
      }
    }
  }
  if (normalized) {
    for (let a = 0; a < k; a++) {
      let s = 0;
      for (let b = 0; b < k; b++) s += out[a * k + b] as number;
      for (let b = 0; b < k; b++) out[a * k + b] = (out[a * k + b] as number) / s;
    }
  }
  return out;
}

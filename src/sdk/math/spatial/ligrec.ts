/**
 * The ligand–receptor permutation test of CellPhoneDB as squidpy's `gr.ligrec` runs it: for each
 * interaction (source gene s, target gene t) and cluster pair (c₁, c₂), the mean m = (x̄_s,c₁ +
 * x̄_t,c₂) / 2 when both are positive, and the fraction of label permutations whose cluster means
 * give a larger sum; NaN where either gene is expressed in fewer than `threshold` of its cluster's
 * cells. Permuted cluster means come from the sparse rows of the interaction genes only (a pass
 * over their stored entries per permutation); permutations run on the job's threads, each seeded by
 * (seed, its index).
 */
import { allocArray } from "../../data/arrays.js";
import { runKernelThreads } from "../row-threads.js";

/** Cells × genes (only the interaction genes, 0…G−1) as CSR with float64 values on shared memory. */
export interface GeneRows {
  readonly indptr: Int32Array;
  readonly indices: Int32Array;
  readonly data: Float64Array;
  readonly nGenes: number;
}

/** Inputs of `ligrecTest`. */
export interface LigrecInput {
  readonly rows: GeneRows;
  /** Cluster of each cell, 0…K−1. */
  readonly labels: Int32Array;
  readonly k: number;
  /** Interactions as gene index pairs [s₀, t₀, s₁, t₁, …]. */
  readonly pairs: Int32Array;
  /** Cluster pairs [c₁, c₂, …]. */
  readonly clusterPairs: Int32Array;
  readonly threshold: number;
  readonly nPerms: number;
  readonly seed: number;
  readonly threads?: number;
  readonly signal?: AbortSignal;
}

/** Means and p-values, interactions × cluster pairs (row-major). */
export interface LigrecResult {
  readonly means: Float64Array;
  readonly pvalues: Float64Array;
}

/** Per-cluster means (K × G) and expression fractions of the genes. */
function clusterStats(rows: GeneRows, labels: Int32Array, k: number) {
  const g = rows.nGenes;
  const sums = new Float64Array(k * g);
  const pos = new Float64Array(k * g);
  const sizes = new Float64Array(k);
  const n = labels.length;
  for (let i = 0; i < n; i++) {
    const c = labels[i] as number;
    sizes[c]++;
    for (let p = rows.indptr[i] as number; p < (rows.indptr[i + 1] as number); p++) {
      const v = rows.data[p] as number;
      sums[c * g + (rows.indices[p] as number)] += v;
      if (v > 0) pos[c * g + (rows.indices[p] as number)]++;
    }
  }
  for (let c = 0; c < k; c++) {
    for (let j = 0; j < g; j++) {
      sums[c * g + j] = (sums[c * g + j] as number) / (sizes[c] as number);
      pos[c * g + j] = (pos[c * g + j] as number) / (sizes[c] as number);
    }
  }
  return { mean: sums, frac: pos, sizes };
}

/** Run the test. */
export async function ligrecTest(input: LigrecInput): Promise<LigrecResult> {
  const { rows, labels, k, pairs, clusterPairs, threshold, nPerms } = input;
  const g = rows.nGenes;
  const nI = pairs.length / 2;
  const nC = clusterPairs.length / 2;
  const { mean, frac, sizes } = clusterStats(rows, labels, k);
  const means = new Float64Array(nI * nC);
  // Which (interaction, cluster pair) cells are tested: 1, or 0 (mean 0 / under the threshold: NaN).
  const tested = allocArray("uint8", nI * nC) as Uint8Array;
  const observed = allocArray("float64", nI * nC) as Float64Array;
  for (let i = 0; i < nI; i++) {
    const s = pairs[2 * i] as number;
    const t = pairs[2 * i + 1] as number;
    for (let j = 0; j < nC; j++) {
      const c1 = clusterPairs[2 * j] as number;
      const c2 = clusterPairs[2 * j + 1] as number;
      const m1 = mean[c1 * g + s] as number;
      const m2 = mean[c2 * g + t] as number;
      if (m1 > 0 && m2 > 0) {
        means[i * nC + j] = (m1 + m2) / 2;
        if ((frac[c1 * g + s] as number) >= threshold && (frac[c2 * g + t] as number) >= threshold) {
          tested[i * nC + j] = 1;
          observed[i * nC + j] = m1 + m2;
        }
      }
    }
  }
  const parts = Math.max(1, Math.min(input.threads ?? 1, nPerms));
  const share = Math.ceil(nPerms / parts);
  const counts = allocArray("float64", parts * nI * nC) as Float64Array;
  const shared = <T extends Int32Array | Float64Array>(a: T): T => {
    if (a.buffer instanceof SharedArrayBuffer) return a;
    const out = allocArray(a instanceof Int32Array ? "int32" : "float64", a.length) as T;
    out.set(a);
    return out;
  };
  const inv = allocArray("float64", k) as Float64Array;
  for (let c = 0; c < k; c++) inv[c] = 1 / (sizes[c] as number);
  await runKernelThreads(
    ligrecKernel,
    parts,
    (p) => [
      shared(rows.indptr),
      shared(rows.indices),
      shared(rows.data),
      g,
      shared(labels),
      k,
      inv,
      shared(pairs),
      shared(clusterPairs),
      tested,
      observed,
      p * share,
      Math.min(nPerms, (p + 1) * share),
      input.seed,
      counts,
      p,
    ],
    input.signal,
  );
  const pvalues = new Float64Array(nI * nC);
  for (let x = 0; x < nI * nC; x++) {
    if (!tested[x]) {
      pvalues[x] = Number.NaN;
      continue;
    }
    let c = 0;
    for (let p = 0; p < parts; p++) c += counts[p * nI * nC + x] as number;
    pvalues[x] = c / nPerms;
  }
  return { means, pvalues };
}

/**
 * Permutations [from, to): shuffle the labels (seeded by (seed, index)), the cluster means of every
 * gene from the stored entries, then count per tested cell whether the permuted sum beats the
 * observed one. Self-contained: it runs as source text in worker threads.
 */
function ligrecKernel(
  indptr: Int32Array,
  indices: Int32Array,
  data: Float64Array,
  g: number,
  labels: Int32Array,
  k: number,
  inv: Float64Array,
  pairs: Int32Array,
  clusterPairs: Int32Array,
  tested: Uint8Array,
  observed: Float64Array,
  from: number,
  to: number,
  seed: number,
  counts: Float64Array,
  part: number,
): void {
  const n = labels.length;
  const nI = pairs.length / 2;
  const nC = clusterPairs.length / 2;
  const perm = new Int32Array(n);
  const sums = new Float64Array(k * g);
  const base = part * nI * nC;
  for (let q = from; q < to; q++) {
    let h = ((Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(q, 0x85ebca6b)) + 0x6a09e667) >>> 0;
    const next32 = () => {
      h = (h + 0x9e3779b9) >>> 0;
      let t = h;
      t = Math.imul(t ^ (t >>> 16), 0x21f0aaad);
      t = Math.imul(t ^ (t >>> 15), 0x735a2d97);
      return (t ^ (t >>> 15)) >>> 0;
    };
    perm.set(labels);
    for (let i = n - 1; i > 0; i--) {
      const u = (next32() * 2097152 + (next32() >>> 11)) / 9007199254740992;
      const j = Math.floor(u * (i + 1));
      const t = perm[i] as number;
      perm[i] = perm[j] as number;
      perm[j] = t;
    }
    sums.fill(0);
    for (let i = 0; i < n; i++) {
      const o = (perm[i] as number) * g;
      const e = indptr[i + 1] as number;
      for (let p = indptr[i] as number; p < e; p++) sums[o + (indices[p] as number)] += data[p] as number;
    }
    for (let c = 0; c < k; c++) {
      const f = inv[c] as number;
      for (let j = 0; j < g; j++) sums[c * g + j] = (sums[c * g + j] as number) * f;
    }
    for (let i = 0; i < nI; i++) {
      const s = pairs[2 * i] as number;
      const t = pairs[2 * i + 1] as number;
      for (let j = 0; j < nC; j++) {
        const x = i * nC + j;
        if (!tested[x]) continue;
        const c1 = clusterPairs[2 * j] as number;
        const c2 = clusterPairs[2 * j + 1] as number;
        if ((sums[c1 * g + s] as number) + (sums[c2 * g + t] as number) > (observed[x] as number))
          counts[base + x]++;
      }
    }
  }
}

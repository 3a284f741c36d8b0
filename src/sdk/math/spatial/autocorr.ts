/**
 * Global spatial autocorrelation: Moran's I and Geary's C of many features over one weights graph,
 * with the analytic (normality) variance and permutation null distributions, as squidpy 1.8.3's
 * `gr.spatial_autocorr` computes them (scanpy's `morans_i`/`gearys_c`; the variances of pysal/esda).
 *
 * squidpy draws a permutation π of the cells and scores the row-permuted graph W'ᵢⱼ = W_π(i)j. Then
 * (W'z)ᵢ = (Wz)_π(i), so with y = Wz computed once per feature a permutation costs O(n) per feature
 * instead of a sparse product: Moran's numerator is Σᵢ zᵢ y_π(i), and Geary's is
 * Σᵢ (zᵢ² r_π(i) − 2 zᵢ y_π(i)) + Σⱼ zⱼ² cⱼ (r the row sums, c the column sums of W). The
 * permutations run on the job's threads over shared memory, each seeded by (seed, its index), so the
 * result does not depend on the number of threads.
 */
import { allocArray } from "../../data/arrays.js";
import { runKernelThreads } from "../row-threads.js";
import type { CsrGraph } from "./graph.js";

/** Which statistic. */
export type AutocorrMode = "moran" | "geary";

/** Features as rows of a dense feature × cell matrix (float64, shared memory for threads). */
export interface FeatureRows {
  readonly data: Float64Array;
  readonly nFeatures: number;
  readonly nCells: number;
}

/** Weight moments S0, S1, S2 (pysal's). */
export interface WeightMoments {
  readonly s0: number;
  readonly s1: number;
  readonly s2: number;
}

/** Row-normalise weights in place of a copy (scikit-learn's `normalize(norm="l1")`: divide by Σ|w|). */
export function rowNormalize(g: CsrGraph<Float64Array>): CsrGraph<Float64Array> {
  const data = new Float64Array(g.data.length);
  for (let i = 0; i < g.n; i++) {
    let s = 0;
    for (let p = g.indptr[i] as number; p < (g.indptr[i + 1] as number); p++)
      s += Math.abs(g.data[p] as number);
    for (let p = g.indptr[i] as number; p < (g.indptr[i + 1] as number); p++) {
      data[p] = s > 0 ? (g.data[p] as number) / s : (g.data[p] as number);
    }
  }
  return { n: g.n, indptr: g.indptr, indices: g.indices, data };
}

/** S0 = Σw, S1 = ½ Σ (wᵢⱼ + wⱼᵢ)², S2 = Σᵢ (rowᵢ + colᵢ)². */
export function weightMoments(g: CsrGraph): WeightMoments {
  const { n, indptr, indices, data } = g;
  const row = new Float64Array(n);
  const col = new Float64Array(n);
  let s0 = 0;
  for (let i = 0; i < n; i++) {
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      const w = data[p] as number;
      s0 += w;
      row[i] += w;
      col[indices[p] as number] += w;
    }
  }
  // (w + wᵀ)² summed: Σ w² twice plus 2 Σ wᵢⱼ wⱼᵢ over pairs stored both ways.
  let sq = 0;
  let cross = 0;
  for (let i = 0; i < n; i++) {
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      const w = data[p] as number;
      sq += w * w;
      const j = indices[p] as number;
      const back = lookup(g, j, i);
      cross += w * back;
    }
  }
  const s1 = (2 * sq + 2 * cross) / 2;
  let s2 = 0;
  for (let i = 0; i < n; i++) s2 += ((row[i] as number) + (col[i] as number)) ** 2;
  return { s0, s1, s2 };
}

/** Weight (i, j), 0 when absent (binary search in the sorted row). */
function lookup(g: CsrGraph, i: number, j: number): number {
  let lo = g.indptr[i] as number;
  let hi = g.indptr[i + 1] as number;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    const c = g.indices[m] as number;
    if (c === j) return g.data[m] as number;
    if (c < j) lo = m + 1;
    else hi = m;
  }
  return 0;
}

/** Analytic variance of the statistic under normality (pysal/esda, as squidpy 1.8.3). */
export function normalVariance(mode: AutocorrMode, m: WeightMoments, n: number): number {
  const s02 = m.s0 * m.s0;
  if (mode === "geary") return ((2 * m.s1 + m.s2) * (n - 1) - 4 * s02) / (2 * (n + 1) * s02);
  const v = (n * n * m.s1 - n * m.s2 + 3 * s02) / ((n - 1) * (n + 1) * s02);
  return v - (1 / (n - 1)) ** 2;
}

/**
 * Centred values z and y = Wz, both cell-major (n × features: a cell's values for every feature are
 * contiguous, so a permutation reads whole rows of y), Σz² and Σⱼ zⱼ² cⱼ per feature, row sums of W.
 */
interface Prepared {
  readonly z: Float64Array;
  readonly y: Float64Array;
  readonly z2: Float64Array;
  readonly zc: Float64Array;
  readonly rowSums: Float64Array;
}

function prepare(g: CsrGraph, f: FeatureRows): Prepared {
  const { n, indptr, indices, data } = g;
  const { nFeatures: m } = f;
  const z = allocArray("float64", n * m) as Float64Array;
  const y = allocArray("float64", n * m) as Float64Array;
  const z2 = new Float64Array(m);
  const zc = new Float64Array(m);
  const rowSums = allocArray("float64", n) as Float64Array;
  const colSums = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      rowSums[i] += data[p] as number;
      colSums[indices[p] as number] += data[p] as number;
    }
  }
  for (let k = 0; k < m; k++) {
    const o = k * n;
    let mean = 0;
    for (let i = 0; i < n; i++) mean += f.data[o + i] as number;
    mean /= n;
    let ss = 0;
    let sc = 0;
    for (let i = 0; i < n; i++) {
      const v = (f.data[o + i] as number) - mean;
      z[i * m + k] = v;
      ss += v * v;
      sc += v * v * (colSums[i] as number);
    }
    z2[k] = ss;
    zc[k] = sc;
  }
  for (let i = 0; i < n; i++) {
    const yi = i * m;
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      const w = data[p] as number;
      const zj = (indices[p] as number) * m;
      for (let k = 0; k < m; k++) y[yi + k] += w * (z[zj + k] as number);
    }
  }
  return { z, y, z2, zc, rowSums };
}

/** The observed statistic of each feature (scanpy's `morans_i` / `gearys_c`). */
export function autocorrScores(g: CsrGraph, f: FeatureRows, mode: AutocorrMode): Float64Array {
  return scoresFrom(prepare(g, f), g, f.nFeatures, mode);
}

function scoresFrom(pr: Prepared, g: CsrGraph, m: number, mode: AutocorrMode): Float64Array {
  const { n, indptr, indices, data } = g;
  let s0 = 0;
  for (let p = 0; p < data.length; p++) s0 += data[p] as number;
  const num = new Float64Array(m);
  if (mode === "moran") {
    for (let i = 0; i < n; i++)
      for (let k = 0; k < m; k++) num[k] += (pr.z[i * m + k] as number) * (pr.y[i * m + k] as number);
  } else {
    for (let i = 0; i < n; i++) {
      for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
        const w = data[p] as number;
        const zj = (indices[p] as number) * m;
        for (let k = 0; k < m; k++) {
          const d = (pr.z[i * m + k] as number) - (pr.z[zj + k] as number);
          num[k] += w * d * d;
        }
      }
    }
  }
  const out = new Float64Array(m);
  for (let k = 0; k < m; k++) {
    out[k] =
      mode === "moran"
        ? ((n / s0) * (num[k] as number)) / (pr.z2[k] as number)
        : ((n - 1) * (num[k] as number)) / (2 * s0 * (pr.z2[k] as number));
  }
  return out;
}

/** Options of the permutation test. */
export interface AutocorrPermOptions {
  readonly nPerms: number;
  readonly seed: number;
  readonly threads?: number;
  readonly signal?: AbortSignal;
}

/** Observed statistics and the nPerms × nFeatures permuted ones. */
export interface AutocorrResult {
  readonly scores: Float64Array;
  readonly perms: Float64Array | null;
}

/**
 * The observed statistics and, with `nPerms` > 0, the statistics of `nPerms` row-permuted graphs
 * (squidpy's `_score_helper`), on `threads` threads.
 */
export async function autocorrWithPerms(
  g: CsrGraph,
  f: FeatureRows,
  mode: AutocorrMode,
  opts: AutocorrPermOptions,
): Promise<AutocorrResult> {
  const pr = prepare(g, f);
  const scores = scoresFrom(pr, g, f.nFeatures, mode);
  if (opts.nPerms <= 0) return { scores, perms: null };
  const { n } = g;
  const m = f.nFeatures;
  const nPerms = opts.nPerms;
  let s0 = 0;
  for (let p = 0; p < g.data.length; p++) s0 += g.data[p] as number;
  const sumA = allocArray("float64", nPerms * m) as Float64Array;
  const sumB = allocArray("float64", mode === "geary" ? nPerms * m : 0) as Float64Array;
  const parts = Math.max(1, Math.min(opts.threads ?? 1, nPerms));
  const share = Math.ceil(nPerms / parts);
  await runKernelThreads(
    permutationKernel,
    parts,
    (p) => [
      pr.z,
      pr.y,
      pr.rowSums,
      m,
      n,
      p * share,
      Math.min(nPerms, (p + 1) * share),
      opts.seed,
      mode === "geary" ? 1 : 0,
      sumA,
      sumB,
    ],
    opts.signal,
  );
  const perms = new Float64Array(nPerms * m);
  for (let q = 0; q < nPerms; q++) {
    for (let k = 0; k < m; k++) {
      const a = sumA[q * m + k] as number;
      perms[q * m + k] =
        mode === "moran"
          ? ((n / s0) * a) / (pr.z2[k] as number)
          : ((n - 1) * ((sumB[q * m + k] as number) - 2 * a + (pr.zc[k] as number))) /
            (2 * s0 * (pr.z2[k] as number));
    }
  }
  return { scores, perms };
}

/**
 * Permutations [from, to): for each, a Fisher–Yates shuffle seeded by (seed, index), then per
 * feature A = Σᵢ zᵢ y_π(i) and (Geary) B = Σᵢ zᵢ² r_π(i), reading z and y cell-major (row π(i) of y
 * is contiguous). Self-contained: it runs as source text in worker threads.
 */
function permutationKernel(
  z: Float64Array,
  y: Float64Array,
  r: Float64Array,
  m: number,
  n: number,
  from: number,
  to: number,
  seed: number,
  geary: number,
  sumA: Float64Array,
  sumB: Float64Array,
): void {
  const perm = new Int32Array(n);
  const a = new Float64Array(m);
  const b = new Float64Array(m);
  for (let q = from; q < to; q++) {
    // splitmix32-style hashing of a counter, seeded per permutation index.
    let h = ((Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(q, 0x85ebca6b)) + 0x6a09e667) >>> 0;
    const next32 = () => {
      h = (h + 0x9e3779b9) >>> 0;
      let t = h;
      t = Math.imul(t ^ (t >>> 16), 0x21f0aaad);
      t = Math.imul(t ^ (t >>> 15), 0x735a2d97);
      return (t ^ (t >>> 15)) >>> 0;
    };
    for (let i = 0; i < n; i++) perm[i] = i;
    for (let i = n - 1; i > 0; i--) {
      // 53 random bits: an unbiased-enough index for any n below 2^31.
      const u = (next32() * 2097152 + (next32() >>> 11)) / 9007199254740992;
      const j = Math.floor(u * (i + 1));
      const t = perm[i] as number;
      perm[i] = perm[j] as number;
      perm[j] = t;
    }
    a.fill(0);
    b.fill(0);
    for (let i = 0; i < n; i++) {
      const p = perm[i] as number;
      const zi = i * m;
      const yp = p * m;
      for (let k = 0; k < m; k++) a[k] += (z[zi + k] as number) * (y[yp + k] as number);
      if (geary) {
        const rp = r[p] as number;
        for (let k = 0; k < m; k++) {
          const v = z[zi + k] as number;
          b[k] += v * v * rp;
        }
      }
    }
    for (let k = 0; k < m; k++) {
      sumA[q * m + k] = a[k] as number;
      if (geary) sumB[q * m + k] = b[k] as number;
    }
  }
}

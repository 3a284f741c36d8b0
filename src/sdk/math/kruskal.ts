/**
 * The Kruskal–Wallis H test (scipy's `stats.kruskal`): ranks of all values pooled (average ties),
 * H = 12 / (N(N+1)) Σ R_g² / n_g − 3(N+1), divided by the tie correction 1 − Σ(t³ − t)/(N³ − N), with
 * the p-value from the chi-square tail on k − 1 degrees of freedom (k = non-empty groups).
 *
 * Expression matrices are mostly zeros, so the test takes the non-zero values and a count of zeros
 * per group: the zeros form one tie block ranked between the negative and the positive values, and
 * only the non-zeros are sorted. Explicit zeros join the same block.
 */
import { chi2Sf } from "./gamma-inc.js";

/** One test's outcome. */
export interface KruskalResult {
  /** H, tie-corrected; NaN when every value is tied or fewer than two groups have values. */
  readonly statistic: number;
  /** P(χ²_{k−1} > H); NaN with the statistic. */
  readonly pvalue: number;
  /** Non-empty groups (k). */
  readonly groups: number;
}

/** Reusable buffers of {@link kruskalSparse}, sized for the largest call. */
export interface KruskalScratch {
  order: Uint32Array;
  rankSum: Float64Array;
  count: Float64Array;
}

/** Scratch buffers for up to `n` values in `nGroups` groups. */
export function kruskalScratch(n: number, nGroups: number): KruskalScratch {
  return {
    order: new Uint32Array(n),
    rankSum: new Float64Array(nGroups),
    count: new Float64Array(nGroups),
  };
}

/**
 * Kruskal–Wallis over values given as `m` entries (`values[i]` in group `groups[i]`, a group in
 * [0, nGroups); NaN values are skipped) plus `zeros[g]` implicit zero values in each group.
 */
export function kruskalSparse(
  values: ArrayLike<number>,
  groups: ArrayLike<number>,
  m: number,
  zeros: ArrayLike<number> | null,
  nGroups: number,
  scratch: KruskalScratch = kruskalScratch(m, nGroups),
): KruskalResult {
  const { rankSum, count } = scratch;
  if (scratch.order.length < m) scratch.order = new Uint32Array(m);
  const order = scratch.order;
  rankSum.fill(0, 0, nGroups);
  count.fill(0, 0, nGroups);
  let nZero = 0;
  for (let g = 0; g < nGroups; g++) {
    const z = zeros ? zeros[g]! : 0;
    count[g] = z;
    nZero += z;
  }
  // Non-zero, non-NaN entries are ranked by sorting; zeros are counted into their group's block.
  let k = 0;
  let nNeg = 0;
  for (let i = 0; i < m; i++) {
    const v = values[i]!;
    if (Number.isNaN(v)) continue;
    const g = groups[i]!;
    count[g]!++;
    if (v === 0) {
      nZero++;
      continue;
    }
    if (v < 0) nNeg++;
    order[k++] = i;
  }
  const sorted = order.subarray(0, k);
  sorted.sort((a, b) => values[a]! - values[b]! || a - b);
  let n = 0;
  for (let g = 0; g < nGroups; g++) n += count[g]!;
  let tieSum = 0;
  // Zeros, implicit and explicit, form one tie block ranked right after the negatives.
  if (nZero > 0) {
    const zeroRank = nNeg + (nZero + 1) / 2;
    if (zeros) for (let g = 0; g < nGroups; g++) rankSum[g]! += zeros[g]! * zeroRank;
    for (let i = 0; i < m; i++) if (values[i] === 0) rankSum[groups[i]!]! += zeroRank;
    tieSum += nZero * nZero * nZero - nZero;
  }
  let pos = 0; // position in the sorted non-zeros
  while (pos < k) {
    const v = values[sorted[pos]!]!;
    let end = pos + 1;
    while (end < k && values[sorted[end]!] === v) end++;
    // 1-based rank of sorted position p is p + 1, shifted past the zero block for positives.
    const shift = v > 0 ? nZero : 0;
    const r = shift + (pos + end + 1) / 2;
    for (let q = pos; q < end; q++) rankSum[groups[sorted[q]!]!]! += r;
    const t = end - pos;
    tieSum += t * t * t - t;
    pos = end;
  }
  let nonEmpty = 0;
  let s = 0;
  for (let g = 0; g < nGroups; g++) {
    const c = count[g]!;
    if (c > 0) {
      nonEmpty++;
      s += (rankSum[g]! * rankSum[g]!) / c;
    }
  }
  if (nonEmpty < 2) return { statistic: Number.NaN, pvalue: Number.NaN, groups: nonEmpty };
  const h = (12 / (n * (n + 1))) * s - 3 * (n + 1);
  const ties = 1 - tieSum / (n * n * n - n);
  const statistic = h / ties;
  if (!Number.isFinite(statistic)) return { statistic: Number.NaN, pvalue: Number.NaN, groups: nonEmpty };
  return { statistic, pvalue: chi2Sf(statistic, nonEmpty - 1), groups: nonEmpty };
}

/** Kruskal–Wallis over dense values: `values[i]` belongs to group `groups[i]` (negative: left out). */
export function kruskalWallis(
  values: ArrayLike<number>,
  groups: ArrayLike<number>,
  nGroups: number,
): KruskalResult {
  const n = values.length;
  const v = new Float64Array(n);
  const g = new Int32Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    const gi = groups[i]!;
    if (gi < 0) continue;
    if (gi >= nGroups) throw new Error(`kruskalWallis: group ${gi} of value ${i} is not below ${nGroups}`);
    v[m] = values[i]!;
    g[m++] = gi;
  }
  return kruskalSparse(v, g, m, null, nGroups);
}

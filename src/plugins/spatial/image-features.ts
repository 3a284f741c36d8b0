/**
 * The image statistics behind squidpy's `im.calculate_image_features`: per crop and channel, summary
 * quantiles (numpy's linear `np.quantile`), a histogram (`np.histogram`), and grey-level co-occurrence
 * texture properties (scikit-image's `graycomatrix` with 256 levels, not symmetric, not normed, then
 * `graycoprops`). Pure functions over a crop; not an operations module.
 */

/** numpy's default (linear) quantile of sorted values. */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const pos = q * (n - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  const f = pos - lo;
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * f;
}

/** Counts of `values` in `bins` equal bins over [lo, hi] (the last bin closed), as `np.histogram`. */
export function histogramCounts(
  values: ArrayLike<number>,
  bins: number,
  lo: number,
  hi: number,
): Float64Array {
  const out = new Float64Array(bins);
  if (lo === hi) {
    // numpy widens an empty range to [lo − 0.5, hi + 0.5]
    lo -= 0.5;
    hi += 0.5;
  }
  const w = (hi - lo) / bins;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!(v >= lo && v <= hi)) continue;
    out[Math.min(bins - 1, Math.floor((v - lo) / w))]! += 1;
  }
  return out;
}

/** The texture properties squidpy computes by default. */
export const TEXTURE_PROPS = ["contrast", "dissimilarity", "homogeneity", "correlation", "ASM"] as const;

/** One texture property name. */
export type TextureProp = (typeof TEXTURE_PROPS)[number] | "energy";

/**
 * GLCM properties of a 2-d crop of grey levels 0…255 (h × w, row-major) for one pixel offset given
 * as a distance and an angle (skimage: row step round(sin θ · d), column step round(cos θ · d)).
 * Returns the properties in the order asked; `counts` is a 65,536-entry scratch left zeroed.
 */
export function glcmProps(
  grey: Uint8Array,
  h: number,
  w: number,
  distance: number,
  angle: number,
  props: readonly TextureProp[],
  counts: Float64Array,
): number[] {
  const dr = Math.round(Math.sin(angle) * distance);
  const dc = Math.round(Math.cos(angle) * distance);
  const touched: number[] = [];
  let total = 0;
  for (let r = Math.max(0, -dr); r < Math.min(h, h - dr); r++) {
    for (let c = Math.max(0, -dc); c < Math.min(w, w - dc); c++) {
      const k = grey[r * w + c]! * 256 + grey[(r + dr) * w + c + dc]!;
      if (counts[k] === 0) touched.push(k);
      counts[k]! += 1;
      total++;
    }
  }
  let contrast = 0;
  let dissimilarity = 0;
  let homogeneity = 0;
  let asm = 0;
  let mi = 0;
  let mj = 0;
  for (const k of touched) {
    const p = counts[k]! / total;
    const i = k >> 8;
    const j = k & 255;
    const d = i - j;
    contrast += p * d * d;
    dissimilarity += p * Math.abs(d);
    homogeneity += p / (1 + d * d);
    asm += p * p;
    mi += p * i;
    mj += p * j;
  }
  let vi = 0;
  let vj = 0;
  let cov = 0;
  for (const k of touched) {
    const p = counts[k]! / total;
    const di = (k >> 8) - mi;
    const dj = (k & 255) - mj;
    vi += p * di * di;
    vj += p * dj * dj;
    cov += p * di * dj;
  }
  for (const k of touched) counts[k] = 0;
  const si = Math.sqrt(vi);
  const sj = Math.sqrt(vj);
  // skimage: a constant crop (zero spread) has correlation 1.
  const correlation = si < 1e-15 || sj < 1e-15 ? 1 : cov / (si * sj);
  const value: Record<TextureProp, number> = {
    contrast,
    dissimilarity,
    homogeneity,
    correlation,
    ASM: asm,
    energy: Math.sqrt(asm),
  };
  if (total === 0) return props.map(() => Number.NaN);
  return props.map((p) => value[p]);
}

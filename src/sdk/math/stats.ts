/**
 * Statistical kernels for differential-expression tests: log-gamma and log-beta, erfc and the normal
 * tail, the regularised incomplete beta and Student's t tail, Welch's t-test from summary statistics,
 * Benjamini–Hochberg and Bonferroni corrections, and ranking with average ties (with the tie
 * correction of the Mann–Whitney U variance).
 *
 * Accuracy matters far into the tails: rank_genes_groups reports p-values like 1e-270, and a p-value
 * that deep is only meaningful when its logarithm is computed to ~1e-13 absolute. So the tail
 * functions avoid `1 - x` cancellations and compute `exp(-x²)` with an exact split of `x²`, and the
 * log-beta of a large and a small argument is taken from Stirling's series in a form without the
 * cancellation of `lgamma(a) - lgamma(a + b)`.
 */

const LN_SQRT_2PI = 0.9189385332046728; // ln √(2π)
const SQRT_PI = 1.772453850905516;
const SQRT1_2 = Math.SQRT1_2;
const DBL_EPS = 2.220446049250313e-16;
const TINY = 1e-300;

/**
 * Stirling's series correction `lnΓ(x) - [(x - ½)ln x - x + ln√(2π)]` for x ≥ 10 (eight terms of the
 * Bernoulli series; truncation error below 1e-17 there).
 */
function stirlingCorrection(x: number): number {
  const x2 = 1 / (x * x);
  // B_{2k} / (2k (2k-1)) for k = 1..8, summed by Horner in 1/x².
  return (
    (1 / 12 +
      x2 *
        (-1 / 360 +
          x2 *
            (1 / 1260 +
              x2 *
                (-1 / 1680 +
                  x2 * (1 / 1188 + x2 * (-691 / 360360 + x2 * (1 / 156 + x2 * (-3617 / 122400)))))))) /
    x
  );
}

/**
 * ln Γ(x) for x > 0: Stirling's series at x ≥ 10, shifted up by the recurrence below that
 * (absolute error about 1e-15 near the zeros at 1 and 2, relative ~1e-16 elsewhere).
 */
export function lgamma(x: number): number {
  if (!(x > 0)) {
    if (x === 0) return Number.POSITIVE_INFINITY;
    return Number.NaN;
  }
  if (x === Number.POSITIVE_INFINITY) return x;
  if (x >= 10) return (x - 0.5) * Math.log(x) - x + LN_SQRT_2PI + stirlingCorrection(x);
  let prod = 1;
  let y = x;
  while (y < 10) {
    prod *= y;
    y += 1;
  }
  return (y - 0.5) * Math.log(y) - y + LN_SQRT_2PI + stirlingCorrection(y) - Math.log(prod);
}

/**
 * ln B(a, b) = ln Γ(a) + ln Γ(b) - ln Γ(a + b) for a, b > 0, without cancellation when one argument
 * is large (the t-test's B(df/2, ½) with df in the thousands).
 */
export function logBeta(a: number, b: number): number {
  const p = Math.min(a, b);
  const q = Math.max(a, b);
  if (!(p > 0)) return p === 0 ? Number.POSITIVE_INFINITY : Number.NaN;
  if (p >= 10) {
    const corr = stirlingCorrection(p) + stirlingCorrection(q) - stirlingCorrection(p + q);
    const r = p / (p + q);
    return LN_SQRT_2PI - 0.5 * Math.log(q) + corr + (p - 0.5) * Math.log(r) + q * Math.log1p(-r);
  }
  if (q >= 10) {
    // lnΓ(q) - lnΓ(p+q) from Stirling's series, written with log1p so nothing large cancels.
    const corr = stirlingCorrection(q) - stirlingCorrection(p + q);
    return lgamma(p) + corr + p - p * Math.log(p + q) + (q - 0.5) * Math.log1p(-p / (p + q));
  }
  return lgamma(p) + lgamma(q) - lgamma(p + q);
}

/** exp(-x²) with x² split into an exactly representable head and a small tail (no x²·eps error). */
function expMinusSquare(x: number): number {
  const hi = Math.round(x * 4096) / 4096; // ≤ 12 fractional bits: hi² is exact for |x| < 2^14
  const lo = x - hi;
  return Math.exp(-hi * hi) * Math.exp(-(2 * hi + lo) * lo);
}

/** erf(x) for |x| < 1.5 by the all-positive series e^{-x²} Σ 2ⁿ x^{2n+1} / (1·3···(2n+1)). */
function erfSeries(x: number): number {
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 1; n < 200; n++) {
    term *= (2 * x2) / (2 * n + 1);
    sum += term;
    if (term < sum * DBL_EPS * 0.5) break;
  }
  return (2 / SQRT_PI) * sum * expMinusSquare(x);
}

/**
 * erfc(x) for x ≥ 1.2 by the continued fraction of the upper incomplete gamma Γ(½, x²) (modified
 * Lentz), which converges in well under 100 steps there.
 */
/**
 * The continued fraction of the regularised upper incomplete gamma Q(a, x), by Lentz's method, without its
 * front factor x^a·e^(−x)/Γ(a); it converges fast for x ≥ a + 1. erfc(x) is Q(½, x²) and the chi-square
 * tail is Q(df/2, x/2): both use this one fraction.
 */
export function upperGammaFraction(a: number, x: number): number {
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < DBL_EPS) break;
  }
  return h;
}

function erfcFraction(x: number): number {
  return (x / SQRT_PI) * expMinusSquare(x) * upperGammaFraction(0.5, x * x);
}

/** The complementary error function erfc(x) = 1 - erf(x), accurate to ~1e-15 relative in both tails. */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x < 0) return 2 - erfc(-x);
  if (x < 1.2) return 1 - erfSeries(x);
  if (x > 27.3) return 0; // below the smallest subnormal
  return erfcFraction(x);
}

/** The error function erf(x). */
export function erf(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  const v = ax < 1.2 ? erfSeries(ax) : 1 - erfcFraction(Math.min(ax, 27.3));
  return x < 0 ? -v : v;
}

/** Upper tail of the standard normal, P(Z > z) (scipy's `norm.sf`). */
export function normalSf(z: number): number {
  return 0.5 * erfc(z * SQRT1_2);
}

/** The standard normal CDF, P(Z ≤ z) (scipy's `norm.cdf`). */
export function normalCdf(z: number): number {
  return 0.5 * erfc(-z * SQRT1_2);
}

/** Continued fraction of the incomplete beta (modified Lentz), valid for x < (a+1)/(a+b+2). */
function betaFraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  const maxIter = 1000 + Math.ceil(20 * Math.sqrt(Math.max(a, b)));
  for (let m = 1; m <= maxIter; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < DBL_EPS) break;
  }
  return h;
}

/**
 * The regularised incomplete beta I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1. Pass `y = 1 - x` when it is
 * known more precisely than `1 - x` (the t tail has both forms exactly); the tail is then accurate to
 * ~1e-13 relative however small it is.
 */
export function betaIncReg(a: number, b: number, x: number, y: number = 1 - x): number {
  if (!(a > 0) || !(b > 0) || Number.isNaN(x) || x < 0 || x > 1) return Number.NaN;
  if (x === 0) return 0;
  if (y === 0 || x === 1) return 1;
  const lnx = x < 0.5 ? Math.log(x) : Math.log1p(-y);
  const lny = y < 0.5 ? Math.log(y) : Math.log1p(-x);
  const lnFront = a * lnx + b * lny - logBeta(a, b);
  if (x < (a + 1) / (a + b + 2)) return (Math.exp(lnFront) * betaFraction(a, b, x)) / a;
  return 1 - (Math.exp(lnFront) * betaFraction(b, a, y)) / b;
}

/**
 * Two-sided p-value of Student's t with `df` degrees of freedom, P(|T| > |t|) = I_{df/(df+t²)}(df/2, ½)
 * (scipy's `2 * t.sf(|t|, df)`). `df` may be fractional (Welch).
 */
export function studentTTwoSided(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return Number.NaN;
  const at = Math.abs(t);
  if (at === Number.POSITIVE_INFINITY) return 0;
  if (at === 0) return 1;
  if (df === Number.POSITIVE_INFINITY) return 2 * normalSf(at);
  const t2 = at * at;
  // x = df/(df+t²) and 1-x = t²/(df+t²), each computed directly.
  const x = df / (df + t2);
  const y = t2 / (df + t2);
  return betaIncReg(df / 2, 0.5, x, y);
}

/** Upper tail P(T > t) of Student's t with `df` degrees of freedom (scipy's `t.sf`). */
export function studentTSf(t: number, df: number): number {
  if (Number.isNaN(t)) return t;
  const half = 0.5 * studentTTwoSided(t, df);
  return t >= 0 ? half : 1 - half;
}

/** Result of a two-sample t-test. */
export interface TTestResult {
  /** The t statistic. */
  readonly statistic: number;
  /** Degrees of freedom (Welch–Satterthwaite). */
  readonly df: number;
  /** Two-sided p-value. */
  readonly pvalue: number;
}

/**
 * Welch's unequal-variance t-test from summary statistics, as scipy's
 * `ttest_ind_from_stats(mean1, sqrt(var1), n1, mean2, sqrt(var2), n2, equal_var=False)`: the
 * variances go through a square root and back as scipy's do (so results agree to the last bit), a
 * NaN df (both variances zero) becomes 1, and 0/0 gives a NaN statistic and p-value.
 */
export function welchTTest(
  mean1: number,
  var1: number,
  n1: number,
  mean2: number,
  var2: number,
  n2: number,
): TTestResult {
  const s1 = Math.sqrt(var1);
  const s2 = Math.sqrt(var2);
  const vn1 = (s1 * s1) / n1;
  const vn2 = (s2 * s2) / n2;
  let df = (vn1 + vn2) ** 2 / ((vn1 * vn1) / (n1 - 1) + (vn2 * vn2) / (n2 - 1));
  if (Number.isNaN(df)) df = 1;
  const statistic = (mean1 - mean2) / Math.sqrt(vn1 + vn2);
  return { statistic, df, pvalue: studentTTwoSided(statistic, df) };
}

/**
 * Benjamini–Hochberg adjusted p-values (statsmodels' `multipletests(method="fdr_bh")`): sorted
 * ascending, p₍ᵢ₎ / (i/n), a running minimum from the largest down, capped at 1. NaN inputs must be
 * replaced by the caller (scanpy uses 1).
 */
export function benjaminiHochberg(
  pvals: ArrayLike<number>,
  out: Float64Array = new Float64Array(pvals.length),
): Float64Array {
  const n = pvals.length;
  if (out.length !== n)
    throw new Error(`benjaminiHochberg: output has ${out.length} slots for ${n} p-values`);
  const order = argsortAscending(pvals);
  let running = Number.POSITIVE_INFINITY;
  for (let r = n - 1; r >= 0; r--) {
    const i = order[r]!;
    const adj = pvals[i]! / ((r + 1) / n);
    if (adj < running) running = adj;
    out[i] = running > 1 ? 1 : running;
  }
  return out;
}

/** Bonferroni adjusted p-values: min(p · nTests, 1) (`nTests` defaults to the number of p-values). */
export function bonferroni(pvals: ArrayLike<number>, nTests: number = pvals.length): Float64Array {
  const out = new Float64Array(pvals.length);
  for (let i = 0; i < pvals.length; i++) out[i] = Math.min(pvals[i]! * nTests, 1);
  return out;
}

/** Indices sorting `values` ascending (stable; NaN last). */
export function argsortAscending(values: ArrayLike<number>): Uint32Array {
  const n = values.length;
  const idx = new Uint32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  idx.sort((a, b) => {
    const va = values[a]!;
    const vb = values[b]!;
    if (va < vb) return -1;
    if (va > vb) return 1;
    if (va === vb) return a - b;
    const na = Number.isNaN(va);
    const nb = Number.isNaN(vb);
    if (na !== nb) return na ? 1 : -1;
    return a - b;
  });
  return idx;
}

/** Ranks with average ties plus the tie term of the Mann–Whitney variance. */
export interface Ranking {
  /** 1-based ranks, ties sharing the mean of their positions (scipy's `rankdata(method="average")`). */
  readonly ranks: Float64Array;
  /** Σ (t³ - t) over tie blocks of size t. */
  readonly tieSum: number;
}

/** Rank `values` (no NaN) with average ties, as scipy's `rankdata`; also returns the tie sum. */
export function rankAverage(values: ArrayLike<number>): Ranking {
  const n = values.length;
  const order = argsortAscending(values);
  const ranks = new Float64Array(n);
  let tieSum = 0;
  let i = 0;
  while (i < n) {
    let j = i + 1;
    const v = values[order[i]!]!;
    while (j < n && values[order[j]!] === v) j++;
    const r = (i + j + 1) / 2; // mean of 1-based positions i+1 … j
    for (let k = i; k < j; k++) ranks[order[k]!] = r;
    const t = j - i;
    tieSum += t * t * t - t;
    i = j;
  }
  return { ranks, tieSum };
}

/**
 * Tie correction factor of the Mann–Whitney U variance, 1 - Σ(t³ - t)/(n³ - n) (scipy's
 * `tiecorrect`); 1 when n < 2.
 */
export function tieCorrection(tieSum: number, n: number): number {
  if (n < 2) return 1;
  return 1 - tieSum / (n * n * n - n);
}

/**
 * The regularised incomplete gamma functions P(a, x) and Q(a, x) = 1 − P(a, x), and the chi-square
 * upper tail built on them (scipy's `gammainc`, `gammaincc`, `chi2.sf`). The series converges fast for
 * x < a + 1 and the continued fraction (modified Lentz) for x ≥ a + 1; each side computes its own tail
 * directly, so a p-value of 1e-200 keeps its relative precision instead of becoming 1 − (1 − p).
 */
import { lgamma, upperGammaFraction } from "./stats.js";

const EPS = 2.220446049250313e-16;
const MAX_ITER = 10000;

/** x^a e^(−x) / Γ(a), in logs: the common front factor of both expansions. */
function logFront(a: number, x: number): number {
  return a * Math.log(x) - x - lgamma(a);
}

/** P(a, x) by its power series, for x < a + 1. */
function lowerSeries(a: number, x: number): number {
  let term = 1 / a;
  let sum = term;
  for (let n = 1; n < MAX_ITER; n++) {
    term *= x / (a + n);
    sum += term;
    if (Math.abs(term) < Math.abs(sum) * EPS) break;
  }
  return sum * Math.exp(logFront(a, x));
}

/** Q(a, x) by its continued fraction, for x ≥ a + 1. */
function upperFraction(a: number, x: number): number {
  return Math.exp(logFront(a, x)) * upperGammaFraction(a, x);
}

/** Regularised lower incomplete gamma P(a, x) for a > 0, x ≥ 0 (scipy's `gammainc`); NaN outside. */
export function gammaIncLower(a: number, x: number): number {
  if (!(a > 0) || !(x >= 0)) return Number.NaN;
  if (x === 0) return 0;
  if (x === Number.POSITIVE_INFINITY) return 1;
  return x < a + 1 ? lowerSeries(a, x) : 1 - upperFraction(a, x);
}

/** Regularised upper incomplete gamma Q(a, x) for a > 0, x ≥ 0 (scipy's `gammaincc`); NaN outside. */
export function gammaIncUpper(a: number, x: number): number {
  if (!(a > 0) || !(x >= 0)) return Number.NaN;
  if (x === 0) return 1;
  if (x === Number.POSITIVE_INFINITY) return 0;
  return x < a + 1 ? 1 - lowerSeries(a, x) : upperFraction(a, x);
}

/**
 * Upper tail P(X > x) of the chi-square distribution with `df` degrees of freedom (scipy's
 * `chi2.sf(x, df)`): Q(df/2, x/2). 1 for x ≤ 0; NaN for NaN input or df ≤ 0.
 */
export function chi2Sf(x: number, df: number): number {
  if (Number.isNaN(x) || !(df > 0)) return Number.NaN;
  if (x <= 0) return 1;
  return gammaIncUpper(df / 2, x / 2);
}

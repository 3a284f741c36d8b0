/**
 * Linear scales and tick positions for plot axes: a domain → range map, "nice" tick values (1, 2, 2.5, 5
 * × a power of ten, as matplotlib's MaxNLocator picks them); tick labels are the shared `formatTick`.
 */
export { formatTick } from "../legend.js";

/** A linear map from a data interval to a pixel interval. */
export interface LinearScale {
  (v: number): number;
  readonly domain: readonly [number, number];
  readonly range: readonly [number, number];
}

/** The linear scale from `domain` to `range`; a zero-width domain maps everything to the range's middle. */
export function linearScale(
  domain: readonly [number, number],
  range: readonly [number, number],
): LinearScale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const k = d1 !== d0 ? (r1 - r0) / (d1 - d0) : 0;
  const f = ((v: number) => (k === 0 ? (r0 + r1) / 2 : r0 + (v - d0) * k)) as LinearScale;
  return Object.assign(f, { domain: [d0, d1] as const, range: [r0, r1] as const });
}

/** Finite min and max of values (NaN skipped); `[0, 1]` when there is none. */
export function extent(values: ArrayLike<number>): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return lo <= hi ? [lo, hi] : [0, 1];
}

/** `[lo, hi]` widened by `fraction` of its width on each side (matplotlib's default 5 % margins). */
export function padded([lo, hi]: readonly [number, number], fraction = 0.05): [number, number] {
  const w = hi - lo || Math.abs(lo) || 1;
  return [lo - w * fraction, hi + w * fraction];
}

/** About `count` evenly spaced round values inside `[lo, hi]`. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo) || !Number.isFinite(lo) || !Number.isFinite(hi)) return Number.isFinite(lo) ? [lo] : [];
  const raw = (hi - lo) / Math.max(1, count);
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  }
  return out;
}

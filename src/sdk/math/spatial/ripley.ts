/**
 * Ripley's statistics per cluster, as squidpy's `gr.ripley` defines them, on 2-d points:
 *
 * - F: distribution of distances from random points of a Poisson process in the convex hull to
 *   their `nNeigh` nearest cluster cells;
 * - G: distances from the cells outside the cluster to their `nNeigh` nearest cluster cells;
 * - L: Besag's L from the number of cluster pairs closer than each support distance, with the
 *   intensity of all N cells over the hull's area.
 *
 * The support is `nSteps` distances from 0 to √(area / 2). Simulations draw Poisson processes of
 * `nObservations` points in the hull; p-values compare every cluster's curve to them.
 */
import type { Rng } from "../rng.js";
import { buildKdTree, kdKnnQuery } from "./kdtree.js";

/** Which statistic. */
export type RipleyMode = "F" | "G" | "L";

/** The convex hull of 2-d points (counter-clockwise vertices) and its area. */
export interface Hull {
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  readonly area: number;
}

/** Andrew's monotone chain hull; throws when the points span no area. */
export function convexHull(points: ArrayLike<number>, n: number): Hull {
  const idx = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) =>
      (points[2 * a] as number) - (points[2 * b] as number) ||
      (points[2 * a + 1] as number) - (points[2 * b + 1] as number),
  );
  const X = (i: number) => points[2 * i] as number;
  const Y = (i: number) => points[2 * i + 1] as number;
  const cross = (o: number, a: number, b: number) =>
    (X(a) - X(o)) * (Y(b) - Y(o)) - (Y(a) - Y(o)) * (X(b) - X(o));
  const lower: number[] = [];
  for (const i of idx) {
    while (
      lower.length >= 2 &&
      cross(lower[lower.length - 2] as number, lower[lower.length - 1] as number, i) <= 0
    )
      lower.pop();
    lower.push(i);
  }
  const upper: number[] = [];
  for (let t = idx.length - 1; t >= 0; t--) {
    const i = idx[t] as number;
    while (
      upper.length >= 2 &&
      cross(upper[upper.length - 2] as number, upper[upper.length - 1] as number, i) <= 0
    )
      upper.pop();
    upper.push(i);
  }
  const ring = [...lower.slice(0, -1), ...upper.slice(0, -1)];
  if (ring.length < 3)
    throw new Error("ripley: the coordinates span no area (fewer than 3 points off one line)");
  const xs = Float64Array.from(ring, X);
  const ys = Float64Array.from(ring, Y);
  let a2 = 0;
  for (let i = 0; i < ring.length; i++) {
    const j = (i + 1) % ring.length;
    a2 += (xs[i] as number) * (ys[j] as number) - (xs[j] as number) * (ys[i] as number);
  }
  return { xs, ys, area: Math.abs(a2) / 2 };
}

/** Whether (x, y) lies in the (counter-clockwise) hull, boundary included. */
function inHull(h: Hull, x: number, y: number): boolean {
  const m = h.xs.length;
  for (let i = 0; i < m; i++) {
    const j = (i + 1) % m;
    const c =
      ((h.xs[j] as number) - (h.xs[i] as number)) * (y - (h.ys[i] as number)) -
      ((h.ys[j] as number) - (h.ys[i] as number)) * (x - (h.xs[i] as number));
    if (c < 0) return false;
  }
  return true;
}

/** `count` points of a homogeneous Poisson process in the hull (uniform in the box, kept inside). */
export function poissonInHull(h: Hull, count: number, rng: Rng): Float64Array {
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < h.xs.length; i++) {
    x0 = Math.min(x0, h.xs[i] as number);
    x1 = Math.max(x1, h.xs[i] as number);
    y0 = Math.min(y0, h.ys[i] as number);
    y1 = Math.max(y1, h.ys[i] as number);
  }
  const out = new Float64Array(2 * count);
  let got = 0;
  while (got < count) {
    const x = rng.uniform(x0, x1);
    const y = rng.uniform(y0, y1);
    if (inHull(h, x, y)) {
      out[2 * got] = x;
      out[2 * got + 1] = y;
      got++;
    }
  }
  return out;
}

/** numpy's `linspace(0, max, steps)` (float64). */
export function support(max: number, steps: number): Float64Array {
  const out = new Float64Array(steps);
  const step = steps > 1 ? max / (steps - 1) : 0;
  for (let s = 0; s < steps; s++) out[s] = s * step;
  if (steps > 1) out[steps - 1] = max;
  return out;
}

/**
 * squidpy's `_f_g_function`: numpy's histogram of the distances over the support's bins (the last
 * bin closed, values outside dropped), cumulated and divided by the total, with a leading 0.
 */
export function fgCurve(distances: ArrayLike<number>, sup: Float64Array): Float64Array {
  const bins = sup.length - 1;
  const counts = new Float64Array(bins);
  const lo = sup[0] as number;
  const hi = sup[bins] as number;
  for (let i = 0; i < distances.length; i++) {
    const d = distances[i] as number;
    if (!(d >= lo && d <= hi)) continue;
    // Bin b holds [sup[b], sup[b+1]); binary search for the last edge ≤ d.
    let a = 0;
    let b = bins;
    while (b - a > 1) {
      const m = (a + b) >> 1;
      if ((sup[m] as number) <= d) a = m;
      else b = m;
    }
    counts[a]++;
  }
  let total = 0;
  for (let b = 0; b < bins; b++) total += counts[b] as number;
  const out = new Float64Array(sup.length);
  let run = 0;
  for (let b = 0; b < bins; b++) {
    run += counts[b] as number;
    out[b + 1] = run / total;
  }
  return out;
}

/**
 * squidpy's `_l_function`: pairs of `pts` closer than each support distance (strictly), K = 2·pairs
 * / N / (N / area), L = √(K / π).
 */
export function lCurve(
  pts: Float64Array,
  m: number,
  sup: Float64Array,
  nAll: number,
  area: number,
): Float64Array {
  const steps = sup.length;
  const hist = new Float64Array(steps + 1);
  const last = sup[steps - 1] as number;
  for (let i = 0; i < m; i++) {
    const xi = pts[2 * i] as number;
    const yi = pts[2 * i + 1] as number;
    for (let j = i + 1; j < m; j++) {
      const dx = xi - (pts[2 * j] as number);
      const dy = yi - (pts[2 * j + 1] as number);
      const d = Math.sqrt(dx * dx + dy * dy);
      if (!(d < last)) continue;
      // First support index s with d < sup[s].
      let a = 0;
      let b = steps - 1;
      while (a < b) {
        const mid = (a + b) >> 1;
        if (d < (sup[mid] as number)) b = mid;
        else a = mid + 1;
      }
      hist[a]++;
    }
  }
  const out = new Float64Array(steps);
  const intensity = nAll / area;
  let run = 0;
  for (let s = 0; s < steps; s++) {
    run += hist[s] as number;
    const k = (run * 2) / nAll / intensity;
    out[s] = Math.sqrt(k / Math.PI);
  }
  return out;
}

/** All distances from each query to its `k` nearest points of `pts`. */
export function nearestDistances(
  pts: Float64Array,
  m: number,
  queries: Float64Array,
  nq: number,
  k: number,
): Float64Array {
  const t = buildKdTree(pts, m, 2);
  const { distances } = kdKnnQuery(t, queries, nq, Math.min(k, m));
  return distances;
}

/**
 * Co-occurrence of clusters by distance (squidpy's `gr.co_occurrence`): for thresholds t₁ < … < t_L,
 * the probability of finding cluster i within distance t of a cell of cluster c, divided by the
 * overall probability of cluster i at that distance.
 *
 * squidpy counts every ordered pair of cells against every threshold. Here each unordered pair is
 * visited once and only its first threshold bin is incremented (a K × K × L histogram per thread,
 * never an n × n matrix); a running sum over the bins then gives the cumulative counts. Distances are
 * compared in float32 like squidpy's (coordinates cast to float32, squared distances against squared
 * float32 thresholds, dx² + dy² as numba's fused multiply-add rounds it). Threads split the pairs in balanced row ranges over shared memory.
 */
import { allocArray } from "../../data/arrays.js";
import { runKernelThreads } from "../row-threads.js";

/** squidpy's default thresholds: `num` values from the smallest to half the largest corner distance. */
export function defaultIntervals(x: Float32Array, y: Float32Array, num: number): Float32Array {
  const n = x.length;
  if (n < 3) throw new Error(`co_occurrence: need at least 3 cells, got ${n}`);
  // The two cells with the smallest x + y (float32 sums) and the one with the largest.
  let a = -1;
  let b = -1;
  let mx = 0;
  const sum = (i: number) => Math.fround((x[i] as number) + (y[i] as number));
  for (let i = 0; i < n; i++) {
    const s = sum(i);
    if (a < 0 || s < sum(a)) {
      b = a;
      a = i;
    } else if (b < 0 || s < sum(b)) b = i;
    if (s > sum(mx)) mx = i;
  }
  const dist = (i: number, j: number) =>
    Math.fround(Math.hypot((x[i] as number) - (x[j] as number), (y[i] as number) - (y[j] as number)));
  const lo = dist(a, b);
  const hi = Math.fround(dist(a, mx) / 2);
  return linspace32(lo, hi, num);
}

/** numpy's `linspace(lo, hi, num, dtype=float32)` on float32 ends (computed in float32, as numpy does). */
export function linspace32(lo: number, hi: number, num: number): Float32Array {
  const f = Math.fround;
  const out = new Float32Array(num);
  const step = num > 1 ? f(f(f(hi) - f(lo)) / (num - 1)) : 0;
  for (let r = 0; r < num; r++) out[r] = f(f(r * step) + f(lo));
  if (num > 1) out[num - 1] = hi;
  return out;
}

/** Options of `coOccurrence`. */
export interface CoOccurrenceOptions {
  readonly threads?: number;
  readonly signal?: AbortSignal;
}

/**
 * Co-occurrence probabilities, K × K × (L − 1) row-major ([i][c][r]), for labels in [0, K) and the
 * L thresholds `interval` (ascending; the first is only the lower end, as in squidpy).
 */
export async function coOccurrence(
  x: Float32Array,
  y: Float32Array,
  labels: Int32Array,
  k: number,
  interval: Float32Array,
  opts: CoOccurrenceOptions = {},
): Promise<Float64Array> {
  const n = x.length;
  const l = interval.length - 1;
  if (l < 1) throw new Error(`co_occurrence: interval needs at least 2 values, got ${interval.length}`);
  const thr = allocArray("float32", l) as Float32Array;
  for (let r = 0; r < l; r++) thr[r] = Math.fround((interval[r + 1] as number) * (interval[r + 1] as number));
  const parts = Math.max(1, Math.min(opts.threads ?? 1, n));
  // Row ranges with about equal numbers of pairs (row i pairs with the n − i − 1 cells after it).
  const bounds = [0];
  const total = (n * (n - 1)) / 2;
  for (let p = 1; p < parts; p++) {
    const target = (total * p) / parts;
    // Pairs before row i: i·n − i(i+1)/2.
    let lo = bounds[p - 1] as number;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (mid * n - (mid * (mid + 1)) / 2 < target) lo = mid + 1;
      else hi = mid;
    }
    bounds.push(lo);
  }
  bounds.push(n);
  const hist = allocArray("float64", parts * k * k * l) as Float64Array;
  const first = interval[1] as number;
  const invStep = l > 1 ? (l - 1) / ((interval[l] as number) - first) : 0;
  const sx = allocArray("float32", n) as Float32Array;
  sx.set(x);
  const sy = allocArray("float32", n) as Float32Array;
  sy.set(y);
  const sl = allocArray("int32", n) as Int32Array;
  sl.set(labels);
  await runKernelThreads(
    pairKernel,
    parts,
    (p) => [sx, sy, sl, thr, first, invStep, k, l, bounds[p], bounds[p + 1], hist, p],
    opts.signal,
  );
  // Sum the threads' histograms, then cumulate over the bins: counts[a][b][r] = pairs ≤ t_{r+1}.
  const kkl = k * k * l;
  const counts = new Float64Array(kkl);
  for (let p = 0; p < parts; p++) for (let c = 0; c < kkl; c++) counts[c] += hist[p * kkl + c] as number;
  // Each unordered pair was counted once at [a][b]: add the transpose.
  for (let a = 0; a < k; a++) {
    for (let b = a; b < k; b++) {
      for (let r = 0; r < l; r++) {
        const ab = (a * k + b) * l + r;
        const ba = (b * k + a) * l + r;
        const s = (counts[ab] as number) + (counts[ba] as number);
        counts[ab] = s;
        counts[ba] = s;
      }
    }
  }
  for (let ab = 0; ab < k * k; ab++)
    for (let r = 1; r < l; r++) counts[ab * l + r] += counts[ab * l + r - 1] as number;
  // rowSums[c][r] = Σ_a counts[a][c][r]; totals[r] = Σ_c rowSums[c][r].
  const rowSums = new Float64Array(k * l);
  for (let a = 0; a < k; a++)
    for (let c = 0; c < k; c++)
      for (let r = 0; r < l; r++) rowSums[c * l + r] += counts[(a * k + c) * l + r] as number;
  const out = new Float64Array(kkl);
  for (let r = 0; r < l; r++) {
    let tot = 0;
    for (let c = 0; c < k; c++) tot += rowSums[c * l + r] as number;
    for (let c = 0; c < k; c++) {
      const rs = rowSums[c * l + r] as number;
      for (let i = 0; i < k; i++) {
        const prob = (rowSums[i * l + r] as number) / tot;
        if (prob !== 0 && rs !== 0)
          out[(i * k + c) * l + r] = (counts[(c * k + i) * l + r] as number) / rs / prob;
      }
    }
  }
  return out;
}

/**
 * Pairs (i, j), from ≤ i < to, j > i: each pair's first bin r with d² ≤ thr[r] gets one count at
 * [label i][label j] (the caller adds the transpose). The bin is first guessed from the distance
 * (thresholds evenly spaced in distance, as the default ones are), then moved to the exact one
 * against the float32 squared thresholds. Self-contained: it runs as source text in worker threads.
 */
function pairKernel(
  x: Float32Array,
  y: Float32Array,
  labels: Int32Array,
  thr: Float32Array,
  first: number,
  invStep: number,
  k: number,
  l: number,
  from: number,
  to: number,
  hist: Float64Array,
  part: number,
): void {
  const n = x.length;
  const base = part * k * k * l;
  const last = thr[l - 1] as number;
  const f = Math.fround;
  for (let i = from; i < to; i++) {
    const xi = x[i] as number;
    const yi = y[i] as number;
    const li = base + (labels[i] as number) * k * l;
    for (let j = i + 1; j < n; j++) {
      const dx = f(xi - (x[j] as number));
      const dy = f(yi - (y[j] as number));
      // squidpy's numba kernel (fastmath) contracts dx² + dy² to fma(dy, dy, dx²): dx² rounded to
      // float32, dy² exact (a product of two float32 fits a double), one rounding of the sum.
      const d2 = f(f(dx * dx) + dy * dy);
      if (d2 > last) continue;
      let r = Math.ceil((Math.sqrt(d2) - first) * invStep);
      if (r < 0) r = 0;
      else if (r > l - 1) r = l - 1;
      while (r > 0 && d2 <= (thr[r - 1] as number)) r--;
      while (d2 > (thr[r] as number)) r++;
      hist[li + (labels[j] as number) * l + r]++;
    }
  }
}

/**
 * Barnes-Hut t-SNE (van der Maaten 2014) as scikit-learn runs it for scanpy's `tl.tsne`:
 * perplexity-calibrated sparse affinities on the 3·perplexity+1 nearest neighbours (squared
 * Euclidean distances, binary search on the Gaussian precision), symmetrised and normalised; a
 * quadtree estimate of the repulsive forces with angle θ = 0.5; 250 iterations of early
 * exaggeration at momentum 0.5, then momentum 0.8 up to 1000 iterations, with sklearn's gains,
 * gradient factor 4 and stopping rules (gradient norm, no progress for 300 iterations).
 *
 * Cost is O(n·k) for the affinities, O(n log n) per iteration for the gradient; the exact kNN is
 * O(n²·d) with early termination of partial distances (fast on PCA coordinates, whose leading
 * components carry most of the variance).
 */
import { lanczosTopEigen } from "./eigen.js";
import { Rng } from "./rng.js";
import { grown, TreeCells } from "./tree-cells.js";

/** Options of `tsne`. */
export interface TsneOptions {
  /** Perplexity (effective number of neighbours); default 30. */
  readonly perplexity?: number;
  /** Factor on P during the first 250 iterations; default 12. */
  readonly earlyExaggeration?: number;
  /** Step size, or `auto` = max(n / earlyExaggeration / 4, 50) as sklearn; default 200 (sklearn's old default). */
  readonly learningRate?: number | "auto";
  /** Total iterations including the exaggeration phase; default 1000. */
  readonly maxIter?: number;
  /** Barnes-Hut angle; default 0.5. */
  readonly theta?: number;
  /** `pca` (sklearn ≥ 1.2 default) or `random` (N(0, 1e-4²)); default `pca`. */
  readonly init?: "pca" | "random";
  /** Seed of the random initialisation (and the PCA start vector); default 0. */
  readonly seed?: number;
  /** Stop when the gradient norm falls below this (checked every 50 iterations); default 1e-7. */
  readonly minGradNorm?: number;
  /** Stop after this many iterations without a lower KL (checked every 50); default 300. */
  readonly nIterWithoutProgress?: number;
  /** Checked between iterations. */
  readonly signal?: AbortSignal;
  /** Progress in [0, 1]. */
  readonly progress?: (fraction: number, message?: string) => void;
}

/** Result of `tsne`. */
export interface TsneResult {
  /** n×2 row-major coordinates. */
  readonly embedding: Float64Array;
  /** KL divergence at each check (every 50 iterations and the last one), with the iteration. */
  readonly klHistory: { iteration: number; kl: number }[];
  /** Iterations run. */
  readonly iterations: number;
}

/** Exact k nearest neighbours (self excluded): indices and squared Euclidean distances, n×k row-major, nearest first. */
export interface KnnResult {
  readonly k: number;
  readonly indices: Int32Array;
  readonly distances2: Float64Array;
}

/**
 * Exact kNN over n×d row-major data: a sweep along the first coordinate (points sorted by it,
 * scanned outward from the query until the gap alone exceeds the current k-th distance) with a
 * bounded max-heap per row and partial-distance cut-off. On PCA coordinates, whose first components
 * carry most of the variance, both prunings discard most pairs; the result is exact either way.
 */
export function exactKnn(
  x: ArrayLike<number>,
  n: number,
  d: number,
  k: number,
  signal?: AbortSignal,
  progress?: (f: number) => void,
): KnnResult {
  if (k >= n) throw new Error(`exactKnn: k = ${k} must be below n = ${n}`);
  // Rows sorted by the first coordinate, copied in that order for locality.
  const perm = Int32Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => (x[a * d] as number) - (x[b * d] as number),
  );
  const data = new Float64Array(n * d);
  for (let s = 0; s < n; s++) {
    const i = perm[s]!;
    for (let t = 0; t < d; t++) data[s * d + t] = x[i * d + t] as number;
  }
  const indices = new Int32Array(n * k);
  const distances2 = new Float64Array(n * k);
  const hd = new Float64Array(k);
  const hi = new Int32Array(k);
  for (let s = 0; s < n; s++) {
    if ((s & 255) === 0) {
      signal?.throwIfAborted();
      progress?.(s / n);
    }
    const os = s * d;
    const x0 = data[os]!;
    let size = 0;
    let worst = Infinity;
    let left = s - 1;
    let right = s + 1;
    let leftOpen = left >= 0;
    let rightOpen = right < n;
    while (leftOpen || rightOpen) {
      // Alternate sides, nearest gap first.
      let j: number;
      if (leftOpen && (!rightOpen || x0 - data[left * d]! <= data[right * d]! - x0)) {
        j = left--;
        const gap = x0 - data[j * d]!;
        if (gap * gap >= worst) {
          leftOpen = false;
          continue;
        }
        if (left < 0) leftOpen = false;
      } else {
        j = right++;
        const gap = data[j * d]! - x0;
        if (gap * gap >= worst) {
          rightOpen = false;
          continue;
        }
        if (right >= n) rightOpen = false;
      }
      const oj = j * d;
      let sum = 0;
      let t = 0;
      for (; t < d; t++) {
        const diff = data[os + t]! - data[oj + t]!;
        sum += diff * diff;
        if (sum >= worst) break;
      }
      if (t < d) continue;
      if (size < k) {
        let c = size++;
        while (c > 0) {
          const p = (c - 1) >> 1;
          if (hd[p]! >= sum) break;
          hd[c] = hd[p]!;
          hi[c] = hi[p]!;
          c = p;
        }
        hd[c] = sum;
        hi[c] = j;
        if (size === k) worst = hd[0]!;
      } else {
        let c = 0;
        for (;;) {
          const l = 2 * c + 1;
          if (l >= k) break;
          const r = l + 1;
          const m = r < k && hd[r]! > hd[l]! ? r : l;
          if (hd[m]! <= sum) break;
          hd[c] = hd[m]!;
          hi[c] = hi[m]!;
          c = m;
        }
        hd[c] = sum;
        hi[c] = j;
        worst = hd[0]!;
      }
    }
    const i = perm[s]!;
    const order = Array.from({ length: k }, (_, r) => r).sort(
      (a, b) => hd[a]! - hd[b]! || perm[hi[a]!]! - perm[hi[b]!]!,
    );
    for (let r = 0; r < k; r++) {
      indices[i * k + r] = perm[hi[order[r]!]!]!;
      distances2[i * k + r] = hd[order[r]!]!;
    }
  }
  return { k, indices, distances2 };
}

/** A symmetric sparse joint-probability matrix P in CSR form (float64). */
export interface JointP {
  readonly n: number;
  readonly indptr: Int32Array;
  readonly indices: Int32Array;
  readonly data: Float64Array;
}

/**
 * Conditional probabilities p(j|i) from squared distances to each row's k neighbours, each row's
 * Gaussian precision found by binary search so that the row's entropy equals log(perplexity)
 * (sklearn's `_binary_search_perplexity`: 100 steps, tolerance 1e-5).
 */
export function conditionalP(knn: KnnResult, n: number, perplexity: number): Float64Array {
  const { k, distances2 } = knn;
  const p = new Float64Array(n * k);
  const desired = Math.log(perplexity);
  for (let i = 0; i < n; i++) {
    const o = i * k;
    let beta = 1;
    let betaMin = -Infinity;
    let betaMax = Infinity;
    for (let step = 0; step < 100; step++) {
      let sum = 0;
      for (let j = 0; j < k; j++) {
        const v = Math.exp(-distances2[o + j]! * beta);
        p[o + j] = v;
        sum += v;
      }
      if (sum === 0) sum = 1e-8;
      let sumDist = 0;
      for (let j = 0; j < k; j++) {
        const v = p[o + j]! / sum;
        p[o + j] = v;
        sumDist += distances2[o + j]! * v;
      }
      const diff = Math.log(sum) + beta * sumDist - desired;
      if (Math.abs(diff) <= 1e-5) break;
      if (diff > 0) {
        betaMin = beta;
        beta = betaMax === Infinity ? beta * 2 : (beta + betaMax) / 2;
      } else {
        betaMax = beta;
        beta = betaMin === -Infinity ? beta / 2 : (beta + betaMin) / 2;
      }
    }
  }
  return p;
}

/** P = (C + Cᵀ) / sum, from row-wise conditional probabilities C over a kNN pattern. */
export function jointP(knn: KnnResult, cond: Float64Array, n: number): JointP {
  const { k, indices } = knn;
  // Counts per row of C + Cᵀ before merging duplicates.
  const counts = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    counts[i + 1] = counts[i + 1]! + k;
    for (let r = 0; r < k; r++) {
      const j = indices[i * k + r]!;
      counts[j + 1] = counts[j + 1]! + 1;
    }
  }
  for (let i = 0; i < n; i++) counts[i + 1] = counts[i + 1]! + counts[i]!;
  const tmpCol = new Int32Array(counts[n]!);
  const tmpVal = new Float64Array(counts[n]!);
  const fill = counts.slice(0, n);
  for (let i = 0; i < n; i++) {
    for (let r = 0; r < k; r++) {
      const j = indices[i * k + r]!;
      const v = cond[i * k + r]!;
      let at = fill[i]!++;
      tmpCol[at] = j;
      tmpVal[at] = v;
      at = fill[j]!++;
      tmpCol[at] = i;
      tmpVal[at] = v;
    }
  }
  // Sort each row by column and merge duplicates.
  const indptr = new Int32Array(n + 1);
  const outCol = new Int32Array(counts[n]!);
  const outVal = new Float64Array(counts[n]!);
  let nnz = 0;
  let total = 0;
  const order: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = counts[i]!;
    const b = counts[i + 1]!;
    order.length = 0;
    for (let p = a; p < b; p++) order.push(p);
    order.sort((u, v) => tmpCol[u]! - tmpCol[v]!);
    let last = -1;
    for (const p of order) {
      const c = tmpCol[p]!;
      if (c === last) outVal[nnz - 1] = outVal[nnz - 1]! + tmpVal[p]!;
      else {
        outCol[nnz] = c;
        outVal[nnz] = tmpVal[p]!;
        nnz++;
        last = c;
      }
      total += tmpVal[p]!;
    }
    indptr[i + 1] = nnz;
  }
  const norm = Math.max(total, 2.220446049250313e-16);
  const data = outVal.slice(0, nnz);
  for (let p = 0; p < nnz; p++) data[p] = data[p]! / norm;
  return { n, indptr, indices: outCol.slice(0, nnz), data };
}

/** Points per leaf bucket: near-field interactions inside a bucket are summed exactly. */
const LEAF_SIZE = 8;
/** Bits per axis of the Morton keys (the tree's maximal depth). */
const KEY_BITS = 16;

/**
 * A quadtree over 2-d points rebuilt every iteration from Morton (Z-order) keys: points are radix
 * sorted by key so every cell is a contiguous range of sorted points, and cells are laid out with
 * siblings adjacent. Traversals then touch memory mostly in order, which matters more in JS than
 * the tree's asymptotics.
 */
class MortonTree extends TreeCells {
  n = 0;
  keys = new Uint32Array(0);
  tmpKeys = new Uint32Array(0);
  order = new Int32Array(0);
  tmpOrder = new Int32Array(0);
  counts = new Int32Array(1 << 16);
  /** Sorted coordinates and original index of each sorted point. */
  sx = new Float64Array(0);
  sy = new Float64Array(0);
  // Cells (the index fields are TreeCells').
  mx = new Float64Array(0);
  my = new Float64Array(0);
  width = new Float64Array(0);

  private ensurePoints(n: number): void {
    if (this.keys.length >= n) return;
    this.keys = new Uint32Array(n);
    this.tmpKeys = new Uint32Array(n);
    this.order = new Int32Array(n);
    this.tmpOrder = new Int32Array(n);
    this.sx = new Float64Array(n);
    this.sy = new Float64Array(n);
  }

  protected growFields(cap: number): void {
    this.mx = grown(this.mx, cap);
    this.my = grown(this.my, cap);
    this.width = grown(this.width, cap);
  }

  private newCell(a: number, b: number, w: number): number {
    const c = this.allocCell(a, b);
    let sx = 0;
    let sy = 0;
    for (let i = a; i < b; i++) {
      sx += this.sx[i]!;
      sy += this.sy[i]!;
    }
    this.mx[c] = sx / (b - a);
    this.my[c] = sy / (b - a);
    this.width[c] = w;
    return c;
  }

  build(y: Float64Array, n: number): void {
    this.n = n;
    this.ensurePoints(n);
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (let i = 0; i < n; i++) {
      const a = y[2 * i]!;
      const b = y[2 * i + 1]!;
      if (a < minX) minX = a;
      if (a > maxX) maxX = a;
      if (b < minY) minY = b;
      if (b > maxY) maxY = b;
    }
    const side = Math.max(maxX - minX, maxY - minY, 1e-12) * (1 + 1e-9);
    const scale = (1 << KEY_BITS) / side;
    const top = (1 << KEY_BITS) - 1;
    const { keys, order, tmpKeys, tmpOrder, counts } = this;
    for (let i = 0; i < n; i++) {
      const qx = Math.min(top, Math.floor((y[2 * i]! - minX) * scale));
      const qy = Math.min(top, Math.floor((y[2 * i + 1]! - minY) * scale));
      keys[i] = (spread(qx) | (spread(qy) << 1)) >>> 0;
      order[i] = i;
    }
    // LSD radix sort on two 16-bit digits.
    for (let pass = 0; pass < 2; pass++) {
      const shift = pass * 16;
      const src = pass === 0 ? keys : tmpKeys;
      const srcO = pass === 0 ? order : tmpOrder;
      const dst = pass === 0 ? tmpKeys : keys;
      const dstO = pass === 0 ? tmpOrder : order;
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[(src[i]! >>> shift) & 0xffff]!++;
      let sum = 0;
      for (let b = 0; b < 65536; b++) {
        const c = counts[b]!;
        counts[b] = sum;
        sum += c;
      }
      for (let i = 0; i < n; i++) {
        const at = counts[(src[i]! >>> shift) & 0xffff]!++;
        dst[at] = src[i]!;
        dstO[at] = srcO[i]!;
      }
    }
    for (let i = 0; i < n; i++) {
      const o = order[i]!;
      this.sx[i] = y[2 * o]!;
      this.sy[i] = y[2 * o + 1]!;
    }
    this.size = 0;
    this.newCell(0, n, side);
    this.split(0, 0);
  }

  private split(cell: number, level: number): void {
    const a = this.start[cell]!;
    const b = this.end[cell]!;
    if (b - a <= LEAF_SIZE || level >= KEY_BITS) return;
    const shift = 2 * (KEY_BITS - 1 - level);
    const keys = this.keys;
    const w = this.width[cell]! / 2;
    const first = this.size;
    let lo = a;
    while (lo < b) {
      const q = (keys[lo]! >>> shift) & 3;
      let hi = lo + 1;
      while (hi < b && ((keys[hi]! >>> shift) & 3) === q) hi++;
      this.newCell(lo, hi, w);
      lo = hi;
    }
    this.firstChild[cell] = first;
    this.nChild[cell] = this.size - first;
    const last = this.size;
    for (let c = first; c < last; c++) this.split(c, level + 1);
  }
}

/** Interleave the low 16 bits of v with zeros (bit i → bit 2i). */
function spread(v: number): number {
  let x = v & 0xffff;
  x = (x | (x << 8)) & 0x00ff00ff;
  x = (x | (x << 4)) & 0x0f0f0f0f;
  x = (x | (x << 2)) & 0x33333333;
  x = (x | (x << 1)) & 0x55555555;
  return x;
}

/**
 * Top-2 principal-component scores of n×d data (centred), signs fixed so each component's largest
 * loading is positive (sklearn's `svd_flip`), scaled as sklearn's t-SNE PCA init: / std(PC1) · 1e-4.
 */
export function pcaInit(x: ArrayLike<number>, n: number, d: number, seed: number): Float64Array {
  const mean = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let t = 0; t < d; t++) mean[t] = mean[t]! + (x[i * d + t] as number);
  for (let t = 0; t < d; t++) mean[t] = mean[t]! / n;
  const out = new Float64Array(n * 2);
  if (d === 1) {
    for (let i = 0; i < n; i++) out[2 * i] = (x[i] as number) - mean[0]!;
  } else {
    const tmp = new Float64Array(n);
    const eig = lanczosTopEigen(
      (v, w) => {
        for (let i = 0; i < n; i++) {
          let s = 0;
          for (let t = 0; t < d; t++) s += ((x[i * d + t] as number) - mean[t]!) * v[t]!;
          tmp[i] = s;
        }
        w.fill(0);
        for (let i = 0; i < n; i++) {
          const s = tmp[i]!;
          for (let t = 0; t < d; t++) w[t] = w[t]! + ((x[i * d + t] as number) - mean[t]!) * s;
        }
      },
      d,
      Math.min(2, d),
      { which: "LA", seed },
    );
    const kk = Math.min(2, d);
    for (let c = 0; c < kk; c++) {
      let best = 0;
      for (let t = 0; t < d; t++)
        if (Math.abs(eig.vectors[t * kk + c]!) > Math.abs(best)) best = eig.vectors[t * kk + c]!;
      const sign = best < 0 ? -1 : 1;
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let t = 0; t < d; t++) s += ((x[i * d + t] as number) - mean[t]!) * eig.vectors[t * kk + c]!;
        out[2 * i + c] = sign * s;
      }
    }
  }
  let m = 0;
  for (let i = 0; i < n; i++) m += out[2 * i]!;
  m /= n;
  let v = 0;
  for (let i = 0; i < n; i++) v += (out[2 * i]! - m) ** 2;
  const sd = Math.sqrt(v / n) || 1;
  for (let i = 0; i < 2 * n; i++) out[i] = (out[i]! / sd) * 1e-4;
  return out;
}

/**
 * The KL gradient (×4, as sklearn) at `y` for joint probabilities `p` scaled by `exaggeration`;
 * returns the KL divergence when `withError` (else NaN).
 */
function gradient(
  p: JointP,
  exaggeration: number,
  y: Float64Array,
  grad: Float64Array,
  tree: MortonTree,
  theta2: number,
  neg: Float64Array,
  stack: Int32Array,
  withError: boolean,
): number {
  const n = p.n;
  tree.build(y, n);
  const { mx, my, start, end, firstChild, nChild, width, sx, sy, order } = tree;
  let sumQ = 0;
  for (let s = 0; s < n; s++) {
    // Queries in Z-order: consecutive points walk nearly the same cells.
    const yx = sx[s]!;
    const yy = sy[s]!;
    let fx = 0;
    let fy = 0;
    let top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const node = stack[--top]!;
      const dx = yx - mx[node]!;
      const dy = yy - my[node]!;
      const d2 = dx * dx + dy * dy;
      const w = width[node]!;
      if (w * w < theta2 * d2) {
        const c = end[node]! - start[node]!;
        const q = 1 / (1 + d2);
        sumQ += c * q;
        const m = c * q * q;
        fx += m * dx;
        fy += m * dy;
        continue;
      }
      const fc = firstChild[node]!;
      if (fc === -1) {
        // A leaf bucket: exact interactions with its points (self excluded).
        const b = end[node]!;
        for (let t = start[node]!; t < b; t++) {
          if (t === s) continue;
          const ex = yx - sx[t]!;
          const ey = yy - sy[t]!;
          const q = 1 / (1 + ex * ex + ey * ey);
          sumQ += q;
          const m = q * q;
          fx += m * ex;
          fy += m * ey;
        }
        continue;
      }
      const nc = nChild[node]!;
      for (let c = 0; c < nc; c++) stack[top++] = fc + c;
    }
    const i = order[s]!;
    neg[2 * i] = fx;
    neg[2 * i + 1] = fy;
  }
  const { indptr, indices, data } = p;
  let kl = 0;
  for (let i = 0; i < n; i++) {
    const yx = y[2 * i]!;
    const yy = y[2 * i + 1]!;
    let fx = 0;
    let fy = 0;
    const end = indptr[i + 1]!;
    for (let e = indptr[i]!; e < end; e++) {
      const j = indices[e]!;
      const dx = yx - y[2 * j]!;
      const dy = yy - y[2 * j + 1]!;
      const q = 1 / (1 + dx * dx + dy * dy);
      const pij = data[e]! * exaggeration;
      const m = pij * q;
      fx += m * dx;
      fy += m * dy;
      if (withError) {
        const qn = q / sumQ;
        kl += pij * Math.log(Math.max(pij, 1.1754943508222875e-38) / Math.max(qn, 1.1754943508222875e-38));
      }
    }
    grad[2 * i] = 4 * (fx - neg[2 * i]! / sumQ);
    grad[2 * i + 1] = 4 * (fy - neg[2 * i + 1]! / sumQ);
  }
  return withError ? kl : Number.NaN;
}

/**
 * Optimise a 2-d embedding for joint probabilities `p` from the initial positions `y0` (copied).
 * Runs sklearn's two phases (exaggerated, then plain) with its gains, momentum and stopping rules.
 */
export function optimizeTsne(p: JointP, y0: Float64Array, opts: TsneOptions = {}): TsneResult {
  const n = p.n;
  const ee = opts.earlyExaggeration ?? 12;
  const lr = opts.learningRate === "auto" ? Math.max(n / ee / 4, 50) : (opts.learningRate ?? 200);
  const maxIter = opts.maxIter ?? 1000;
  const theta = opts.theta ?? 0.5;
  const minGradNorm = opts.minGradNorm ?? 1e-7;
  const y = Float64Array.from(y0);
  const grad = new Float64Array(2 * n);
  const update = new Float64Array(2 * n);
  const gains = new Float64Array(2 * n);
  const neg = new Float64Array(2 * n);
  const stack = new Int32Array(4 * 64 + 16);
  const tree = new MortonTree();
  const klHistory: { iteration: number; kl: number }[] = [];
  const exploration = Math.min(250, maxIter);
  let lastIter = 0;
  const phase = (start: number, stop: number, momentum: number, exaggeration: number, patience: number) => {
    update.fill(0);
    gains.fill(1);
    let best = Infinity;
    let bestIter = start;
    for (let it = start; it < stop; it++) {
      if ((it & 7) === 0) {
        opts.signal?.throwIfAborted();
        opts.progress?.(it / maxIter, "t-SNE gradient descent");
      }
      const check = (it + 1) % 50 === 0 || it === stop - 1;
      const kl = gradient(p, exaggeration, y, grad, tree, theta * theta, neg, stack, check);
      let gnorm = 0;
      for (let t = 0; t < 2 * n; t++) {
        const g = grad[t]!;
        const u = update[t]!;
        let gain = gains[t]!;
        gain = u * g < 0 ? gain + 0.2 : gain * 0.8;
        if (gain < 0.01) gain = 0.01;
        gains[t] = gain;
        const gg = g * gain;
        const nu = momentum * u - lr * gg;
        update[t] = nu;
        y[t] = y[t]! + nu;
        gnorm += g * g;
      }
      lastIter = it + 1;
      if (check) {
        klHistory.push({ iteration: it + 1, kl });
        if (kl < best) {
          best = kl;
          bestIter = it;
        } else if (it - bestIter > patience) break;
        if (Math.sqrt(gnorm) < minGradNorm) break;
      }
    }
  };
  phase(0, exploration, 0.5, ee, 250);
  // sklearn starts the second phase at it + 1 with fresh gains and updates.
  if (maxIter > exploration) phase(exploration + 1, maxIter, 0.8, 1, opts.nIterWithoutProgress ?? 300);
  opts.progress?.(1);
  return { embedding: y, klHistory, iterations: lastIter };
}

/**
 * Barnes-Hut t-SNE of n×d row-major data into 2 dimensions: exact kNN (k = min(n − 1,
 * ⌊3·perplexity + 1⌋)), perplexity-calibrated joint P, then `optimizeTsne`.
 */
export function tsne(x: ArrayLike<number>, n: number, d: number, opts: TsneOptions = {}): TsneResult {
  const perplexity = opts.perplexity ?? 30;
  if (n < 2) throw new Error(`tsne: need at least 2 points, got ${n}`);
  const k = Math.min(n - 1, Math.floor(3 * perplexity + 1));
  const knn = exactKnn(x, n, d, k, opts.signal, (f) => opts.progress?.(0.2 * f, "t-SNE neighbours"));
  const cond = conditionalP(knn, n, perplexity);
  const p = jointP(knn, cond, n);
  let y0: Float64Array;
  if ((opts.init ?? "pca") === "pca") y0 = pcaInit(x, n, d, opts.seed ?? 0);
  else {
    const rng = new Rng(opts.seed ?? 0);
    y0 = new Float64Array(2 * n);
    for (let i = 0; i < 2 * n; i++) y0[i] = 1e-4 * rng.normal();
  }
  return optimizeTsne(p, y0, {
    ...opts,
    progress: opts.progress ? (f, m) => opts.progress?.(0.2 + 0.8 * f, m) : undefined,
  });
}

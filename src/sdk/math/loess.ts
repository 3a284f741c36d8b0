/**
 * One-predictor LOESS (Cleveland, Grosse and Shyu), computed the way the netlib `dloess` code that
 * R's `loess` and Python's `skmisc.loess` wrap computes it by default: Gaussian family, tricube
 * weights over the `floor(n·span)` nearest points, local polynomial of degree 0–2, and the
 * `surface="interpolate"` evaluation: a k-d tree (here a binary partition of the line) whose cells
 * hold at most `floor(n·span·cell)` points, a local fit (value and slope) at each cell vertex, and
 * cubic Hermite interpolation between vertices. Reproducing the interpolation, not only the local
 * fit, is what makes the fitted values agree with skmisc's to rounding (scanpy's `seurat_v3` HVG
 * flavour ranks genes by residuals from this fit).
 */

/** Options of `loess`. */
export interface LoessOptions {
  /** Fraction of the points in each local neighbourhood (skmisc's default 0.75). */
  readonly span?: number;
  /** Degree of the local polynomial: 0, 1 or 2 (default 2). */
  readonly degree?: 0 | 1 | 2;
  /** `interpolate` (default, kd-tree vertices + Hermite interpolation) or `direct` (a local fit at every point). */
  readonly surface?: "interpolate" | "direct";
  /** Cell size of the k-d tree as a fraction of the neighbourhood (skmisc's default 0.2). */
  readonly cell?: number;
}

/** The local fit at one point: value and first derivative. */
interface LocalFit {
  value: number;
  slope: number;
}

const EPS = 2 ** -52;

/**
 * Fitted values of a LOESS regression of `y` on `x` at the points `x` themselves. Throws on
 * mismatched lengths, non-finite input or a span too small for the degree.
 */
export function loess(x: ArrayLike<number>, y: ArrayLike<number>, opts: LoessOptions = {}): Float64Array {
  const n = x.length;
  if (y.length !== n) throw new Error(`loess: x has ${n} values, y has ${y.length}`);
  const span = opts.span ?? 0.75;
  const degree = opts.degree ?? 2;
  const cell = opts.cell ?? 0.2;
  if (!(span > 0)) throw new Error(`loess: span must be > 0, got ${span}`);
  const nf = Math.min(n, Math.floor(n * span + 1e-5));
  if (nf <= 0) throw new Error("loess: span is too small");
  const k = degree + 1;
  if (k > nf - 1)
    throw new Error(`loess: span too small for degree ${degree} (${nf} points per neighbourhood)`);

  // Points sorted by x (stable): neighbourhoods are then contiguous windows.
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(x[i]!) || !Number.isFinite(y[i]!))
      throw new Error(`loess: non-finite value at ${i}`);
  }
  order.sort((a, b) => x[a]! - x[b]! || a - b);
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    xs[i] = x[order[i]!]!;
    ys[i] = y[order[i]!]!;
  }
  const fitter = new LocalFitter(xs, ys, nf, degree, span);
  const out = new Float64Array(n);
  if ((opts.surface ?? "interpolate") === "direct") {
    for (let i = 0; i < n; i++) out[i] = fitter.fit(x[i]!).value;
    return out;
  }
  const vertices = kdVertices(xs, Math.floor(n * (span * cell)));
  const fits = Array.from(vertices, (v) => fitter.fit(v));
  for (let i = 0; i < n; i++) out[i] = interpolate(vertices, fits, x[i]!);
  return out;
}

/**
 * Vertices of dloess's k-d tree on sorted values `xs` (cells of at most `fc` points): the bounding
 * box widened by 0.5% of the range on each side, plus every split value, sorted.
 */
export function kdVertices(xs: Float64Array, fc: number): Float64Array {
  const n = xs.length;
  const lo = xs[0]!;
  const hi = xs[n - 1]!;
  const mu = 0.005 * Math.max(hi - lo, 1e-10 * Math.max(Math.abs(lo), Math.abs(hi)) + 1e-30);
  const verts = [lo - mu, hi + mu];
  // Cells in dloess's processing order (children appended), with 1-based point ranges [l, u].
  const cl: number[] = [1];
  const cu: number[] = [n];
  const cvlo: number[] = [lo - mu];
  const cvhi: number[] = [hi + mu];
  const nvmax = Math.max(200, n);
  const ncmax = nvmax;
  let nv = 2;
  const at = (i: number) => xs[i - 1]!; // 1-based access
  for (let p = 0; p < cl.length; p++) {
    const l = cl[p]!;
    const u = cu[p]!;
    const vlo = cvlo[p]!;
    const vhi = cvhi[p]!;
    let leaf = u - l + 1 <= fc || vhi - vlo <= 0;
    if (!leaf) leaf = ncmax < cl.length + 2 || nvmax < nv + 1;
    if (leaf) continue;
    let m = Math.floor((l + u) / 2);
    // Ties: look for the nearest position m' (offsets 0, 1, -1, 2, -2, …) with x(m') ≠ x(m'+1).
    let offset = 0;
    while (!(m + offset >= u || m + offset < l)) {
      if (at(m + offset) === at(m + offset + 1)) {
        offset = -offset;
        if (offset >= 0) offset++;
      } else {
        m += offset;
        break;
      }
    }
    const xi = at(m);
    if (vlo === xi || vhi === xi) continue;
    cl.push(l, m + 1);
    cu.push(m, u);
    cvlo.push(vlo, xi);
    cvhi.push(xi, vhi);
    verts.push(xi);
    nv++;
  }
  return Float64Array.from(verts).sort();
}

/** Cubic Hermite interpolation of vertex fits at `z` (vertices sorted ascending). */
function interpolate(vertices: Float64Array, fits: LocalFit[], z: number): number {
  // Cell [v_j, v_{j+1}] holding z (z equal to a vertex lands on either side: same value).
  let a = 0;
  let b = vertices.length - 1;
  while (b - a > 1) {
    const mid = (a + b) >> 1;
    if (z <= vertices[mid]!) b = mid;
    else a = mid;
  }
  const v0 = vertices[a]!;
  const v1 = vertices[b]!;
  const f0 = fits[a]!;
  const f1 = fits[b]!;
  const w = v1 - v0;
  const h = (z - v0) / w;
  const phi0 = (1 - h) ** 2 * (1 + 2 * h);
  const phi1 = h ** 2 * (3 - 2 * h);
  const psi0 = h * (1 - h) ** 2;
  const psi1 = h ** 2 * (h - 1);
  return phi0 * f0.value + phi1 * f1.value + (psi0 * f0.slope + psi1 * f1.slope) * w;
}

/** Weighted local polynomial fits on sorted data. */
class LocalFitter {
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  readonly nf: number;
  readonly degree: number;
  readonly span: number;
  readonly b: Float64Array;
  readonly eta: Float64Array;
  constructor(xs: Float64Array, ys: Float64Array, nf: number, degree: number, span: number) {
    this.xs = xs;
    this.ys = ys;
    this.nf = nf;
    this.degree = degree;
    this.span = span;
    this.b = new Float64Array(nf * 3);
    this.eta = new Float64Array(nf);
  }

  /** Local fit at q: the nf nearest points, tricube weights on squared-distance ratios, least squares. */
  fit(q: number): LocalFit {
    const { xs, ys, nf } = this;
    const n = xs.length;
    // Window of the nf nearest points: grow from the insertion point towards the closer side.
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[mid]! < q) lo = mid + 1;
      else hi = mid;
    }
    let left = lo - 1;
    let right = lo;
    let rho = 0;
    for (let c = 0; c < nf; c++) {
      const dl = left >= 0 ? (xs[left]! - q) ** 2 : Infinity;
      const dr = right < n ? (xs[right]! - q) ** 2 : Infinity;
      if (dl <= dr) {
        rho = dl;
        left--;
      } else {
        rho = dr;
        right++;
      }
    }
    rho *= Math.max(1, this.span);
    if (!(rho > 0)) throw new Error(`loess: zero-width neighbourhood at ${q} (too many tied x values)`);
    const start = left + 1;
    const k = this.degree + 1;
    const { b, eta } = this;
    // Design rows (weighted): w, w·(x−q), w·(x−q)²; column-major in b (column c at c·nf).
    for (let r = 0; r < nf; r++) {
      const xv = xs[start + r]!;
      const d2 = (xv - q) ** 2;
      const t = Math.sqrt(d2 / rho);
      const w = Math.sqrt(Math.max(0, 1 - t ** 3) ** 3);
      b[r] = w;
      if (k > 1) b[nf + r] = w * (xv - q);
      if (k > 2) b[2 * nf + r] = w * (xv - q) ** 2;
      eta[r] = w * ys[start + r]!;
    }
    const coef = solveLeastSquares(b, eta, nf, k);
    return { value: coef[0]!, slope: k > 1 ? coef[1]! : 0 };
  }
}

/**
 * Least squares min ‖B c − eta‖ for an nf×k column-major B (k ≤ 3), as dloess solves it: columns
 * equilibrated to unit norm, Householder QR, then a pseudo-inverse of R through its SVD that drops
 * singular values below 100·ε·σ_max. B and eta are overwritten.
 */
function solveLeastSquares(b: Float64Array, eta: Float64Array, nf: number, k: number): Float64Array {
  const colnorm = new Float64Array(k);
  for (let c = 0; c < k; c++) {
    let s = 0;
    for (let r = 0; r < nf; r++) s += b[c * nf + r]! ** 2;
    s = Math.sqrt(s);
    if (s > 0) {
      for (let r = 0; r < nf; r++) b[c * nf + r]! /= s;
      colnorm[c] = s;
    } else colnorm[c] = 1;
  }
  // Householder QR; apply each reflection to eta as well.
  for (let c = 0; c < k; c++) {
    let norm = 0;
    for (let r = c; r < nf; r++) norm += b[c * nf + r]! ** 2;
    norm = Math.sqrt(norm);
    if (norm === 0) continue;
    const alpha = b[c * nf + c]! > 0 ? -norm : norm;
    // v = x − alpha e1, stored in place below the diagonal.
    b[c * nf + c]! -= alpha;
    let vnorm2 = 0;
    for (let r = c; r < nf; r++) vnorm2 += b[c * nf + r]! ** 2;
    const apply = (col: Float64Array, off: number) => {
      let dot = 0;
      for (let r = c; r < nf; r++) dot += b[c * nf + r]! * col[off + r]!;
      const f = (2 * dot) / vnorm2;
      for (let r = c; r < nf; r++) col[off + r]! -= f * b[c * nf + r]!;
    };
    for (let c2 = c + 1; c2 < k; c2++) apply(b, c2 * nf);
    apply(eta, 0);
    // The diagonal of R is alpha; keep v for nothing else.
    b[c * nf + c] = alpha;
    for (let r = c + 1; r < nf; r++) b[c * nf + r] = 0;
  }
  // R (k×k, upper) and z = (Qᵀ eta)[0..k).
  const rm = new Float64Array(k * k); // row-major
  for (let i = 0; i < k; i++) for (let j = i; j < k; j++) rm[i * k + j] = b[j * nf + i]!;
  const z = eta.slice(0, k);
  const { u, s, v } = smallSvd(rm, k);
  let smax = 0;
  for (let j = 0; j < k; j++) smax = Math.max(smax, s[j]!);
  const tol = smax * 100 * EPS;
  const gamma = new Float64Array(k);
  for (let j = 0; j < k; j++) {
    if (s[j]! > tol) {
      let d = 0;
      for (let i = 0; i < k; i++) d += u[i * k + j]! * z[i]!;
      gamma[j] = d / s[j]!;
    }
  }
  const coef = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    let c = 0;
    for (let j = 0; j < k; j++) c += v[i * k + j]! * gamma[j]!;
    coef[i] = c / colnorm[i]!;
  }
  return coef;
}

/** SVD of a small square matrix (row-major k×k) by one-sided Jacobi: A = U diag(s) Vᵀ. */
function smallSvd(a: Float64Array, k: number): { u: Float64Array; s: Float64Array; v: Float64Array } {
  const w = a.slice();
  const v = new Float64Array(k * k);
  for (let i = 0; i < k; i++) v[i * k + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < k - 1; p++) {
      for (let q = p + 1; q < k; q++) {
        let alpha = 0;
        let beta = 0;
        let gamma = 0;
        for (let i = 0; i < k; i++) {
          const wp = w[i * k + p]!;
          const wq = w[i * k + q]!;
          alpha += wp * wp;
          beta += wq * wq;
          gamma += wp * wq;
        }
        if (gamma === 0 || Math.abs(gamma) <= EPS * Math.sqrt(alpha * beta)) continue;
        off = Math.max(off, Math.abs(gamma) / Math.sqrt(alpha * beta));
        const zeta = (beta - alpha) / (2 * gamma);
        const t = Math.sign(zeta || 1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + t * t);
        const sn = c * t;
        for (let i = 0; i < k; i++) {
          const wp = w[i * k + p]!;
          const wq = w[i * k + q]!;
          w[i * k + p] = c * wp - sn * wq;
          w[i * k + q] = sn * wp + c * wq;
          const vp = v[i * k + p]!;
          const vq = v[i * k + q]!;
          v[i * k + p] = c * vp - sn * vq;
          v[i * k + q] = sn * vp + c * vq;
        }
      }
    }
    if (off <= EPS) break;
  }
  const s = new Float64Array(k);
  const u = new Float64Array(k * k);
  for (let j = 0; j < k; j++) {
    let norm = 0;
    for (let i = 0; i < k; i++) norm += w[i * k + j]! ** 2;
    norm = Math.sqrt(norm);
    s[j] = norm;
    for (let i = 0; i < k; i++) u[i * k + j] = norm > 0 ? w[i * k + j]! / norm : 0;
  }
  return { u, s, v };
}

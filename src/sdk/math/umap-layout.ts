/**
 * UMAP's layout of a fuzzy neighbourhood graph (McInnes, Healy & Melville 2018), as umap-learn's
 * `simplicial_set_embedding` computes it for scanpy's `tl.umap`:
 *
 * 1. edges weaker than max/n_epochs are dropped;
 * 2. initial positions: the spectral embedding of the graph (eigenvectors 2…d+1 of the normalised
 *    Laplacian; per connected component, components placed apart), scaled to ±10 with a little noise,
 *    or uniform random in ±10, or given coordinates;
 * 3. every coordinate axis is rescaled to [0, 10];
 * 4. stochastic gradient descent on the fuzzy-set cross entropy: each edge is sampled in proportion to
 *    its weight, attracting both ends; every positive sample brings `negative_sample_rate` repulsive
 *    samples of random nodes; the learning rate decays linearly from `alpha` to 0.
 *
 * The low-dimensional similarity is 1 / (1 + a d^(2b)); `findAbParams` fits a, b to min_dist and spread.
 * Everything is seeded; the SGD runs in one thread in edge order, so a seed gives one result.
 */
import type { SparseMatrix } from "../data/arrays.js";
import { symEigenJacobi } from "./linalg.js";
import type { Rng } from "./rng.js";
import { optimizeLayout, sgdPart, sgdSetup } from "./umap-sgd.js";

/** The curve parameters of UMAP's low-dimensional similarity 1 / (1 + a·d^(2b)). */
export interface AbParams {
  readonly a: number;
  readonly b: number;
}

/**
 * Fit a and b (umap-learn's `find_ab_params`): least squares of 1/(1 + a x^(2b)) against the offset
 * exponential (1 below `minDist`, exp(−(x − minDist)/spread) above) on 300 points of [0, 3·spread],
 * by Levenberg–Marquardt from (1, 1) as scipy's `curve_fit` does.
 */
export function findAbParams(spread: number, minDist: number): AbParams {
  if (!(spread > 0)) throw new Error(`umap: spread must be > 0, got ${spread}`);
  if (!(minDist >= 0)) throw new Error(`umap: min_dist must be ≥ 0, got ${minDist}`);
  const N = 300;
  const xs = new Float64Array(N);
  const ys = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    const x = (spread * 3 * i) / (N - 1);
    xs[i] = x;
    ys[i] = x < minDist ? 1 : Math.exp(-(x - minDist) / spread);
  }
  const cost = (a: number, b: number): number => {
    let s = 0;
    for (let i = 0; i < N; i++) {
      const r = 1 / (1 + a * xs[i]! ** (2 * b)) - ys[i]!;
      s += r * r;
    }
    return s;
  };
  let a = 1;
  let b = 1;
  let lambda = 1e-3;
  let current = cost(a, b);
  for (let iter = 0; iter < 500; iter++) {
    // Normal equations JᵀJ δ = −Jᵀr with Marquardt's diagonal damping.
    let jaa = 0;
    let jab = 0;
    let jbb = 0;
    let ga = 0;
    let gb = 0;
    for (let i = 0; i < N; i++) {
      const x = xs[i]!;
      const p = x > 0 ? x ** (2 * b) : 0;
      const den = 1 + a * p;
      const f = 1 / den;
      const r = f - ys[i]!;
      const da = -p / (den * den);
      const db = x > 0 ? (-a * p * 2 * Math.log(x)) / (den * den) : 0;
      jaa += da * da;
      jab += da * db;
      jbb += db * db;
      ga += da * r;
      gb += db * r;
    }
    let improved = false;
    for (let tries = 0; tries < 30; tries++) {
      const m11 = jaa * (1 + lambda);
      const m22 = jbb * (1 + lambda);
      const det = m11 * m22 - jab * jab;
      if (!(Math.abs(det) > 0)) {
        lambda *= 10;
        continue;
      }
      const stepA = (-ga * m22 + gb * jab) / det;
      const stepB = (-gb * m11 + ga * jab) / det;
      const na = a + stepA;
      const nb = b + stepB;
      const c = cost(na, nb);
      if (Number.isFinite(c) && c <= current) {
        const converged =
          Math.abs(stepA) <= 1e-12 * (Math.abs(a) + 1e-12) &&
          Math.abs(stepB) <= 1e-12 * (Math.abs(b) + 1e-12);
        const relDrop = (current - c) / Math.max(current, 1e-300);
        a = na;
        b = nb;
        current = c;
        lambda = Math.max(lambda / 10, 1e-12);
        improved = !converged && relDrop > 1e-15;
        break;
      }
      lambda *= 10;
    }
    if (!improved) break;
  }
  return { a, b };
}

/** Hooks for long loops. */
export interface LayoutHooks {
  /** Checked every few epochs; throws when aborted. */
  readonly signal?: AbortSignal;
  /** Fraction of the work done, in [0, 1]. */
  readonly onProgress?: (fraction: number) => void;
}

/** A square CSR graph with float64 weights (the layout's working copy). */
export interface CsrGraph {
  /** Number of nodes. */
  readonly n: number;
  readonly indptr: Int32Array;
  readonly indices: Int32Array;
  readonly weights: Float64Array;
}

/** A zeroed Int32Array on shared memory where there is any (so worker threads read it in place). */
function sharedInt32(length: number): Int32Array {
  return new Int32Array(
    typeof SharedArrayBuffer !== "undefined"
      ? new SharedArrayBuffer(length * 4)
      : new ArrayBuffer(length * 4),
  );
}

/** The graph's entries with weight ≥ threshold, as a CSR copy (row order kept). */
function pruneGraph(m: SparseMatrix, threshold: number): CsrGraph {
  const n = m.shape[0];
  const nnz = Number(m.indptr[n] ?? 0);
  const src = m.data as unknown as ArrayLike<number | bigint>;
  const indptr = new Int32Array(n + 1);
  let kept = 0;
  for (let k = 0; k < nnz; k++) if (Number(src[k]) >= threshold && Number(src[k]) > 0) kept++;
  // On shared memory: the SGD's threads read the edges (tail = these indices) without a copy.
  const indices = sharedInt32(kept);
  const weights = new Float64Array(kept);
  let out = 0;
  for (let i = 0; i < n; i++) {
    const end = Number(m.indptr[i + 1]);
    for (let k = Number(m.indptr[i]); k < end; k++) {
      const w = Number(src[k]);
      if (w >= threshold && w > 0) {
        indices[out] = m.indices[k] as number;
        weights[out++] = w;
      }
    }
    indptr[i + 1] = out;
  }
  return { n, indptr, indices, weights };
}

/**
 * Connected components (edges read in either direction), labelled 0… in order of their smallest node,
 * as scipy's `connected_components` numbers them.
 */
export function connectedComponents(g: {
  n: number;
  indptr: ArrayLike<number>;
  indices: ArrayLike<number>;
}): {
  labels: Int32Array;
  count: number;
} {
  const parent = new Int32Array(g.n);
  for (let i = 0; i < g.n; i++) parent[i] = i;
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  };
  for (let i = 0; i < g.n; i++) {
    for (let k = g.indptr[i]!; k < g.indptr[i + 1]!; k++) {
      const a = find(i);
      const b = find(g.indices[k]!);
      if (a !== b) {
        if (a < b) parent[b] = a;
        else parent[a] = b;
      }
    }
  }
  const labels = new Int32Array(g.n).fill(-1);
  const rootLabel = new Int32Array(g.n).fill(-1);
  let count = 0;
  for (let i = 0; i < g.n; i++) {
    const r = find(i);
    if (rootLabel[r]! < 0) rootLabel[r] = count++;
    labels[i] = rootLabel[r]!;
  }
  return { labels, count };
}

function dot(x: Float64Array, y: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!;
  return s;
}

function axpy(alpha: number, x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < x.length; i++) y[i]! += alpha * x[i]!;
}

/**
 * out[i] = vs[i] · w for every vector of `vs`, four vectors per pass over w (a Krylov basis is tens of
 * vectors of n values: one pass per vector read w as often as the vectors, four per pass a quarter).
 */
function dotMany(vs: readonly Float64Array[], w: Float64Array, out: Float64Array): void {
  const n = w.length;
  let i = 0;
  for (; i + 4 <= vs.length; i += 4) {
    const a = vs[i]!;
    const b = vs[i + 1]!;
    const c = vs[i + 2]!;
    const d = vs[i + 3]!;
    let sa = 0;
    let sb = 0;
    let sc = 0;
    let sd = 0;
    for (let k = 0; k < n; k++) {
      const x = w[k]!;
      sa += a[k]! * x;
      sb += b[k]! * x;
      sc += c[k]! * x;
      sd += d[k]! * x;
    }
    out[i] = sa;
    out[i + 1] = sb;
    out[i + 2] = sc;
    out[i + 3] = sd;
  }
  for (; i < vs.length; i++) out[i] = dot(vs[i]!, w);
}

/** y += Σ coef[i] · vs[i], four vectors per pass over y (see `dotMany`). */
function axpyMany(coef: Float64Array, vs: readonly Float64Array[], y: Float64Array): void {
  const n = y.length;
  let i = 0;
  for (; i + 4 <= vs.length; i += 4) {
    const a = vs[i]!;
    const b = vs[i + 1]!;
    const c = vs[i + 2]!;
    const d = vs[i + 3]!;
    const ca = coef[i]!;
    const cb = coef[i + 1]!;
    const cc = coef[i + 2]!;
    const cd = coef[i + 3]!;
    for (let k = 0; k < n; k++) y[k] = y[k]! + ca * a[k]! + cb * b[k]! + cc * c[k]! + cd * d[k]!;
  }
  for (; i < vs.length; i++) axpy(coef[i]!, vs[i]!, y);
}

/** Options of {@link topEigenpairs}. */
export interface EigenOptions {
  /** Orthonormal vectors whose span is excluded (known eigenvectors). */
  readonly deflate?: Float64Array[];
  /** Krylov basis size (default 32, at least 2·nev + 8). */
  readonly basis?: number;
  /** Convergence: every wanted residual ‖Ay − θy‖ ≤ tol·max(1, |θ|) (default 1e-6). */
  readonly tol?: number;
  /** Restarts before giving up on the tolerance (default 60). */
  readonly maxRestarts?: number;
  readonly signal?: AbortSignal;
}

/**
 * The `nev` largest eigenpairs of a symmetric operator on ℝⁿ restricted to the complement of the
 * orthonormal vectors `deflate`, by a Krylov–Schur (thick-restart Lanczos) iteration with full
 * re-orthogonalisation. A Krylov space from one start vector holds one direction of each eigenspace,
 * so a repeated eigenvalue would be found once: after convergence, a search in the complement of the
 * found vectors checks for a larger eigenvalue left out, and takes it in.
 */
export function topEigenpairs(
  matvec: (x: Float64Array, y: Float64Array) => void,
  n: number,
  nev: number,
  rng: Rng,
  opts: EigenOptions = {},
): { values: Float64Array; vectors: Float64Array[] } {
  const base = opts.deflate ?? [];
  const tol = opts.tol ?? 1e-6;
  const first = krylovSchur(matvec, n, nev, rng, opts);
  const values = Array.from(first.values);
  const vectors = first.vectors;
  for (let round = 0; round < nev && n - base.length - nev > 0; round++) {
    const smallest = values[nev - 1]!;
    const bar = smallest + tol * Math.max(1, Math.abs(smallest));
    const deflate = [...base, ...vectors];
    // One Krylov cycle first: its Ritz value is a lower bound of the largest eigenvalue left, so
    // when it stays below the bar nothing was missed and no full solve is needed.
    const probe = krylovSchur(matvec, n, 1, rng, { ...opts, deflate, maxRestarts: 0 });
    if (!(probe.values[0]! > bar)) break;
    const extra = krylovSchur(matvec, n, 1, rng, { ...opts, deflate });
    const theta = extra.values[0]!;
    if (!(theta > bar)) break;
    // Insert in order, dropping the smallest.
    let at = nev - 1;
    while (at > 0 && values[at - 1]! < theta) at--;
    values.splice(at, 0, theta);
    vectors.splice(at, 0, extra.vectors[0]!);
    values.length = nev;
    vectors.length = nev;
  }
  return { values: Float64Array.from(values), vectors };
}

/** One Krylov–Schur run: the `nev` largest Ritz pairs in the complement of `deflate`. */
function krylovSchur(
  matvec: (x: Float64Array, y: Float64Array) => void,
  n: number,
  nev: number,
  rng: Rng,
  opts: EigenOptions,
): { values: Float64Array; vectors: Float64Array[] } {
  const deflate = opts.deflate ?? [];
  const free = n - deflate.length;
  if (nev > free) throw new Error(`eigen: ${nev} eigenpairs asked of a ${free}-dimensional space`);
  const m = Math.min(free, Math.max(opts.basis ?? 32, 2 * nev + 8));
  const tol = opts.tol ?? 1e-6;
  const maxRestarts = opts.maxRestarts ?? 60;
  const V: Float64Array[] = [];
  const H = new Float64Array((m + 1) * (m + 1)); // H[i * (m + 1) + j]
  const h = (i: number, j: number) => i * (m + 1) + j;
  // Classical Gram–Schmidt against the deflated vectors and the basis (every coefficient from the
  // same w, so four vectors share a pass over it: `dotMany`, `axpyMany`); a second pass only when the
  // first cancelled most of the vector (Daniel–Gragg–Kaufman–Stewart), which keeps the basis
  // orthogonal to working precision at about half the cost of always repeating.
  const against = new Float64Array(deflate.length + m + 1);
  const orthogonalise = (w: Float64Array, upto: number, coeffs?: Float64Array): void => {
    const before = Math.sqrt(dot(w, w));
    const vs = [...deflate, ...V.slice(0, upto)];
    const c = against.subarray(0, vs.length);
    for (let pass = 0; pass < 2; pass++) {
      dotMany(vs, w, c);
      if (coeffs) for (let i = 0; i < upto; i++) coeffs[i]! += c[deflate.length + i];
      for (let i = 0; i < c.length; i++) c[i] = -c[i]!;
      axpyMany(c, vs, w);
      if (pass === 0 && Math.sqrt(dot(w, w)) > Math.SQRT1_2 * before) break;
    }
  };
  const randomUnit = (upto: number): Float64Array => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const v = new Float64Array(n);
      for (let i = 0; i < n; i++) v[i] = rng.normal();
      orthogonalise(v, upto);
      const norm = Math.sqrt(dot(v, v));
      if (norm > 1e-8) {
        for (let i = 0; i < n; i++) v[i]! /= norm;
        return v;
      }
    }
    throw new Error("eigen: could not find a new direction (the space is exhausted)");
  };
  V.push(randomUnit(0));
  let j0 = 0;
  let values: Float64Array = new Float64Array(0);
  let S: Float64Array = new Float64Array(0);
  let beta = 0;
  const coeffs = new Float64Array(m + 1);
  for (let restart = 0; ; restart++) {
    opts.signal?.throwIfAborted();
    for (let j = j0; j < m; j++) {
      const w = new Float64Array(n);
      matvec(V[j]!, w);
      coeffs.fill(0);
      orthogonalise(w, j + 1, coeffs);
      for (let i = 0; i <= j; i++) H[h(i, j)] = coeffs[i]!;
      beta = Math.sqrt(dot(w, w));
      if (beta > 1e-12) {
        for (let i = 0; i < n; i++) w[i]! /= beta;
        V[j + 1] = w;
      } else {
        beta = 0;
        V[j + 1] = j + 1 < free ? randomUnit(j + 1) : new Float64Array(n);
      }
      H[h(j + 1, j)] = beta;
    }
    // Ritz pairs of the symmetrised projection.
    const T = new Float64Array(m * m);
    for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) T[i * m + j] = 0.5 * (H[h(i, j)]! + H[h(j, i)]!);
    const eig = symEigenJacobi(T, m);
    values = eig.values;
    S = eig.vectors;
    let converged = true;
    for (let i = 0; i < nev; i++) {
      const residual = Math.abs(beta * S[(m - 1) * m + i]!);
      if (residual > tol * Math.max(1, Math.abs(values[i]!))) converged = false;
    }
    if (converged || restart >= maxRestarts || m >= free) break;
    // Thick restart: keep p Ritz vectors, continue from the residual direction.
    const p = Math.min(m - 1, nev + Math.max(1, Math.floor((m - nev) / 2)));
    const kept: Float64Array[] = [];
    const basis = V.slice(0, m);
    const col = new Float64Array(m);
    for (let i = 0; i < p; i++) {
      const y = new Float64Array(n);
      for (let j = 0; j < m; j++) col[j] = S[j * m + i]!;
      axpyMany(col, basis, y);
      kept.push(y);
    }
    const residualVector = V[m]!;
    H.fill(0);
    for (let i = 0; i < p; i++) {
      H[h(i, i)] = values[i]!;
      H[h(p, i)] = beta * S[(m - 1) * m + i]!;
    }
    V.length = 0;
    V.push(...kept, residualVector);
    j0 = p;
  }
  const vectors: Float64Array[] = [];
  for (let i = 0; i < nev; i++) {
    const y = new Float64Array(n);
    for (let j = 0; j < m; j++) axpy(S[j * m + i]!, V[j]!, y);
    const norm = Math.sqrt(dot(y, y));
    for (let k = 0; k < n; k++) y[k]! /= norm;
    vectors.push(y);
  }
  return { values: values.slice(0, nev), vectors };
}

/** The subgraph induced by `nodes` (sorted ascending), re-indexed 0…. */
function subgraph(g: CsrGraph, nodes: Int32Array, where: Int32Array): CsrGraph {
  for (let t = 0; t < nodes.length; t++) where[nodes[t]!] = t;
  const indptr = new Int32Array(nodes.length + 1);
  let nnz = 0;
  for (let t = 0; t < nodes.length; t++) {
    const i = nodes[t]!;
    nnz += g.indptr[i + 1]! - g.indptr[i]!;
    indptr[t + 1] = nnz;
  }
  const indices = new Int32Array(nnz);
  const weights = new Float64Array(nnz);
  let out = 0;
  for (let t = 0; t < nodes.length; t++) {
    const i = nodes[t]!;
    for (let k = g.indptr[i]!; k < g.indptr[i + 1]!; k++) {
      indices[out] = where[g.indices[k]!]!;
      weights[out++] = g.weights[k]!;
    }
  }
  return { n: nodes.length, indptr, indices, weights };
}

/**
 * Eigenvectors 2…dim+1 of the normalised Laplacian I − D^-½ W D^-½ of a connected graph (umap's
 * `_spectral_layout`), column-major per axis in an n × dim row-major array.
 */
function spectralConnected(g: CsrGraph, dim: number, rng: Rng, signal?: AbortSignal): Float64Array {
  const n = g.n;
  const deg = new Float64Array(n);
  for (let k = 0; k < g.indices.length; k++) deg[g.indices[k]!]! += g.weights[k]; // column sums, as umap
  const invSqrt = new Float64Array(n);
  const top = new Float64Array(n);
  let norm = 0;
  for (let i = 0; i < n; i++) {
    const s = Math.sqrt(deg[i]!);
    invSqrt[i] = s > 0 ? 1 / s : 0;
    top[i] = s;
    norm += deg[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < n; i++) top[i]! /= norm;
  const out = new Float64Array(n * dim);
  if (n <= 64) {
    // Small: decompose the dense matrix and drop the trivial top eigenvector.
    const M = new Float64Array(n * n);
    for (let i = 0; i < n; i++)
      for (let k = g.indptr[i]!; k < g.indptr[i + 1]!; k++) {
        const j = g.indices[k]!;
        M[i * n + j]! += g.weights[k]! * invSqrt[i]! * invSqrt[j]!;
      }
    for (let i = 0; i < n; i++)
      for (let j = i + 1; j < n; j++) M[i * n + j] = M[j * n + i] = 0.5 * (M[i * n + j]! + M[j * n + i]!);
    const { vectors } = symEigenJacobi(M, n);
    for (let i = 0; i < n; i++) for (let d = 0; d < dim; d++) out[i * dim + d] = vectors[i * n + d + 1] ?? 0;
    return out;
  }
  // D^-½ W D^-½ once: each product is then one multiply-add per stored weight.
  const { indptr, indices } = g;
  const wn = new Float64Array(indices.length);
  for (let i = 0; i < n; i++)
    for (let k = indptr[i]!; k < indptr[i + 1]!; k++)
      wn[k] = g.weights[k]! * invSqrt[i]! * invSqrt[indices[k]!]!;
  const matvec = (x: Float64Array, y: Float64Array) => {
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let k = indptr[i]!, end = indptr[i + 1]!; k < end; k++) s += wn[k]! * x[indices[k]!]!;
      y[i] = s;
    }
  };
  // The largest eigenvalues of D^-½ W D^-½ are the smallest of the Laplacian; the top one (1, √deg) is known.
  // A smaller basis than the default 32: each cycle (and the final check for a missed eigenvalue, one
  // full cycle) costs a basis' worth of products, and for the 2–3 vectors wanted 24 converges in fewer
  // (50k-cell graph: 103 products against 184, 1.4 s against 2.8 s of CPU). 16–20 are cheaper still
  // but lose one of a ring's two equal eigenvalues (test/sdk/math/umap-layout.test.ts).
  const { vectors } = topEigenpairs(matvec, n, dim, rng, {
    deflate: [top],
    tol: 1e-4,
    basis: Math.max(24, 2 * dim + 8),
    signal,
  });
  for (let d = 0; d < dim; d++) {
    const v = vectors[d]!;
    for (let i = 0; i < n; i++) out[i * dim + d] = v[i]!;
  }
  return out;
}

/**
 * Positions for the components themselves (umap's `component_layout`): spectral embedding of the
 * affinities exp(−d²) between component centroids in `data` (n × width, row-major), scaled so the
 * largest coordinate is 1; uniform random in [0, 10) without data.
 */
function componentLayout(
  labels: Int32Array,
  count: number,
  dim: number,
  rng: Rng,
  data?: { values: ArrayLike<number>; width: number },
): Float64Array {
  const meta = new Float64Array(count * dim);
  if (!data) {
    for (let i = 0; i < meta.length; i++) meta[i] = rng.next() * 10;
    return meta;
  }
  const w = data.width;
  const centroids = new Float64Array(count * w);
  const sizes = new Float64Array(count);
  for (let i = 0; i < labels.length; i++) {
    const c = labels[i]!;
    sizes[c]!++;
    for (let f = 0; f < w; f++) centroids[c * w + f]! += Number(data.values[i * w + f]);
  }
  for (let c = 0; c < count; c++) for (let f = 0; f < w; f++) centroids[c * w + f]! /= sizes[c];
  // Affinity with a zero diagonal (scipy's laplacian ignores it), then the normalised adjacency.
  const A = new Float64Array(count * count);
  const deg = new Float64Array(count);
  for (let i = 0; i < count; i++)
    for (let j = 0; j < count; j++) {
      if (i === j) continue;
      let d2 = 0;
      for (let f = 0; f < w; f++) d2 += (centroids[i * w + f]! - centroids[j * w + f]!) ** 2;
      const a = Math.exp(-d2);
      A[i * count + j] = a;
      deg[i]! += a;
    }
  const dd = deg.map((x) => Math.sqrt(Math.max(x, 1e-300)));
  for (let i = 0; i < count; i++) for (let j = 0; j < count; j++) A[i * count + j]! /= dd[i]! * dd[j]!;
  const { vectors } = symEigenJacobi(A, count);
  for (let d = 0; d < dim; d++) {
    // Skip the top (trivial) vector; undo the normalisation; fix the sign so the largest entry is positive.
    let big = 0;
    for (let c = 0; c < count; c++) {
      const v = (vectors[c * count + d + 1] ?? 0) / dd[c]!;
      meta[c * dim + d] = v;
      if (Math.abs(v) > Math.abs(big)) big = v;
    }
    if (big < 0) for (let c = 0; c < count; c++) meta[c * dim + d] = -meta[c * dim + d]!;
  }
  let max = -Infinity;
  for (const v of meta) if (v > max) max = v;
  if (max > 0) for (let i = 0; i < meta.length; i++) meta[i]! /= max;
  return meta;
}

/**
 * The spectral initialisation of umap-learn (`spectral_layout`): eigenvectors of the normalised
 * Laplacian for a connected graph; for several components, each component's own spectral layout
 * scaled into the space around its place in a layout of the components (`multi_component_layout`).
 * `data` (the representation the graph was built from) only places more than 2·dim components.
 */
export function spectralLayout(
  g: CsrGraph,
  dim: number,
  rng: Rng,
  data?: { values: ArrayLike<number>; width: number },
  signal?: AbortSignal,
): Float64Array {
  const { labels, count } = connectedComponents(g);
  if (count === 1) return spectralConnected(g, dim, rng, signal);
  const n = g.n;
  let meta: Float64Array;
  if (count > 2 * dim) meta = componentLayout(labels, count, dim, rng, data);
  else {
    const k = Math.ceil(count / 2);
    meta = new Float64Array(count * dim);
    for (let c = 0; c < count; c++) {
      const axis = c % k;
      meta[c * dim + axis] = c < k ? 1 : -1;
    }
  }
  const result = new Float64Array(n * dim);
  const members: number[][] = Array.from({ length: count }, () => []);
  for (let i = 0; i < n; i++) members[labels[i]!]!.push(i);
  const where = new Int32Array(n);
  for (let c = 0; c < count; c++) {
    let range = Infinity;
    for (let o = 0; o < count; o++) {
      let d2 = 0;
      for (let d = 0; d < dim; d++) d2 += (meta[c * dim + d]! - meta[o * dim + d]!) ** 2;
      if (d2 > 0 && Math.sqrt(d2) < range) range = Math.sqrt(d2);
    }
    range = Number.isFinite(range) ? range / 2 : 1;
    const nodes = Int32Array.from(members[c]!);
    if (nodes.length < 2 * dim || nodes.length <= dim + 1) {
      for (const i of nodes)
        for (let d = 0; d < dim; d++) result[i * dim + d] = rng.uniform(-range, range) + meta[c * dim + d]!;
      continue;
    }
    const emb = spectralConnected(subgraph(g, nodes, where), dim, rng, signal);
    let maxAbs = 0;
    for (const v of emb) if (Math.abs(v) > maxAbs) maxAbs = Math.abs(v);
    const expansion = maxAbs > 0 ? range / maxAbs : 1;
    nodes.forEach((i, t) => {
      for (let d = 0; d < dim; d++) result[i * dim + d] = emb[t * dim + d]! * expansion + meta[c * dim + d]!;
    });
  }
  return result;
}

/** Options of {@link optimizeLayoutEuclidean}. */
export interface OptimizeOptions extends LayoutHooks {
  readonly a: number;
  readonly b: number;
  /** Weight of the repulsive samples (default 1). */
  readonly gamma?: number;
  /** Initial learning rate (default 1). */
  readonly initialAlpha?: number;
  /** Repulsive samples per attractive one (default 5). */
  readonly negativeSampleRate?: number;
  /** Random stream of the negative samples. */
  readonly rng: Rng;
}

/**
 * umap-learn's `optimize_layout_euclidean` (with `move_other`) on this thread: SGD over `nEpochs`
 * epochs on `embedding` (n × dim, row-major, updated in place). Edge i (head → tail) is sampled every
 * `epochsPerSample[i]` epochs, each sample followed by its due negative samples; gradients are
 * clipped to ±4 (see umap-sgd.ts). Deterministic for a seed; `optimizeLayout` (umap-sgd.ts) is the
 * same on threads, with the same result.
 */
export function optimizeLayoutEuclidean(
  embedding: Float32Array | Float64Array,
  dim: number,
  head: Int32Array,
  tail: Int32Array,
  epochsPerSample: Float64Array,
  nEpochs: number,
  opts: OptimizeOptions,
): void {
  // Work in float32 like umap-learn (half the cache footprint of float64 at 100k+ cells).
  const s = sgdSetup(
    Float32Array.from(embedding),
    dim,
    head,
    tail,
    epochsPerSample,
    nEpochs,
    { ...opts, seed: seedWords(opts.rng, []) },
    false,
  );
  sgdPart(0, 1, s, () => opts.signal?.aborted ?? false, opts.onProgress ?? null);
  opts.signal?.throwIfAborted();
  embedding.set(s.Y);
}

/** Seed words for the SGD's blocks, drawn from `rng` in order as they are asked for. */
function seedWords(rng: Rng, words: number[]): (w: number) => number {
  return (w) => {
    while (words.length <= w) words.push(rng.uint32());
    return words[w]!;
  };
}

/** Options of {@link umapLayout}. */
export interface UmapLayoutOptions extends LayoutHooks {
  /** Embedding dimensions (2 or 3). */
  readonly nComponents: number;
  /** Epochs; default 500 for up to 10,000 nodes, else 200. */
  readonly nEpochs?: number | null;
  readonly a: number;
  readonly b: number;
  readonly gamma?: number;
  readonly initialAlpha?: number;
  readonly negativeSampleRate?: number;
  /** "spectral" (default), "random", or starting coordinates (n × nComponents, row-major). */
  readonly init?: "spectral" | "random" | ArrayLike<number>;
  /** The representation the graph was built from (only used to place many disconnected components). */
  readonly data?: { values: ArrayLike<number>; width: number };
  readonly rng: Rng;
}

/** What the SGD starts from: scaled positions and the sampled edges (or nothing left to do). */
interface PreparedLayout {
  readonly embedding: Float32Array;
  readonly sgd: {
    readonly head: Int32Array;
    readonly tail: Int32Array;
    readonly epochsPerSample: Float64Array;
    readonly nEpochs: number;
  } | null;
}

/** Steps 1–3 of a layout: prune the graph, initial positions, every axis to [0, 10]; the edges to sample. */
function prepareLayout(graph: SparseMatrix, opts: UmapLayoutOptions): PreparedLayout {
  const n = graph.shape[0];
  if (graph.shape[1] !== n) throw new Error(`umap: the graph must be square, got ${graph.shape.join(" × ")}`);
  if (graph.kind !== "csr" && graph.kind !== "csc")
    throw new Error("umap: the graph must be a sparse matrix");
  const dim = opts.nComponents;
  if (!Number.isInteger(dim) || dim < 1)
    throw new Error(`umap: n_components must be a positive integer, got ${dim}`);
  const defaultEpochs = n <= 10000 ? 500 : 200;
  const nEpochs = opts.nEpochs ?? defaultEpochs;
  if (!Number.isInteger(nEpochs) || nEpochs < 0)
    throw new Error(`umap: n_epochs must be an integer ≥ 0, got ${nEpochs}`);
  const rng = opts.rng;
  // 1. Drop edges that would be sampled less than once.
  const src = graph.data as unknown as ArrayLike<number | bigint>;
  let maxW = 0;
  for (let k = 0; k < src.length; k++) if (Number(src[k]) > maxW) maxW = Number(src[k]);
  const threshold = maxW / (nEpochs > 10 ? nEpochs : defaultEpochs);
  const g = pruneGraph(graph, threshold);
  // 2. Initial positions.
  let init: Float64Array | Float32Array;
  const spread = opts.onProgress;
  if (opts.init === undefined || opts.init === "spectral") {
    let layout: Float64Array;
    if (n <= dim + 1) {
      layout = new Float64Array(n * dim);
      for (let i = 0; i < layout.length; i++) layout[i] = rng.uniform(-10, 10);
    } else layout = spectralLayout(g, dim, rng.fork("spectral"), opts.data, opts.signal);
    init = noisyScale(layout, rng);
  } else if (opts.init === "random") {
    init = new Float32Array(n * dim);
    for (let i = 0; i < init.length; i++) init[i] = rng.uniform(-10, 10);
  } else {
    if (opts.init.length !== n * dim)
      throw new Error(`umap: initial positions have ${opts.init.length} values, expected ${n} × ${dim}`);
    init = Float32Array.from(opts.init);
  }
  spread?.(0.05);
  // 3. Every axis to [0, 10].
  const embedding = new Float32Array(n * dim);
  for (let d = 0; d < dim; d++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      const v = init[i * dim + d]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    const span = hi - lo;
    for (let i = 0; i < n; i++)
      embedding[i * dim + d] = span > 0 ? (10 * (init[i * dim + d]! - lo)) / span : 0;
  }
  if (nEpochs === 0 || g.indices.length === 0) return { embedding, sgd: null };
  // 4. The edges in row-major order and how often each is sampled.
  const head = sharedInt32(g.indices.length);
  for (let i = 0; i < n; i++) head.fill(i, g.indptr[i]!, g.indptr[i + 1]!);
  const epochsPerSample = new Float64Array(
    typeof SharedArrayBuffer !== "undefined"
      ? new SharedArrayBuffer(g.weights.length * 8)
      : new ArrayBuffer(g.weights.length * 8),
  );
  let gMax = 0;
  for (const w of g.weights) if (w > gMax) gMax = w;
  for (let k = 0; k < g.weights.length; k++) {
    const samples = nEpochs * (g.weights[k]! / gMax);
    epochsPerSample[k] = samples > 0 ? nEpochs / samples : -1;
  }
  return { embedding, sgd: { head, tail: g.indices, epochsPerSample, nEpochs } };
}

/** The SGD's options from the layout's. */
function sgdOptions(opts: UmapLayoutOptions): OptimizeOptions {
  const spread = opts.onProgress;
  return {
    a: opts.a,
    b: opts.b,
    gamma: opts.gamma,
    initialAlpha: opts.initialAlpha,
    negativeSampleRate: opts.negativeSampleRate,
    rng: opts.rng.fork("sgd"),
    signal: opts.signal,
    onProgress: spread ? (f) => spread(0.05 + 0.95 * f) : undefined,
  };
}

/**
 * UMAP coordinates (n × nComponents, row-major float32) of a fuzzy neighbourhood graph (a square
 * sparse matrix of membership strengths, such as scanpy's `connectivities`), on this thread.
 */
export function umapLayout(graph: SparseMatrix, opts: UmapLayoutOptions): Float32Array {
  const { embedding, sgd } = prepareLayout(graph, opts);
  if (!sgd) return embedding;
  const { head, tail, epochsPerSample, nEpochs } = sgd;
  optimizeLayoutEuclidean(
    embedding,
    opts.nComponents,
    head,
    tail,
    epochsPerSample,
    nEpochs,
    sgdOptions(opts),
  );
  return embedding;
}

/**
 * `umapLayout` with the SGD on up to `threads` threads (`optimizeLayout` in umap-sgd.ts): the same
 * layout as `umapLayout`'s for the same seed, whatever the thread count.
 */
export async function umapLayoutAsync(
  graph: SparseMatrix,
  opts: UmapLayoutOptions,
  threads: number,
): Promise<Float32Array> {
  const { embedding, sgd } = prepareLayout(graph, opts);
  if (!sgd) return embedding;
  const { head, tail, epochsPerSample, nEpochs } = sgd;
  const o = sgdOptions(opts);
  await optimizeLayout(embedding, opts.nComponents, head, tail, epochsPerSample, nEpochs, threads, {
    ...o,
    seed: seedWords(o.rng, []),
  });
  return embedding;
}

/** umap's `noisy_scale_coords`: scale so the largest |coordinate| is 10, add N(0, 1e-4) noise; float32. */
function noisyScale(coords: Float64Array, rng: Rng): Float32Array {
  let maxAbs = 0;
  for (const v of coords) if (Math.abs(v) > maxAbs) maxAbs = Math.abs(v);
  const expansion = maxAbs > 0 ? 10 / maxAbs : 1;
  const out = new Float32Array(coords.length);
  for (let i = 0; i < coords.length; i++)
    out[i] = Math.fround(coords[i]! * expansion) + rng.normal(0, 0.0001);
  return out;
}

/**
 * Weighted neighbourhood graphs from kNN results, as scanpy's `pp.neighbors` derives its
 * `connectivities`:
 *
 * - `fuzzySimplicialSet`: umap-learn's fuzzy simplicial set. Per row a smooth kNN distance (σ by
 *   binary search so that Σ exp(−(d − ρ)/σ) = log2 k, ρ the distance to the nearest non-identical
 *   neighbour), membership strengths exp(−(d − ρ)/σ), then the fuzzy union A + Aᵀ − A∘Aᵀ.
 * - `gaussKnn` / `gaussDense`: the Gaussian kernel with adaptive widths (Coifman 2005; Haghverdi 2016)
 *   of scanpy's `method="gauss"`.
 *
 * kNN inputs are n × k row-major (`knn.ts` layout: self first, ascending distance).
 */
import { allocArray, type SparseMatrix } from "../data/arrays.js";
import { onSharedMemory, runRowKernel } from "./row-threads.js";
import { allocIndex } from "./sparse.js";

/**
 * umap-learn's `smooth_knn_dist`: per row ρ (distance to the `localConnectivity`-th non-zero
 * neighbour, interpolated) and σ (binary search, 64 steps at most). Distances must be sorted per row.
 */
export function smoothKnnDist(
  dists: Float32Array,
  n: number,
  k: number,
  nIter = 64,
  localConnectivity = 1,
  bandwidth = 1,
): { sigmas: Float32Array; rhos: Float32Array } {
  const rhos = new Float32Array(n);
  const sigmas = new Float32Array(n);
  smoothKnnRows(
    dists,
    null,
    k,
    0,
    n,
    nIter,
    localConnectivity,
    Math.log2(k) * bandwidth,
    meanDistance(dists, n, k),
    sigmas,
    rhos,
    null,
  );
  return { sigmas, rhos };
}

/** The mean of all n × k distances (σ's floor for rows whose ρ is 0). */
function meanDistance(dists: Float32Array, n: number, k: number): number {
  let total = 0;
  for (let i = 0; i < n * k; i++) total += dists[i]!;
  return total / (n * k);
}

/**
 * `smoothKnnDist` of rows i0…i1−1 (σ and ρ into `sigmas`, `rhos`), and with `indices` and `vals`
 * given, each row's membership strengths exp(−(d − ρ)/σ) into vals[i·k + j] (0 for the row itself, a
 * missing neighbour, or a strength of 0: the entries the graph leaves out), in float32 arithmetic as
 * umap's numba kernel. Self-contained (its source runs in worker threads as is), so rows can be
 * shared among threads with the same result.
 */
export function smoothKnnRows(
  dists: Float32Array,
  indices: Int32Array | null,
  k: number,
  i0: number,
  i1: number,
  nIter: number,
  localConnectivity: number,
  target: number,
  meanAll: number,
  sigmas: Float32Array,
  rhos: Float32Array,
  vals: Float32Array | null,
): void {
  const TOLERANCE = 1e-5; // SMOOTH_K_TOLERANCE
  const MIN_SCALE = 1e-3; // MIN_K_DIST_SCALE
  const F32_MAX = 3.4028234663852886e38;
  const nonZero = new Float64Array(k);
  for (let i = i0; i < i1; i++) {
    const row = i * k;
    let nz = 0;
    let rowSum = 0;
    for (let j = 0; j < k; j++) {
      const v = dists[row + j]!;
      rowSum += v;
      if (v > 0) nonZero[nz++] = v;
    }
    let rho = 0;
    if (nz >= localConnectivity) {
      const index = Math.floor(localConnectivity);
      const interp = localConnectivity - index;
      if (index > 0) {
        rho = nonZero[index - 1]!;
        if (interp > TOLERANCE) rho += interp * (nonZero[index]! - nonZero[index - 1]!);
      } else rho = interp * nonZero[0]!;
    } else if (nz > 0) {
      for (let j = 0; j < nz; j++) rho = Math.max(rho, nonZero[j]!);
    }
    rho = Math.fround(rho);
    rhos[i] = rho;
    let lo = 0;
    let hi = F32_MAX;
    let mid = 1;
    for (let it = 0; it < nIter; it++) {
      let psum = 0;
      for (let j = 1; j < k; j++) {
        const d = dists[row + j]! - rho;
        psum += d > 0 ? Math.exp(-(d / mid)) : 1;
      }
      if (Math.abs(psum - target) < TOLERANCE) break;
      if (psum > target) {
        hi = mid;
        mid = (lo + hi) / 2;
      } else {
        lo = mid;
        if (hi >= F32_MAX) mid *= 2;
        else mid = (lo + hi) / 2;
      }
    }
    let sigma = mid;
    if (rho > 0) {
      const meanRow = rowSum / k;
      if (sigma < MIN_SCALE * meanRow) sigma = MIN_SCALE * meanRow;
    } else if (sigma < MIN_SCALE * meanAll) sigma = MIN_SCALE * meanAll;
    sigmas[i] = sigma;
    if (!indices || !vals) continue;
    const sg = sigmas[i]!;
    for (let j = 0; j < k; j++) {
      const c = indices[row + j]!;
      let v = 0;
      if (c >= 0 && c !== i) {
        // float32 arithmetic as umap's numba kernel: (d − ρ) and σ are float32 there.
        const diff = Math.fround(dists[row + j]! - rho);
        v = diff <= 0 || sg === 0 ? 1 : Math.fround(Math.exp(-(diff / sg)));
      }
      vals[row + j] = v;
    }
  }
}

/** A CSR matrix from per-row sorted (col, value) lists, float32 values, zeros dropped. */
function csrFromTriplets(
  n: number,
  rows: Int32Array,
  cols: Int32Array,
  vals: Float64Array,
  count: number,
): { indptr: Int32Array; indices: Int32Array; data: Float64Array } {
  const indptr = new Int32Array(n + 1);
  for (let e = 0; e < count; e++) indptr[rows[e] + 1]++;
  for (let i = 0; i < n; i++) indptr[i + 1] += indptr[i];
  const next = indptr.slice(0, n);
  const indices = new Int32Array(count);
  const data = new Float64Array(count);
  for (let e = 0; e < count; e++) {
    const at = next[rows[e]]++;
    indices[at] = cols[e];
    data[at] = vals[e];
  }
  // Sort each row by column (rows are short: insertion sort).
  for (let i = 0; i < n; i++) {
    for (let a = indptr[i] + 1; a < indptr[i + 1]; a++) {
      const c = indices[a];
      const v = data[a];
      let b = a - 1;
      while (b >= indptr[i] && indices[b] > c) {
        indices[b + 1] = indices[b];
        data[b + 1] = data[b];
        b--;
      }
      indices[b + 1] = c;
      data[b + 1] = v;
    }
  }
  return { indptr, indices, data };
}

/**
 * Symmetrise a directed weight matrix given as CSR (sorted rows): `union` gives w + wᵀ − w∘wᵀ (the
 * fuzzy union), `copy` gives max-structure with wᵀ filling missing entries (scanpy's gauss
 * symmetrisation: w[j,i] = w[i,j] where only one direction exists). Output float32 CSR on shared memory.
 */
function symmetrise(
  n: number,
  a: { indptr: Int32Array; indices: Int32Array; data: Float64Array },
  mode: "union" | "copy",
): SparseMatrix {
  // Transpose of a (also sorted by column within each row, by construction of the counting pass).
  const nnz = a.indptr[n];
  const tptr = new Int32Array(n + 1);
  for (let e = 0; e < nnz; e++) tptr[a.indices[e] + 1]++;
  for (let i = 0; i < n; i++) tptr[i + 1] += tptr[i];
  const next = tptr.slice(0, n);
  const tind = new Int32Array(nnz);
  const tdat = new Float64Array(nnz);
  for (let i = 0; i < n; i++) {
    for (let e = a.indptr[i]; e < a.indptr[i + 1]; e++) {
      const at = next[a.indices[e]]++;
      tind[at] = i;
      tdat[at] = a.data[e];
    }
  }
  // Merge row i of a with row i of aᵀ; first count, then fill.
  const outPtr = allocIndex(n + 1, 2 * nnz);
  const mergeRow = (i: number, emit: ((c: number, v: number) => void) | null): number => {
    let p = a.indptr[i];
    const pe = a.indptr[i + 1];
    let q = tptr[i];
    const qe = tptr[i + 1];
    let cnt = 0;
    while (p < pe || q < qe) {
      let c: number;
      let x = 0;
      let y = 0;
      if (q >= qe || (p < pe && a.indices[p] < tind[q])) {
        c = a.indices[p];
        x = a.data[p++];
      } else if (p >= pe || tind[q] < a.indices[p]) {
        c = tind[q];
        y = tdat[q++];
      } else {
        c = a.indices[p];
        x = a.data[p++];
        y = tdat[q++];
      }
      const v = mode === "union" ? x + y - x * y : x !== 0 ? x : y;
      if (v !== 0) {
        cnt++;
        emit?.(c, v);
      }
    }
    return cnt;
  };
  for (let i = 0; i < n; i++) outPtr[i + 1] = outPtr[i] + mergeRow(i, null);
  const total = Number(outPtr[n]);
  const indices = allocIndex(total, n);
  const data = allocArray("float32", total) as Float32Array;
  let w = 0;
  const emit = (c: number, v: number) => {
    indices[w] = c;
    data[w++] = v;
  };
  for (let i = 0; i < n; i++) mergeRow(i, emit);
  return { kind: "csr", dtype: "float32", shape: [n, n], data, indices, indptr: outPtr };
}

/**
 * umap-learn's `fuzzy_simplicial_set` on a precomputed kNN graph (n × k, self first): the
 * symmetric connectivities scanpy stores as `obsp["connectivities"]` (float32 CSR, sorted columns).
 */
export function fuzzySimplicialSet(
  indices: Int32Array,
  dists: Float32Array,
  n: number,
  k: number,
  opts: { setOpMixRatio?: number; localConnectivity?: number } = {},
): SparseMatrix {
  const strengths = new Float32Array(n * k);
  smoothKnnRows(
    dists,
    indices,
    k,
    0,
    n,
    64,
    opts.localConnectivity ?? 1,
    Math.log2(k),
    meanDistance(dists, n, k),
    new Float32Array(n),
    new Float32Array(n),
    strengths,
  );
  return fuzzyFromStrengths(indices, strengths, n, k, opts.setOpMixRatio ?? 1);
}

/**
 * `fuzzySimplicialSet` with the per-row part (σ, ρ, membership strengths: most of its time, the
 * binary searches' exponentials) shared among `threads` threads; the same result.
 */
export async function fuzzySimplicialSetAsync(
  indices: Int32Array,
  dists: Float32Array,
  n: number,
  k: number,
  threads: number,
  signal?: AbortSignal,
): Promise<SparseMatrix> {
  if (threads < 2 || n * k < MIN_THREADED_ENTRIES || typeof SharedArrayBuffer === "undefined")
    return fuzzySimplicialSet(indices, dists, n, k);
  const shared = <T extends Float32Array | Int32Array>(a: T): T => {
    if (onSharedMemory(a)) return a;
    const Ctor = a.constructor as new (b: SharedArrayBuffer) => T;
    const out = new Ctor(new SharedArrayBuffer(a.byteLength));
    out.set(a as never);
    return out;
  };
  const d = shared(dists);
  const ind = shared(indices);
  const sigmas = new Float32Array(new SharedArrayBuffer(4 * n));
  const rhos = new Float32Array(new SharedArrayBuffer(4 * n));
  const strengths = new Float32Array(new SharedArrayBuffer(4 * n * k));
  const meanAll = meanDistance(d, n, k);
  const target = Math.log2(k);
  const bounds = Array.from({ length: threads + 1 }, (_, p) => Math.floor((n * p) / threads));
  await runRowKernel(
    smoothKnnRows,
    bounds,
    (p) => [d, ind, k, bounds[p], bounds[p + 1], 64, 1, target, meanAll, sigmas, rhos, strengths],
    signal,
  );
  return fuzzyFromStrengths(indices, strengths, n, k, 1);
}

/** Fewer kNN entries than this and a worker's start costs more than the rows' share saves. */
const MIN_THREADED_ENTRIES = 300_000;

/** The fuzzy set from per-entry membership strengths (0: no edge): union (mix 1) or a mix with the intersection. */
function fuzzyFromStrengths(
  indices: Int32Array,
  strengths: Float32Array,
  n: number,
  k: number,
  mix: number,
): SparseMatrix {
  const rows = new Int32Array(n * k);
  const cols = new Int32Array(n * k);
  const vals = new Float64Array(n * k);
  let count = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < k; j++) {
      const v = strengths[i * k + j]!;
      if (v === 0) continue;
      rows[count] = i;
      cols[count] = indices[i * k + j]!;
      vals[count++] = v;
    }
  }
  const a = csrFromTriplets(n, rows, cols, vals, count);
  if (mix === 1) return symmetrise(n, a, "union");
  // General mix: ratio · union + (1 − ratio) · intersection (product).
  const union = symmetrise(n, a, "union");
  const prodRatio = 1 - mix;
  // Product entries w∘wᵀ exist only where both directions do; recompute per union entry.
  const lookup = (r: number, c: number): number => {
    for (let e = a.indptr[r]; e < a.indptr[r + 1]; e++) if (a.indices[e] === c) return a.data[e];
    return 0;
  };
  const out = union.data as Float32Array;
  for (let i = 0; i < n; i++) {
    for (let e = Number(union.indptr[i]); e < Number(union.indptr[i + 1]); e++) {
      const c = Number(union.indices[e]);
      const prod = lookup(i, c) * lookup(c, i);
      out[e] = mix * out[e] + prodRatio * prod;
    }
  }
  return union;
}

/**
 * scanpy's gauss kernel on a kNN graph (`knn=True`, sparse branch): σᵢ² = median of row i's k − 1
 * squared neighbour distances, wᵢⱼ = √(2σᵢσⱼ / (σᵢ² + σⱼ²)) · exp(−dᵢⱼ² / (σᵢ² + σⱼ²)) on the kNN
 * edges, made symmetric by copying a one-way edge's weight to its mirror.
 */
export function gaussKnn(indices: Int32Array, dists: Float32Array, n: number, k: number): SparseMatrix {
  const h = k - 1;
  const sigSq = new Float64Array(n);
  const buf = new Float64Array(h);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < h; j++) {
      const d = dists[i * k + 1 + j];
      buf[j] = d * d;
    }
    const s = buf.slice(0, h).sort();
    sigSq[i] = h === 0 ? 0 : h % 2 ? s[(h - 1) / 2] : (s[h / 2 - 1] + s[h / 2]) / 2;
  }
  const rows = new Int32Array(n * h);
  const cols = new Int32Array(n * h);
  const vals = new Float64Array(n * h);
  let count = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < h; j++) {
      const c = indices[i * k + 1 + j];
      if (c < 0) continue;
      const d = dists[i * k + 1 + j];
      const den = sigSq[i] + sigSq[c];
      const num = 2 * Math.sqrt(sigSq[i]) * Math.sqrt(sigSq[c]);
      const v = den > 0 ? Math.sqrt(num / den) * Math.exp(-(d * d) / den) : 0;
      rows[count] = i;
      cols[count] = c;
      vals[count++] = v;
    }
  }
  return symmetrise(n, csrFromTriplets(n, rows, cols, vals, count), "copy");
}

/**
 * scanpy's gauss kernel without the kNN restriction (`knn=False`): a dense n × n float64 matrix from
 * the dense squared distances (row-major, zero diagonal); σᵢ² is a quarter of the squared distance to
 * row i's (k − 1)-th other neighbour, weights ≤ 1e-14 are set to zero, the diagonal is 1.
 */
export function gaussDense(distSq: Float64Array, n: number, k: number): Float64Array {
  const sigSq = new Float64Array(n);
  const row = new Float64Array(n);
  const kk = Math.min(k, n) - 1;
  for (let i = 0; i < n; i++) {
    row.set(distSq.subarray(i * n, (i + 1) * n));
    row.sort();
    sigSq[i] = row[kk] / 4;
  }
  const w = allocArray("float64", n * n) as Float64Array;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const den = sigSq[i] + sigSq[j];
      const num = 2 * Math.sqrt(sigSq[i]) * Math.sqrt(sigSq[j]);
      const v = den > 0 ? Math.sqrt(num / den) * Math.exp(-distSq[i * n + j] / den) : 0;
      w[i * n + j] = v > 1e-14 ? v : 0;
    }
  }
  return w;
}

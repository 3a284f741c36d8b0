/**
 * Scrublet's doublet detection (scanpy's `preprocessing/_scrublet/core.py`): simulate doublets from
 * pairs of observed cells, embed observed and simulated cells together, score each cell by the share
 * of simulated doublets among its neighbours, and pick the threshold between the two modes.
 */
import { allocArray, type SparseMatrix } from "../../../sdk/data/arrays.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { knn, knnExact } from "../../../sdk/math/knn.js";
import type { RowMatrix } from "../../../sdk/math/regression.js";
import type { Rng } from "../../../sdk/math/rng.js";
import { dataOperator, lanczosSvd, project } from "../../../sdk/math/svd.js";
import type { ScrubletParams } from "./scrublet.js";
import {
  type Csr,
  columnMeanVar,
  medianPositive,
  normalizeRows,
  rowSums,
  seuratHvg,
  subsetCsr,
} from "./scrublet-pipeline.js";

/**
 * Points (observed + simulated) up to which the automatic choice searches neighbours exactly: with
 * Scrublet's large k (≈ 1.5·√n_obs) brute force beats NN-descent well past the generic cut-off;
 * above it a random-projection forest (`rpForestKnn`) is used.
 */
const SCRUBLET_EXACT_MAX_ROWS = 20000;

/** Reorder the first `c` (dist, id) pairs so that the `keep` smallest distances come first (Hoare quickselect). */
function selectSmallest(dist: Float64Array, ids: Int32Array, c: number, keep: number): void {
  let lo = 0;
  let hi = c - 1;
  while (hi > lo) {
    const pivot = dist[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (dist[i]! < pivot) i++;
      while (dist[j]! > pivot) j--;
      if (i <= j) {
        const td = dist[i]!;
        dist[i] = dist[j]!;
        dist[j] = td;
        const ti = ids[i]!;
        ids[i] = ids[j]!;
        ids[j] = ti;
        i++;
        j--;
      }
    }
    if (keep - 1 <= j) hi = j;
    else if (keep - 1 >= i) lo = i;
    else return;
  }
}

/**
 * Approximate kNN for Scrublet's large k: a forest of random-projection trees whose leaves hold
 * k–2k points; each point's neighbours are the k nearest among the union of its leaves (exact
 * distances). Cost O(n · trees · leaf · d), independent of k² (NN-descent's cost grows with k², and
 * Scrublet's k is ≈ 4.5·√n_obs). Self comes first, as in `KnnGraph`.
 */
function rpForestKnn(
  x: Float32Array,
  n: number,
  d: number,
  k: number,
  rng: Rng,
  signal: AbortSignal,
  progress: (f: number) => void,
  nTrees = 5,
): { k: number; indices: Int32Array } {
  const leafMax = Math.max(2 * k, 64);
  const leaves: Int32Array[] = [];
  const leafOf = new Int32Array(n * nTrees);
  const proj = new Float64Array(n);
  for (let tree = 0; tree < nTrees; tree++) {
    signal.throwIfAborted();
    const order = Int32Array.from({ length: n }, (_, i) => i);
    const stack: [number, number][] = [[0, n]];
    while (stack.length) {
      const [lo, hi] = stack.pop()!;
      const size = hi - lo;
      if (size <= leafMax) {
        const id = leaves.length;
        const members = order.slice(lo, hi);
        leaves.push(members);
        for (const p of members) leafOf[p * nTrees + tree] = id;
        continue;
      }
      // Hyperplane between two random points; split at the median projection (balanced leaves).
      const a = order[lo + rng.int(size)]!;
      let b = order[lo + rng.int(size)]!;
      if (b === a) b = order[order[lo] === a ? lo + 1 : lo]!;
      for (let i = lo; i < hi; i++) {
        const p = order[i]!;
        let s = 0;
        for (let t = 0; t < d; t++) s += x[p * d + t]! * (x[a * d + t]! - x[b * d + t]!);
        proj[p] = s;
      }
      const seg = Array.from(order.subarray(lo, hi)).sort((u, v) => proj[u]! - proj[v]!);
      order.set(seg, lo);
      const mid = lo + (size >> 1);
      stack.push([lo, mid], [mid, hi]);
    }
    progress((0.3 * (tree + 1)) / nTrees);
  }
  const indices = new Int32Array(n * k);
  const stamp = new Int32Array(n).fill(-1);
  const cap = nTrees * leafMax;
  const dist = new Float64Array(cap);
  const ids = new Int32Array(cap);
  for (let p = 0; p < n; p++) {
    if ((p & 1023) === 0) {
      signal.throwIfAborted();
      progress(0.3 + (0.7 * p) / n);
    }
    stamp[p] = p;
    let c = 0;
    const po = p * d;
    for (let tree = 0; tree < nTrees; tree++) {
      const leaf = leaves[leafOf[p * nTrees + tree]!]!;
      for (let li = 0; li < leaf.length; li++) {
        const q = leaf[li]!;
        if (stamp[q] === p) continue;
        stamp[q] = p;
        const qo = q * d;
        let s = 0;
        for (let t = 0; t < d; t++) {
          const u = x[po + t]! - x[qo + t]!;
          s += u * u;
        }
        ids[c] = q;
        dist[c++] = s;
      }
    }
    // The k − 1 nearest candidates (any order): quickselect on (distance, id) pairs.
    const keep = Math.min(k - 1, c);
    if (keep < c) selectSmallest(dist, ids, c, keep);
    indices[p * k] = p;
    for (let j = 0; j < k - 1; j++) indices[p * k + 1 + j] = j < keep ? ids[j]! : p;
  }
  return { k, indices };
}

/** Python's `round` (half to even). */
function pyRound(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** A binomial deviate (n trials, probability p) by geometric waiting times: O(np) expected. */
function binomial(rng: Rng, n: number, p: number): number {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  const q = Math.log(1 - p);
  let x = 0;
  let sum = 0;
  for (;;) {
    sum += Math.floor(Math.log(1 - rng.next()) / q) + 1;
    if (sum > n) return x;
    x++;
  }
}

/**
 * skimage's `threshold_minimum`: a 256-bin histogram smoothed by a 3-wide running mean (reflecting
 * edges, float32) until it has at most two maxima; the threshold is the bin centre of the lowest point
 * between them. Null when two maxima cannot be found.
 */
export function thresholdMinimum(values: ArrayLike<number>, nbins = 256): number | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    lo = Math.min(lo, values[i]!);
    hi = Math.max(hi, values[i]!);
  }
  if (!(hi > lo)) return null;
  let hist = new Float32Array(nbins);
  const scale = nbins / (hi - lo);
  for (let i = 0; i < values.length; i++) {
    const b = Math.min(nbins - 1, Math.floor((values[i]! - lo) * scale));
    hist[b]!++;
  }
  const maxima = (h: Float32Array): number[] => {
    const out: number[] = [];
    let dir = 1;
    for (let i = 0; i < h.length - 1; i++) {
      if (dir > 0) {
        if (h[i + 1]! < h[i]!) {
          dir = -1;
          out.push(i);
        }
      } else if (h[i + 1]! > h[i]!) dir = 1;
    }
    return out;
  };
  let idx: number[] = [];
  let counter = 0;
  const maxIter = 10000;
  for (counter = 0; counter < maxIter; counter++) {
    const next = new Float32Array(nbins);
    for (let i = 0; i < nbins; i++) {
      const a = hist[i === 0 ? 0 : i - 1]!;
      const c = hist[i === nbins - 1 ? nbins - 1 : i + 1]!;
      next[i] = (a + hist[i]! + c) / 3;
    }
    hist = next;
    idx = maxima(hist);
    if (idx.length < 3) break;
  }
  if (idx.length !== 2 || counter === maxIter - 1) return null;
  let best = idx[0]!;
  for (let i = idx[0]!; i <= idx[1]!; i++) if (hist[i]! < hist[best]!) best = i;
  const width = (hi - lo) / nbins;
  return lo + (best + 0.5) * width;
}

/** What one Scrublet run returns (positions are rows of the input given to it). */
export interface ScrubletRun {
  /** Score per input row (NaN for rows the cell filter dropped). */
  readonly scores: Float64Array;
  /** Call per input row (-1 for dropped rows or when no threshold was found). */
  readonly called: Int8Array;
  readonly scoresSim: Float64Array;
  /** n_sim × 2 parent rows (input positions). */
  readonly parents: Int32Array;
  readonly threshold: number | null;
  readonly nNeighbors: number;
  readonly neighborParents?: Int32Array[];
  readonly stats: string;
}

/** The Scrublet pipeline of scanpy's `pp.scrublet` on the rows `rows` of `y` (raw counts). */
export function runScrublet(
  y: RowMatrix,
  rows: Int32Array,
  params: Required<Omit<ScrubletParams, "batch_key" | "n_neighbors" | "threshold" | "use_approx_neighbors">> &
    Pick<ScrubletParams, "n_neighbors" | "threshold" | "use_approx_neighbors">,
  rng: Rng,
  ctx: OpContext,
  report: (f: number, msg: string) => void,
): ScrubletRun {
  const m = y.cols;
  // filter_genes(min_cells=3), then filter_cells(min_genes=3): cells with X > 0.
  const cellsPerGene = new Float64Array(m);
  if (y.kind === "csr") {
    for (const i of rows)
      for (let t = y.indptr[i]!; t < y.indptr[i + 1]!; t++)
        if (y.data[t]! > 0) cellsPerGene[y.indices[t]!]!++;
  } else {
    for (const i of rows) for (let j = 0; j < m; j++) if (y.data[i * m + j]! > 0) cellsPerGene[j]!++;
  }
  const geneKeep = new Int32Array(m).fill(-1);
  let nGenes = 0;
  for (let j = 0; j < m; j++) if (cellsPerGene[j]! >= 3) geneKeep[j] = nGenes++;
  const all = subsetCsr(y, rows, geneKeep, nGenes);
  const keptRows: number[] = [];
  for (let r = 0; r < all.rows; r++) {
    let g = 0;
    for (let t = all.indptr[r]!; t < all.indptr[r + 1]!; t++) if (all.data[t]! > 0) g++;
    if (g >= 3) keptRows.push(r);
  }
  const kept = Int32Array.from(keptRows);
  const counts = subsetCsr(
    { kind: "csr", ...all },
    kept,
    Int32Array.from({ length: nGenes }, (_, j) => j),
    nGenes,
  );
  const nObs = counts.rows;
  if (nObs < 3) throw new Error(`scrublet: only ${nObs} cells left after filtering; Scrublet needs more`);
  // normalize_total (median target) for the HVG selection; HVGs on that.
  const target = medianPositive(rowSums(counts));
  const hvg = seuratHvg(normalizeRows(counts, target));
  const hvgKeep = new Int32Array(nGenes).fill(-1);
  let nHvg = 0;
  for (let j = 0; j < nGenes; j++) if (hvg[j]) hvgKeep[j] = nHvg++;
  if (nHvg === 0) throw new Error("scrublet: no highly variable genes were found; is X raw counts?");
  const all2 = Int32Array.from({ length: nObs }, (_, i) => i);
  const raw = subsetCsr({ kind: "csr", ...counts }, all2, hvgKeep, nHvg);
  report(0.15, `${nObs} cells, ${nHvg} highly variable genes`);
  ctx.signal.throwIfAborted();

  // Simulate doublets: distinct random pairs from the n_obs × n_obs grid, counts summed.
  const nSim = Math.trunc(nObs * params.sim_doublet_ratio);
  const total = nObs * nObs;
  if (nSim > total) throw new Error(`scrublet: cannot draw ${nSim} distinct pairs of ${nObs} cells`);
  const seen = new Set<number>();
  const parents = new Int32Array(nSim * 2);
  for (let s = 0; s < nSim; s++) {
    let flat: number;
    do flat = rng.int(total);
    while (seen.has(flat));
    seen.add(flat);
    parents[2 * s] = Math.floor(flat / nObs);
    parents[2 * s + 1] = flat % nObs;
  }
  seen.clear();
  let simNnz = 0;
  for (let s = 0; s < nSim; s++) {
    const a = parents[2 * s]!;
    const b = parents[2 * s + 1]!;
    simNnz += raw.indptr[a + 1]! - raw.indptr[a]! + raw.indptr[b + 1]! - raw.indptr[b]!;
  }
  const sIndptr = new Float64Array(nSim + 1);
  const sIndices = new Int32Array(simNnz);
  const sData = new Float64Array(simNnz);
  const acc = new Float64Array(nHvg);
  const mark = new Int32Array(nHvg).fill(-1);
  const cols: number[] = [];
  let at = 0;
  const thin = params.synthetic_doublet_umi_subsampling;
  for (let s = 0; s < nSim; s++) {
    cols.length = 0;
    for (const p of [parents[2 * s]!, parents[2 * s + 1]!]) {
      for (let t = raw.indptr[p]!; t < raw.indptr[p + 1]!; t++) {
        const j = raw.indices[t]!;
        if (mark[j] !== s) {
          mark[j] = s;
          acc[j] = 0;
          cols.push(j);
        }
        acc[j]! += raw.data[t];
      }
    }
    cols.sort((a, b) => a - b);
    for (const j of cols) {
      const v = thin < 1 ? binomial(rng, Math.round(acc[j]!), thin) : acc[j]!;
      sIndices[at] = j;
      sData[at++] = v;
    }
    sIndptr[s + 1] = at;
  }
  let sim: Csr = { rows: nSim, cols: nHvg, indptr: sIndptr, indices: sIndices, data: sData };
  report(0.3, `${nSim} simulated doublets`);
  ctx.signal.throwIfAborted();

  // Observed: normalised to the median (then HVG subset); log1p if asked; both to 1e6 per cell.
  let obs = normalizeRows(raw, target);
  if (params.log_transform) {
    obs = { ...obs, data: obs.data.map(Math.log1p) };
    sim = { ...sim, data: sim.data.map(Math.log1p) };
  }
  obs = normalizeRows(obs, 1e6);
  sim = normalizeRows(sim, 1e6);

  // z-score (or centre / scale) with the observed cells' gene statistics, then PCA fitted on them.
  const { mean, variance } = columnMeanVar(obs);
  const inv = new Float64Array(nHvg);
  for (let j = 0; j < nHvg; j++) {
    const sdv = Math.sqrt(variance[j]!);
    inv[j] = params.normalize_variance && sdv > 0 ? 1 / sdv : 1;
  }
  const toMatrix = (x: Csr, dtype: "float64" | "float32"): SparseMatrix => {
    const data = allocArray(dtype, x.data.length) as Float64Array | Float32Array;
    for (let t = 0; t < x.data.length; t++) data[t] = x.data[t]! * inv[x.indices[t]!]!;
    return {
      kind: "csr",
      dtype,
      shape: [x.rows, x.cols],
      data,
      indices: x.indices,
      indptr: Int32Array.from(x.indptr),
    };
  };
  const obsM = toMatrix(obs, "float64");
  const simM = toMatrix(sim, "float32");
  const nComps = Math.min(params.n_prin_comps, nHvg - (params.mean_center ? 1 : 0), nObs - 1);
  if (nComps < 1) throw new Error(`scrublet: too few genes (${nHvg}) or cells (${nObs}) for an embedding`);
  const opObs = dataOperator(obsM, { center: params.mean_center });
  const svd = lanczosSvd(opObs, nComps, { rng: rng.fork("pca"), signal: ctx.signal });
  const nAll = nObs + nSim;
  const manifold = new Float32Array(nAll * nComps);
  project(opObs, svd.v, nComps, manifold.subarray(0, nObs * nComps));
  // Simulated cells are centred with the observed means: (S − 1μᵀ)V = SV − 1(μᵀV).
  const simPart = manifold.subarray(nObs * nComps);
  dataOperator(simM, { center: false }).mul(svd.v, nComps, simPart);
  if (params.mean_center) {
    const muV = new Float64Array(nComps);
    for (let j = 0; j < nHvg; j++) {
      const mu = mean[j]! * inv[j]!;
      for (let c = 0; c < nComps; c++) muV[c]! += mu * svd.v[j * nComps + c]!;
    }
    for (let s = 0; s < nSim; s++) for (let c = 0; c < nComps; c++) simPart[s * nComps + c]! -= muV[c];
  }
  report(0.5, "embedded");
  ctx.signal.throwIfAborted();

  // kNN classifier on observed + simulated: k scaled by (1 + n_sim / n_obs), self included.
  const k = params.n_neighbors ?? pyRound(0.5 * Math.sqrt(nObs));
  const kAdj = Math.min(nAll, pyRound(k * (1 + nSim / nObs)));
  const knnOpts = {
    metric: params.knn_dist_metric,
    rng: rng.fork("knn"),
    signal: ctx.signal,
    progress: (f: number) => report(0.5 + 0.4 * f, "neighbours"),
  };
  const forest =
    params.knn_dist_metric === "euclidean" &&
    (params.use_approx_neighbors === true ||
      (params.use_approx_neighbors == null && nAll > SCRUBLET_EXACT_MAX_ROWS));
  const graph = forest
    ? rpForestKnn(manifold, nAll, nComps, kAdj, knnOpts.rng, ctx.signal, knnOpts.progress)
    : params.use_approx_neighbors === false
      ? knnExact(manifold, nAll, nComps, kAdj, knnOpts)
      : knn(manifold, nAll, nComps, kAdj, { ...knnOpts, exactMaxRows: SCRUBLET_EXACT_MAX_ROWS });
  const skip = params.use_approx_neighbors === true ? 1 : 0; // scanpy drops the self column then
  const rho = params.expected_doublet_rate;
  const r = nSim / nObs;
  const nNb = kAdj;
  const ld = new Float64Array(nAll);
  const se = new Float64Array(nAll);
  const neighborParents: Int32Array[] | undefined = params.get_doublet_neighbor_parents ? [] : undefined;
  for (let p = 0; p < nAll; p++) {
    let nd = 0;
    const uniq = neighborParents && p < nObs ? new Set<number>() : null;
    for (let q = skip; q < graph.k; q++) {
      const nb = graph.indices[p * graph.k + q]!;
      if (nb >= nObs) {
        nd++;
        if (uniq) {
          uniq.add(parents[2 * (nb - nObs)]!);
          uniq.add(parents[2 * (nb - nObs) + 1]!);
        }
      }
    }
    if (uniq) neighborParents!.push(Int32Array.from([...uniq].sort((a, b) => a - b)));
    const qv = (nd + 1) / (nNb + 2);
    const denom = 1 - rho - qv * (1 - rho - rho / r);
    ld[p] = (qv * rho) / r / denom;
    const seQ = Math.sqrt((qv * (1 - qv)) / (nNb + 3));
    se[p] =
      ((qv * rho) / r / (denom * denom)) *
      Math.sqrt(((seQ / qv) * (1 - rho)) ** 2 + ((params.stdev_doublet_rate / rho) * (1 - qv)) ** 2);
  }
  const scoresSim = ld.slice(nObs);
  const threshold = params.threshold ?? thresholdMinimum(scoresSim);
  let stats = "";
  if (threshold === null) {
    ctx.log("scrublet: failed to find a doublet score threshold automatically; give `threshold`");
  } else {
    let detected = 0;
    for (let i = 0; i < nObs; i++) if (ld[i]! > threshold) detected++;
    let detectable = 0;
    for (const v of scoresSim) if (v > threshold) detectable++;
    const dRate = detected / nObs;
    const dFrac = detectable / nSim;
    stats =
      `threshold ${threshold.toFixed(2)}; detected doublet rate ${(100 * dRate).toFixed(1)}%, ` +
      `detectable fraction ${(100 * dFrac).toFixed(1)}%, overall ${(100 * (dRate / dFrac)).toFixed(1)}% ` +
      `(expected ${(100 * rho).toFixed(1)}%)`;
  }
  // Back to the input's rows: filtered-out cells get NaN / no call.
  const scores = new Float64Array(rows.length).fill(Number.NaN);
  const called = new Int8Array(rows.length).fill(-1);
  for (let i = 0; i < nObs; i++) {
    scores[kept[i]!] = ld[i]!;
    called[kept[i]!] = threshold === null ? 0 : ld[i]! > threshold ? 1 : 0;
  }
  const parentsIn = parents.map((pp) => rows[kept[pp]!]!);
  return {
    scores,
    called,
    scoresSim,
    parents: parentsIn,
    threshold,
    nNeighbors: k,
    ...(neighborParents
      ? { neighborParents: neighborParents.map((a) => a.map((pp) => rows[kept[pp]!]!)) }
      : {}),
    stats,
  };
}

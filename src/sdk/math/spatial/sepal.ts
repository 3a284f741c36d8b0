/**
 * Sepal (Andersson & Lundeberg 2021) as squidpy's `gr.sepal` runs it: each gene's expression diffuses
 * over a regular grid graph (hexagonal: 6 neighbours, square: 4) until the entropy of the saturated
 * nodes' concentrations stops changing; the score is the time that took (dt × iterations). Spatially
 * structured genes take longer. Saturated nodes (all `maxNeighs` neighbours) diffuse by the grid's
 * stencil; the others copy the change of their nearest saturated node.
 */

import { allocArray, toShared } from "../../data/arrays.js";
import { runKernelThreads } from "../row-threads.js";

/** The graph prepared for diffusion. */
export interface SepalGraph {
  /** Saturated nodes. */
  readonly sat: Int32Array;
  /** Their neighbours, `maxNeighs` per saturated node. */
  readonly satNbrs: Int32Array;
  /** Unsaturated nodes and, for each, the saturated node whose change it copies. */
  readonly unsat: Int32Array;
  readonly unsatSource: Int32Array;
  readonly maxNeighs: 4 | 6;
}

/**
 * Saturated and unsaturated nodes of a CSR graph (squidpy's `_compute_idxs`): an unsaturated node
 * follows its first saturated neighbour, else the nearest saturated node in L1 distance.
 */
export function sepalGraph(
  indptr: Int32Array,
  indices: Int32Array,
  coords: Float64Array,
  dim: number,
  maxNeighs: 4 | 6,
): SepalGraph {
  const n = indptr.length - 1;
  let most = 0;
  for (let i = 0; i < n; i++) most = Math.max(most, (indptr[i + 1] as number) - (indptr[i] as number));
  if (most !== maxNeighs) {
    throw new Error(`sepal: expected max_neighs=${maxNeighs}, found a node with ${most} neighbours`);
  }
  const sat: number[] = [];
  const unsat: number[] = [];
  const isSat = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const d = (indptr[i + 1] as number) - (indptr[i] as number);
    if (d === maxNeighs) {
      sat.push(i);
      isSat[i] = 1;
    } else unsat.push(i);
  }
  if (sat.length === 0) throw new Error("sepal: no node has all its neighbours; the graph is not a grid");
  const satNbrs = new Int32Array(sat.length * maxNeighs);
  sat.forEach((i, s) => {
    for (let p = 0; p < maxNeighs; p++)
      satNbrs[s * maxNeighs + p] = indices[(indptr[i] as number) + p] as number;
  });
  const unsatSource = new Int32Array(unsat.length);
  unsat.forEach((i, u) => {
    let src = -1;
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      if (isSat[indices[p] as number]) {
        src = indices[p] as number;
        break;
      }
    }
    if (src < 0) {
      let best = Number.POSITIVE_INFINITY;
      for (const s of sat) {
        let d = 0;
        for (let a = 0; a < dim; a++)
          d += Math.abs((coords[i * dim + a] as number) - (coords[s * dim + a] as number));
        if (d < best) {
          best = d;
          src = s;
        }
      }
    }
    unsatSource[u] = src;
  });
  return { sat: Int32Array.from(sat), satNbrs, unsat: Int32Array.from(unsat), unsatSource, maxNeighs };
}

/**
 * The sepal score of one gene (its values over all nodes, overwritten): dt × the first iteration
 * whose entropy change is ≤ thresh, or NaN when none of `nIter` is.
 */
export function sepalScore(
  conc: Float64Array,
  g: SepalGraph,
  nIter: number,
  dt: number,
  thresh: number,
): number {
  const out = new Float64Array(1);
  sepalKernel(
    conc,
    conc.length,
    0,
    1,
    g.sat,
    g.satNbrs,
    g.unsat,
    g.unsatSource,
    g.maxNeighs,
    nIter,
    dt,
    thresh,
    out,
  );
  return out[0] as number;
}

/** Options of {@link sepalScores}. */
export interface SepalRunOptions {
  readonly nIter: number;
  readonly dt: number;
  readonly thresh: number;
  readonly threads?: number;
  readonly signal?: AbortSignal;
}

/**
 * Sepal scores of `nFeatures` genes (rows of `data`, `n` values each, on shared memory; overwritten by
 * the diffusion), genes shared among the job's threads: each gene diffuses on its own, so the scores
 * do not depend on the thread count.
 */
export async function sepalScores(
  data: Float64Array,
  nFeatures: number,
  n: number,
  g: SepalGraph,
  opts: SepalRunOptions,
): Promise<Float64Array> {
  const scores = allocArray("float64", nFeatures) as Float64Array;
  const parts = Math.max(1, Math.min(opts.threads ?? 1, nFeatures));
  const shared = toShared(data);
  const sat = toShared(g.sat);
  const satNbrs = toShared(g.satNbrs);
  const unsat = toShared(g.unsat);
  const unsatSource = toShared(g.unsatSource);
  await runKernelThreads(
    sepalKernel,
    parts,
    (p) => [
      shared,
      n,
      Math.floor((p * nFeatures) / parts),
      Math.floor(((p + 1) * nFeatures) / parts),
      sat,
      satNbrs,
      unsat,
      unsatSource,
      g.maxNeighs,
      opts.nIter,
      opts.dt,
      opts.thresh,
      scores,
    ],
    opts.signal,
  );
  if (shared !== data) data.set(shared);
  return scores;
}

/**
 * Genes [from, to) of `data` (n values each) diffused as squidpy's sepal does, each gene's score into
 * `scores[gene]`: saturated nodes by the grid's stencil, unsaturated ones copying their source's
 * change, negatives clipped, until the change of the saturated nodes' entropy (Shannon, nats, of
 * the positive concentrations normalised to sum 1, divided by their count) is ≤ thresh. Self-contained:
 * it runs as source text in worker threads.
 */
function sepalKernel(
  data: Float64Array,
  n: number,
  from: number,
  to: number,
  sat: Int32Array,
  satNbrs: Int32Array,
  unsat: Int32Array,
  unsatSource: Int32Array,
  maxNeighs: number,
  nIter: number,
  dt: number,
  thresh: number,
  scores: Float64Array,
): void {
  const m = sat.length;
  const dcdt = new Float64Array(n);
  for (let gene = from; gene < to; gene++) {
    const conc = data.subarray(gene * n, (gene + 1) * n);
    let prev = 1;
    let score = Number.NaN;
    for (let it = 0; it < nIter; it++) {
      for (let s = 0; s < m; s++) {
        let nb = 0;
        for (let p = 0; p < maxNeighs; p++) nb += conc[satNbrs[s * maxNeighs + p] as number] as number;
        const c = conc[sat[s] as number] as number;
        dcdt[sat[s] as number] = maxNeighs === 6 ? (2 * nb - 12 * c) / 3 : nb - 4 * c;
      }
      for (let s = 0; s < m; s++) {
        const i = sat[s] as number;
        conc[i] = (conc[i] as number) + (dcdt[i] as number) * dt;
      }
      for (let u = 0; u < unsat.length; u++) {
        const i = unsat[u] as number;
        conc[i] = (conc[i] as number) + (dcdt[unsatSource[u] as number] as number) * dt;
      }
      for (let i = 0; i < n; i++) if ((conc[i] as number) < 0) conc[i] = 0;
      let sum = 0;
      for (let s = 0; s < m; s++) {
        const v = conc[sat[s] as number] as number;
        if (v > 0) sum += v;
      }
      let h = 0;
      if (sum >= Number.EPSILON) {
        for (let s = 0; s < m; s++) {
          const v = conc[sat[s] as number] as number;
          if (v > 0) {
            const q = v / sum;
            h -= Math.log(Math.max(q, Number.EPSILON)) * q;
          }
        }
      }
      const ent = h / m;
      const diff = Math.abs(ent - prev);
      prev = ent;
      if (diff <= thresh) {
        score = dt * it;
        break;
      }
    }
    scores[gene] = score;
  }
}

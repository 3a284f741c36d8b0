/**
 * Sepal (Andersson & Lundeberg 2021) as squidpy's `gr.sepal` runs it: each gene's expression diffuses
 * over a regular grid graph (hexagonal: 6 neighbours, square: 4) until the entropy of the saturated
 * nodes' concentrations stops changing; the score is the time that took (dt × iterations). Spatially
 * structured genes take longer. Saturated nodes (all `maxNeighs` neighbours) diffuse by the grid's
 * stencil; the others copy the change of their nearest saturated node.
 */

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

/** Shannon entropy (nats) of the positive values normalised to sum 1; 0 when they sum to ~0. */
function entropy(conc: Float64Array, sat: Int32Array): number {
  let sum = 0;
  for (let s = 0; s < sat.length; s++) {
    const v = conc[sat[s] as number] as number;
    if (v > 0) sum += v;
  }
  if (sum < Number.EPSILON) return 0;
  let h = 0;
  for (let s = 0; s < sat.length; s++) {
    const v = conc[sat[s] as number] as number;
    if (v > 0) {
      const p = v / sum;
      h -= Math.log(Math.max(p, Number.EPSILON)) * p;
    }
  }
  return h;
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
  const { sat, satNbrs, unsat, unsatSource, maxNeighs } = g;
  const m = sat.length;
  const dcdt = new Float64Array(conc.length);
  let prev = 1;
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
    for (let i = 0; i < conc.length; i++) if ((conc[i] as number) < 0) conc[i] = 0;
    const ent = entropy(conc, sat) / m;
    const diff = Math.abs(ent - prev);
    prev = ent;
    if (diff <= thresh) return dt * it;
  }
  return Number.NaN;
}

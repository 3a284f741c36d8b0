/**
 * The expression model: per cell type, the expected count of every gene, and a fast exact sampler of
 * negative-binomial counts (variance μ + φμ²) written straight into CSR buffers. Shared by the demo
 * and by the benchmark's large-table generator.
 */
import { allocArray, type SparseMatrix } from "../data/arrays.js";
import type { Rng } from "../math/rng.js";
import { CELL_TYPES, HOUSEKEEPING_GENES, HYPOXIA_GENES, MT_GENES } from "./genes.js";

/** Expected counts per (type, gene) for a cell of size factor 1, and the NB dispersion. */
export interface ExpressionModel {
  readonly genes: readonly string[];
  readonly nTypes: number;
  readonly nGenes: number;
  /** `mean[t · nGenes + g]`: expected count of gene g in a type-t cell of size factor 1. */
  readonly mean: Float64Array;
  /** NB dispersion φ (variance = μ + φμ²). */
  readonly dispersion: number;
  /** Column positions of the `MT-` genes and of the hypoxia genes present. */
  readonly mtGenes: Int32Array;
  readonly hypoxiaGenes: Int32Array;
}

/** Options of `buildExpressionModel`. */
export interface ExpressionModelOptions {
  /** Mean total counts of a cell of size factor 1 (default 300, a targeted spatial panel's depth). */
  readonly targetCounts?: number;
  /** NB dispersion φ (default 0.3). */
  readonly dispersion?: number;
  /** Spread (log-sd) of the background expression of non-marker genes (default 1.3). */
  readonly backgroundSpread?: number;
}

/**
 * Build the per-type means over `genes`: each type's markers high and specific, its shared genes
 * moderate, housekeeping and MT genes steady everywhere, every other gene at a log-normal background
 * with a mild type-specific tilt (so types also differ beyond their markers). Each type's means are
 * scaled to sum to `targetCounts`.
 */
export function buildExpressionModel(
  rng: Rng,
  genes: readonly string[],
  opts: ExpressionModelOptions = {},
): ExpressionModel {
  const target = opts.targetCounts ?? 300;
  const spread = opts.backgroundSpread ?? 1.3;
  const nGenes = genes.length;
  const nTypes = CELL_TYPES.length;
  const col = new Map(genes.map((g, i) => [g, i]));
  const mean = new Float64Array(nTypes * nGenes);
  const markerOf = new Int32Array(nGenes).fill(-1);
  CELL_TYPES.forEach((t, ti) => {
    for (const g of t.markers) {
      const j = col.get(g);
      if (j !== undefined) markerOf[j] = ti;
    }
  });
  const housekeeping = new Set(HOUSEKEEPING_GENES);
  const mt = new Set(MT_GENES);
  const hypoxia = new Set(HYPOXIA_GENES);
  const lognormal = (sd: number) => Math.exp(sd * rng.normal());

  for (let g = 0; g < nGenes; g++) {
    const name = genes[g]!;
    let base: number;
    let tilt = 0;
    if (markerOf[g]! >= 0) base = 0.04 * lognormal(0.5);
    else if (housekeeping.has(name)) base = 4 * lognormal(0.5);
    else if (mt.has(name)) base = 2 * lognormal(0.4);
    else if (hypoxia.has(name)) base = 0.8 * lognormal(0.3);
    else {
      base = 0.15 * lognormal(spread);
      tilt = 0.45;
    }
    for (let t = 0; t < nTypes; t++) {
      let v = base * (tilt ? lognormal(tilt) : 1);
      if (tilt && rng.next() < 0.06) v *= 4;
      if (markerOf[g] === t) v = 8 * lognormal(0.4);
      mean[t * nGenes + g] = v;
    }
  }
  CELL_TYPES.forEach((t, ti) => {
    for (const g of t.shared) {
      const j = col.get(g);
      if (j !== undefined && markerOf[j] !== ti)
        mean[ti * nGenes + j] = Math.max(mean[ti * nGenes + j]!, 2.5 * lognormal(0.3));
    }
  });
  for (let t = 0; t < nTypes; t++) {
    let sum = 0;
    for (let g = 0; g < nGenes; g++) sum += mean[t * nGenes + g]!;
    const f = target / sum;
    for (let g = 0; g < nGenes; g++) mean[t * nGenes + g]! *= f;
  }
  const positions = (set: Set<string>) => Int32Array.from(genes.flatMap((g, i) => (set.has(g) ? [i] : [])));
  return {
    genes,
    nTypes,
    nGenes,
    mean,
    dispersion: opts.dispersion ?? 0.3,
    mtGenes: positions(mt),
    hypoxiaGenes: positions(hypoxia),
  };
}

/**
 * An NB(μ, φ) count by inversion of the CDF from a uniform `u` ∈ [0, 1): P(0) = (r/(r+μ))^r with
 * r = 1/φ, then P(k+1) = P(k) · (k+r)/(k+1) · μ/(r+μ). Exact, one uniform per draw, and cost grows
 * with the value drawn, so it suits the small means of count matrices (callers switch to the
 * gamma–Poisson mixture for large means).
 */
export function nbInverse(u: number, mu: number, r: number, p0: number): number {
  const q = mu / (r + mu);
  let p = p0;
  let cdf = p;
  let k = 0;
  const cap = 20 + 20 * mu;
  while (u >= cdf && k < cap) {
    p *= ((k + r) / (k + 1)) * q;
    k++;
    cdf += p;
    if (p === 0) break;
  }
  return k;
}

/** P(X = 0) of NB(μ, r = 1/φ). */
export function nbZero(mu: number, r: number): number {
  return Math.exp(-r * Math.log1p(mu / r));
}

/** Means above this are drawn through the gamma–Poisson mixture, not by inversion. */
export const NB_INVERSION_MAX_MEAN = 64;

/** Growable typed buffers for CSR rows (private until the final exact-size shared copy). */
class CsrBuilder {
  data = new Float32Array(1024);
  indices = new Int32Array(1024);
  nnz = 0;

  push(j: number, v: number): void {
    if (this.nnz === this.data.length) {
      const data = new Float32Array(this.data.length * 2);
      data.set(this.data);
      this.data = data;
      const indices = new Int32Array(this.indices.length * 2);
      indices.set(this.indices);
      this.indices = indices;
    }
    this.data[this.nnz] = v;
    this.indices[this.nnz] = j;
    this.nnz++;
  }
}

/**
 * Raw counts for cells of `types` with `sizeFactors`, as a float32 CSR matrix on shared memory, plus
 * each cell's total. `adjust(cell, mu)` may rescale the row's expected counts before sampling (for
 * damaged cells or spatial gradients).
 */
export function sampleCounts(
  rng: Rng,
  model: ExpressionModel,
  types: Int32Array,
  sizeFactors: Float64Array,
  adjust?: (cell: number, mu: Float64Array) => void,
): { matrix: SparseMatrix; totals: Float64Array } {
  const n = types.length;
  const m = model.nGenes;
  const r = 1 / model.dispersion;
  const mu = new Float64Array(m);
  const b = new CsrBuilder();
  const indptr = allocArray("int32", n + 1) as Int32Array;
  const totals = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const base = types[i]! * m;
    const sf = sizeFactors[i]!;
    for (let g = 0; g < m; g++) mu[g] = sf * model.mean[base + g]!;
    adjust?.(i, mu);
    let total = 0;
    for (let g = 0; g < m; g++) {
      const mg = mu[g]!;
      if (mg <= 0) continue;
      const k =
        mg > NB_INVERSION_MAX_MEAN
          ? rng.negativeBinomial(mg, model.dispersion)
          : nbInverse(rng.next(), mg, r, nbZero(mg, r));
      if (k > 0) {
        b.push(g, k);
        total += k;
      }
    }
    totals[i] = total;
    indptr[i + 1] = b.nnz;
  }
  const data = allocArray("float32", b.nnz) as Float32Array;
  data.set(b.data.subarray(0, b.nnz));
  const indices = allocArray("int32", b.nnz) as Int32Array;
  indices.set(b.indices.subarray(0, b.nnz));
  return { matrix: { kind: "csr", dtype: "float32", shape: [n, m], data, indices, indptr }, totals };
}

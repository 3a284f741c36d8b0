/**
 * `sc.pp.combat` (scanpy's `preprocessing/_combat.py`): ComBat batch correction (Johnson et al. 2007),
 * an empirical-Bayes location/scale adjustment per batch with optional covariates.
 */
import { allocArray, dense } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { nRows } from "../../../sdk/data/dataframe.js";
import { loadMatrix, matrixInfo } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import {
  type DesignMatrix,
  type FloatArray,
  leastSquares,
  type RowMatrix,
  rowMatrix,
} from "../../../sdk/math/regression.js";
import { activeTable } from "../helpers.js";
import { checkDenseSize, isCategoricalObs, numericObs, obsGroups, outputDtype } from "./helpers.js";

/** Parameters of `combat`. */
export interface CombatParams {
  /**
   * Key of a categorical obs annotation with the batches to remove.
   * @default "batch"
   */
  key?: string;
  /**
   * Additional covariates besides the batch (adjustment variables or biological condition): numeric
   * obs columns enter as they are, categorical ones as indicators of every level but the first.
   */
  covariates?: string[] | null;
  /**
   * Replace X with the corrected data. When false the corrected matrix is written to
   * `layers["combat"]` instead (an operation cannot return an array) and X is kept.
   * @default true
   */
  inplace?: boolean;
  /**
   * Largest dense result allowed, in GiB (ComBat's output is dense).
   * @default 8
   * @exclusiveMinimum 0
   */
  max_dense_gib?: number;
}

/** What `combatKernel` needs: the rows, the batch of each row, and the covariate columns. */
export interface CombatInput {
  readonly y: RowMatrix;
  readonly batch: Int32Array;
  readonly nBatch: number;
  /** Covariate columns (n each), appended to the batch indicators in the design. */
  readonly covariates: readonly Float64Array[];
}

/** The empirical Bayes estimates, for inspection and tests. */
export interface CombatFit {
  /** γ* (nBatch × m), the posterior additive batch effects. */
  readonly gammaStar: Float64Array;
  /** δ* (nBatch × m), the posterior multiplicative batch effects. */
  readonly deltaStar: Float64Array;
  /** Pooled variance per gene. */
  readonly varPooled: Float64Array;
  /** Iterations each batch's solver took. */
  readonly iterations: Int32Array;
}

/**
 * ComBat (Johnson, Li & Rabinovic 2007) as scanpy's `_combat.py` computes it: fit the design by least
 * squares, standardise each gene by the pooled variance, estimate per batch the additive (γ̂, mean) and
 * multiplicative (δ̂, variance with ddof 1) effects, set their priors empirically across genes (γ̄ and
 * τ² with ddof 0; the inverse-gamma a, b from δ̂'s mean and ddof-1 variance), iterate the posterior
 * means to a relative change of 1e-4, and adjust. Writes the corrected values into `out` (n × m).
 */
export function combatKernel(
  input: CombatInput,
  out: FloatArray,
  signal?: AbortSignal,
  progress?: (f: number) => void,
): CombatFit {
  const { y, batch, nBatch, covariates } = input;
  const n = y.rows;
  const m = y.cols;
  const nb = nBatch;
  const p = nb + covariates.length;
  const design = new Float64Array(n * p);
  const nPer = new Float64Array(nb);
  for (let i = 0; i < n; i++) {
    design[i * p + batch[i]!] = 1;
    nPer[batch[i]!]!++;
    for (let k = 0; k < covariates.length; k++) design[i * p + nb + k] = covariates[k]![i]!;
  }
  const d: DesignMatrix = { data: design, rows: n, cols: p };
  const { coef: bHat, singular } = leastSquares(d, y, signal);
  if (singular)
    throw new Error("combat: the design (batches and covariates) is singular; drop confounded covariates");
  progress?.(0.2);
  const grand = new Float64Array(m);
  for (let b = 0; b < nb; b++) {
    const w = nPer[b]! / n;
    for (let j = 0; j < m; j++) grand[j]! += w * bHat[b * m + j]!;
  }
  const row = new Float64Array(m);
  const fitRow = new Float64Array(m);
  const standRow = new Float64Array(m);
  const loadRow = (i: number) => {
    if (y.kind === "csr") {
      row.fill(0);
      for (let t = y.indptr[i]!; t < y.indptr[i + 1]!; t++) row[y.indices[t]!] = y.data[t]!;
    } else {
      for (let j = 0; j < m; j++) row[j] = y.data[i * m + j]!;
    }
  };
  /** The covariate part of the stand mean of row i, added to the grand mean. */
  const standMean = (i: number) => {
    standRow.set(grand);
    for (let k = nb; k < p; k++) {
      const v = design[i * p + k]!;
      if (v === 0) continue;
      for (let j = 0; j < m; j++) standRow[j]! += v * bHat[k * m + j]!;
    }
  };
  // Pooled variance: mean over cells of the squared residuals of the full design.
  const varPooled = new Float64Array(m);
  for (let i = 0; i < n; i++) {
    if (signal && (i & 1023) === 0) signal.throwIfAborted();
    loadRow(i);
    const b = batch[i]!;
    for (let j = 0; j < m; j++) fitRow[j] = bHat[b * m + j]!;
    for (let k = nb; k < p; k++) {
      const v = design[i * p + k]!;
      if (v === 0) continue;
      for (let j = 0; j < m; j++) fitRow[j]! += v * bHat[k * m + j]!;
    }
    for (let j = 0; j < m; j++) {
      const r = row[j]! - fitRow[j]!;
      varPooled[j]! += r * r;
    }
  }
  const sd = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    varPooled[j]! /= n;
    sd[j] = Math.sqrt(varPooled[j]!);
  }
  progress?.(0.4);
  // Per batch sums of the standardised data s and s².
  const s1 = new Float64Array(nb * m);
  const s2 = new Float64Array(nb * m);
  for (let i = 0; i < n; i++) {
    if (signal && (i & 1023) === 0) signal.throwIfAborted();
    loadRow(i);
    standMean(i);
    const o = batch[i]! * m;
    for (let j = 0; j < m; j++) {
      const s = varPooled[j] === 0 ? 0 : (row[j]! - standRow[j]!) / sd[j]!;
      s1[o + j]! += s;
      s2[o + j]! += s * s;
    }
  }
  progress?.(0.6);
  const gammaStar = new Float64Array(nb * m);
  const deltaStar = new Float64Array(nb * m);
  const iterations = new Int32Array(nb);
  for (let b = 0; b < nb; b++) {
    const nbSize = nPer[b]!;
    const o = b * m;
    const gHat = new Float64Array(m);
    const dHat = new Float64Array(m);
    for (let j = 0; j < m; j++) {
      gHat[j] = s1[o + j]! / nbSize;
      dHat[j] = (s2[o + j]! - (s1[o + j]! * s1[o + j]!) / nbSize) / (nbSize - 1);
    }
    // Priors: γ ~ N(γ̄, τ²) (numpy var, ddof 0); δ ~ InvGamma(a, b) from δ̂'s mean and pandas var (ddof 1).
    let gBar = 0;
    for (let j = 0; j < m; j++) gBar += gHat[j]!;
    gBar /= m;
    let t2 = 0;
    for (let j = 0; j < m; j++) t2 += (gHat[j]! - gBar) ** 2;
    t2 /= m;
    let dMean = 0;
    for (let j = 0; j < m; j++) dMean += dHat[j]!;
    dMean /= m;
    let dVar = 0;
    for (let j = 0; j < m; j++) dVar += (dHat[j]! - dMean) ** 2;
    dVar /= m - 1;
    const aPrior = (2 * dVar + dMean * dMean) / dVar;
    const bPrior = (dMean * dVar + dMean ** 3) / dVar;
    // Iterate the conditional posterior means (scanpy's `_it_sol`); Σ(s − γ)² = S2 − 2γS1 + nγ².
    let gOld = Float64Array.from(gHat);
    let dOld = Float64Array.from(dHat);
    let gNew = gOld;
    let dNew = dOld;
    let change = 1;
    let count = 0;
    while (change > 1e-4) {
      if (count >= 100000) throw new Error(`combat: the batch ${b} estimates did not converge`);
      gNew = new Float64Array(m);
      dNew = new Float64Array(m);
      change = -Infinity;
      for (let j = 0; j < m; j++) {
        const g = (t2 * nbSize * gHat[j]! + dOld[j]! * gBar) / (t2 * nbSize + dOld[j]!);
        const sum2 = s2[o + j]! - 2 * g * s1[o + j]! + nbSize * g * g;
        const dd = (0.5 * sum2 + bPrior) / (nbSize / 2 + aPrior - 1);
        gNew[j] = g;
        dNew[j] = dd;
        // numpy's max propagates NaN, and `NaN > conv` ends the loop: keep that.
        const rg = Math.abs(g - gOld[j]!) / gOld[j]!;
        const rd = Math.abs(dd - dOld[j]!) / dOld[j]!;
        if (Number.isNaN(rg) || Number.isNaN(rd)) change = Number.NaN;
        else if (!Number.isNaN(change)) change = Math.max(change, rg, rd);
      }
      gOld = gNew;
      dOld = dNew;
      count++;
    }
    gammaStar.set(gNew, o);
    deltaStar.set(dNew, o);
    iterations[b] = count;
  }
  progress?.(0.7);
  const dsq = deltaStar.map(Math.sqrt);
  for (let i = 0; i < n; i++) {
    if (signal && (i & 1023) === 0) signal.throwIfAborted();
    loadRow(i);
    standMean(i);
    const o = batch[i]! * m;
    for (let j = 0; j < m; j++) {
      const s = varPooled[j] === 0 ? 0 : (row[j]! - standRow[j]!) / sd[j]!;
      row[j] = ((s - gammaStar[o + j]!) / dsq[o + j]!) * sd[j]! + standRow[j]!;
    }
    out.set(row, i * m);
  }
  return { gammaStar, deltaStar, varPooled, iterations };
}

/**
 * ComBat batch-effect correction: fits linear models and borrows strength across genes through an
 * empirical Bayes framework (Johnson et al. 2007; the `combat.py` port scanpy uses).
 *
 * X is densified (scanpy does the same), corrected and replaced by a dense float matrix (float32, or
 * float64 for float64 input; scanpy returns float64). Batches with fewer than two cells are refused.
 * Categorical covariates enter as indicators of all levels but the first, which keeps the design full
 * rank next to the batch indicators (scanpy's patsy formula gives the first categorical covariate all
 * of its levels, a singular design; scanpy#1606).
 */
export async function combat(sd: SpatialData, params: CombatParams, ctx: OpContext): Promise<Change> {
  const op = "combat";
  const t = activeTable(sd, ctx, op);
  const key = params.key ?? "batch";
  const covs = params.covariates ?? [];
  if (!t.obs.columns[key]) throw new Error(`${op}: could not find the key "${key}" in obs`);
  const missing = covs.filter((c) => !t.obs.columns[c]);
  if (missing.length) throw new Error(`${op}: could not find the covariate(s) ${missing.join(", ")} in obs`);
  if (covs.includes(key)) throw new Error(`${op}: batch key and covariates cannot overlap`);
  if (new Set(covs).size !== covs.length) throw new Error(`${op}: covariates must be unique`);
  const n = nRows(t.obs);
  const groups = obsGroups(t, key, op, "the batch");
  const sizes = new Int32Array(groups.labels.length);
  for (const c of groups.codes) sizes[c]!++;
  const small = groups.labels.filter((_, b) => sizes[b]! < 2);
  if (small.length) {
    throw new Error(
      `${op}: batches ${small.join(", ")} have fewer than 2 cells; ComBat needs at least 2 cells per batch ` +
        "to estimate the within-batch variance. Filter these batches first.",
    );
  }
  const covariates: Float64Array[] = [];
  for (const c of covs) {
    const col = t.obs.columns[c]!;
    if (isCategoricalObs(col)) {
      const g = obsGroups(t, c, op, "a covariate");
      for (let level = 1; level < g.labels.length; level++) {
        covariates.push(Float64Array.from(g.codes, (code) => (code === level ? 1 : 0)));
      }
    } else {
      const v = numericObs(t, c, op);
      for (let i = 0; i < n; i++)
        if (!Number.isFinite(v[i]!))
          throw new Error(`${op}: covariate "${c}" has a non-finite value at row ${i}`);
      covariates.push(v);
    }
  }
  if (!t.X) throw new Error(`${op}: the table has no X`);
  const info = matrixInfo(t.X);
  const m = info.shape[1]!;
  const dtype = outputDtype(info.dtype);
  checkDenseSize(op, n, m, dtype === "float64" ? 8 : 4, params.max_dense_gib);
  const x = await loadMatrix(t.X);
  ctx.log(`${op}: found ${groups.labels.length} batches, ${covariates.length} covariate columns`);
  const out = allocArray(dtype, n * m) as FloatArray;
  const fit = combatKernel(
    { y: rowMatrix(x), batch: groups.codes, nBatch: groups.labels.length, covariates },
    out,
    ctx.signal,
    (f) => ctx.progress(f),
  );
  ctx.log(`${op}: posterior estimates converged in ${Array.from(fit.iterations).join(", ")} iterations`);
  ctx.progress(1);
  const result = dense(out, [n, m], dtype);
  const tc = (params.inplace ?? true) ? { X: result } : { layers: { combat: result } };
  return { tables: { [ctx.table]: tc } };
}

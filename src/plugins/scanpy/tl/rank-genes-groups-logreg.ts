/**
 * The `logreg` method of `rank_genes_groups`: a multinomial (or binary) L2-regularised logistic
 * regression of the groups on the genes, as scikit-learn's lbfgs fits it; the scores are the coefficients.
 */
import type { Matrix } from "../../../sdk/data/arrays.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { switchCompression } from "../../../sdk/math/sparse.js";
import type { Grouping } from "../get/expression.js";
import type { Design, TestResult } from "./rank-genes-groups.js";

/**
 * Rows of a matrix as sparse (column, value) runs: CSR as is, CSC transposed, dense filtered.
 */
function rowView(x: Matrix): { indptr: Float64Array; indices: Int32Array; data: Float64Array } {
  if (x.kind !== "dense") {
    const r = x.kind === "csr" ? x : switchCompression(x);
    // Monomorphic float64 copies keep the optimiser's inner loops on one array type.
    return {
      indptr: Float64Array.from(r.indptr as ArrayLike<number>),
      indices: Int32Array.from(r.indices as ArrayLike<number>),
      data: Float64Array.from(r.data as unknown as ArrayLike<number>),
    };
  }
  const [rows, width] = [x.shape[0]!, x.shape[1]!];
  const src = x.data as unknown as ArrayLike<number>;
  const indptr = new Float64Array(rows + 1);
  const idx: number[] = [];
  const val: number[] = [];
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < width; j++) {
      const v = Number(src[i * width + j]);
      if (v !== 0) {
        idx.push(j);
        val.push(v);
      }
    }
    indptr[i + 1] = idx.length;
  }
  return { indptr, indices: Int32Array.from(idx), data: Float64Array.from(val) };
}

/**
 * L2-penalised logistic regression as scikit-learn's `LogisticRegression()` defaults fit it (C = 1,
 * intercept unpenalised, multinomial softmax over all classes — or one logit for two classes —
 * minimising mean log-loss + ‖W‖²/(2·C·n)), by L-BFGS (10 pairs, Armijo backtracking) stopped when
 * every gradient entry is below `tol` or after `maxIter` iterations, as scikit-learn's lbfgs stops.
 * `y` holds a class per row (-1 = row left out). Returns the coefficients, gene-major (`w[j·K + k]`).
 * @internal
 */
export function fitLogisticRegression(
  x: Matrix,
  y: Int32Array,
  nClasses: number,
  genes: Int32Array,
  opts: { C?: number; maxIter?: number; tol?: number; signal?: AbortSignal } = {},
): {
  coef: Float64Array;
  intercept: Float64Array;
  iterations: number;
  evaluations: number;
  converged: boolean;
} {
  const C = opts.C ?? 1;
  const maxIter = opts.maxIter ?? 100;
  const tol = opts.tol ?? 1e-4;
  const rows = rowView(x);
  const width = x.shape[1]!;
  const slot = new Int32Array(width).fill(-1);
  genes.forEach((j, s) => {
    slot[j] = s;
  });
  const p = genes.length;
  const K = nClasses === 2 ? 1 : nClasses; // binary: one logit for the second class
  const usedList: number[] = [];
  for (let i = 0; i < y.length; i++) if (y[i]! >= 0) usedList.push(i);
  const used = Int32Array.from(usedList);
  const n = used.length;
  const { indptr, indices, data } = rows;
  const dim = p * K + K;
  const lambda = 1 / (C * n);
  const z = new Float64Array(K);
  const pr = new Float64Array(K);

  /** Objective and gradient at θ (W gene-major, then the intercepts). */
  let evaluations = 0;
  const evaluate = (theta: Float64Array, grad: Float64Array): number => {
    evaluations++;
    grad.fill(0);
    let loss = 0;
    const b = p * K;
    for (let u = 0; u < n; u++) {
      const i = used[u]!;
      for (let k = 0; k < K; k++) z[k] = theta[b + k]!;
      const start = indptr[i]!;
      const end = indptr[i + 1]!;
      for (let q = start; q < end; q++) {
        const s = slot[indices[q]!]!;
        if (s < 0) continue;
        const v = data[q]!;
        const o = s * K;
        for (let k = 0; k < K; k++) z[k]! += v * theta[o + k]!;
      }
      const yi = y[i]!;
      if (K === 1) {
        const t = z[0]!;
        // log(1 + e^t) - y·t, stably
        loss += (t > 0 ? t + Math.log1p(Math.exp(-t)) : Math.log1p(Math.exp(t))) - (yi === 1 ? t : 0);
        pr[0] = 1 / (1 + Math.exp(-t)) - (yi === 1 ? 1 : 0);
      } else {
        let mx = Number.NEGATIVE_INFINITY;
        for (let k = 0; k < K; k++) if (z[k]! > mx) mx = z[k]!;
        let se = 0;
        for (let k = 0; k < K; k++) {
          pr[k] = Math.exp(z[k]! - mx);
          se += pr[k]!;
        }
        loss += mx + Math.log(se) - z[yi]!;
        for (let k = 0; k < K; k++) pr[k] = pr[k]! / se - (k === yi ? 1 : 0);
      }
      for (let k = 0; k < K; k++) grad[b + k]! += pr[k];
      for (let q = start; q < end; q++) {
        const s = slot[indices[q]!]!;
        if (s < 0) continue;
        const v = data[q]!;
        const o = s * K;
        for (let k = 0; k < K; k++) grad[o + k]! += pr[k]! * v;
      }
    }
    let reg = 0;
    for (let q = 0; q < b; q++) {
      reg += theta[q]! * theta[q]!;
      grad[q] = grad[q]! / n + lambda * theta[q]!;
    }
    for (let k = 0; k < K; k++) grad[b + k] = grad[b + k]! / n;
    return loss / n + 0.5 * lambda * reg;
  };

  const m = 10;
  const S: Float64Array[] = [];
  const Yv: Float64Array[] = [];
  const rho: number[] = [];
  const theta = new Float64Array(dim);
  const g = new Float64Array(dim);
  let f = evaluate(theta, g);
  const dir = new Float64Array(dim);
  const next = new Float64Array(dim);
  const gNext = new Float64Array(dim);
  const alpha = new Float64Array(m);
  const maxAbs = (a: Float64Array) => a.reduce((mx, v) => Math.max(mx, Math.abs(v)), 0);
  let iterations = 0;
  let converged = maxAbs(g) <= tol;
  while (!converged && iterations < maxIter) {
    opts.signal?.throwIfAborted();
    // Two-loop recursion: dir = -H·g.
    dir.set(g);
    for (let h = S.length - 1; h >= 0; h--) {
      let a = 0;
      for (let q = 0; q < dim; q++) a += S[h]![q]! * dir[q]!;
      a *= rho[h]!;
      alpha[h] = a;
      for (let q = 0; q < dim; q++) dir[q]! -= a * Yv[h]![q]!;
    }
    if (S.length > 0) {
      const last = S.length - 1;
      let sy = 0;
      let yy = 0;
      for (let q = 0; q < dim; q++) {
        sy += S[last]![q]! * Yv[last]![q]!;
        yy += Yv[last]![q]! * Yv[last]![q]!;
      }
      const gamma = sy / yy;
      for (let q = 0; q < dim; q++) dir[q]! *= gamma;
    } else {
      const norm = Math.sqrt(g.reduce((s2, v) => s2 + v * v, 0));
      for (let q = 0; q < dim; q++) dir[q]! /= Math.max(norm, 1);
    }
    for (let h = 0; h < S.length; h++) {
      let b = 0;
      for (let q = 0; q < dim; q++) b += Yv[h]![q]! * dir[q]!;
      b *= rho[h]!;
      for (let q = 0; q < dim; q++) dir[q]! += S[h]![q]! * (alpha[h]! - b);
    }
    for (let q = 0; q < dim; q++) dir[q] = -dir[q]!;
    let slope = 0;
    for (let q = 0; q < dim; q++) slope += dir[q]! * g[q]!;
    if (!(slope < 0)) {
      // Not a descent direction (numerical trouble): restart from steepest descent.
      S.length = 0;
      Yv.length = 0;
      rho.length = 0;
      for (let q = 0; q < dim; q++) dir[q] = -g[q]!;
      slope = -g.reduce((s2, v) => s2 + v * v, 0);
    }
    let step = 1;
    let fNext = f;
    for (let ls = 0; ls < 50; ls++) {
      for (let q = 0; q < dim; q++) next[q] = theta[q]! + step * dir[q]!;
      fNext = evaluate(next, gNext);
      if (fNext <= f + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    const sNew = new Float64Array(dim);
    const yNew = new Float64Array(dim);
    let sy = 0;
    for (let q = 0; q < dim; q++) {
      sNew[q] = next[q]! - theta[q]!;
      yNew[q] = gNext[q]! - g[q]!;
      sy += sNew[q]! * yNew[q]!;
    }
    const progress = Math.abs(f - fNext) / Math.max(Math.abs(f), Math.abs(fNext), 1);
    theta.set(next);
    g.set(gNext);
    f = fNext;
    iterations++;
    if (sy > 1e-12) {
      S.push(sNew);
      Yv.push(yNew);
      rho.push(1 / sy);
      if (S.length > m) {
        S.shift();
        Yv.shift();
        rho.shift();
      }
    }
    converged = maxAbs(g) <= tol;
    if (progress <= 64 * Number.EPSILON) break; // scipy's ftol = 64·eps: no further decrease possible
  }
  return {
    coef: theta.subarray(0, p * K),
    intercept: theta.subarray(p * K),
    iterations,
    evaluations,
    converged,
  };
}

/**
 * scanpy's `logreg`: one L2 logistic regression of the cells' group on the genes (cells of the
 * selected groups only); each group's scores are its coefficients. With two groups scikit-learn
 * fits one logit (for the group of the later category), reported under the first group only.
 */
export function logregTests(
  x: Matrix,
  genes: Int32Array,
  d: Design,
  g: Grouping,
  ctx: OpContext,
): TestResult[] {
  const k = d.order.length;
  if (k === 1) throw new Error("rank_genes_groups: cannot perform logistic regression on a single cluster");
  const mt = genes.length;
  const catOf = d.order.map((name) => g.categories.indexOf(name));
  let y: Int32Array;
  if (k === 2) {
    const positive = catOf[0]! > catOf[1]! ? 0 : 1; // scikit-learn's classes_ are sorted: the later code is positive
    y = Int32Array.from(d.cellSel, (s) => (s >= k ? -1 : s === positive ? 1 : 0));
  } else y = Int32Array.from(d.cellSel, (s) => (s >= k ? -1 : s));
  const fit = fitLogisticRegression(x, y, k, genes, { signal: ctx.signal });
  ctx.log(
    `rank_genes_groups: logreg ${fit.converged ? "converged" : "stopped"} after ${fit.iterations} L-BFGS iterations ` +
      `(${fit.evaluations} evaluations of the loss)`,
  );
  const K = k === 2 ? 1 : k;
  const groups = k === 2 ? [0] : d.order.map((_, i) => i);
  return groups.map((grp) => ({
    group: grp,
    scores: Float64Array.from({ length: mt }, (_, j) => fit.coef[j * K + (k === 2 ? 0 : grp)]!),
    pvals: null,
  }));
}

/**
 * `sc.pp.calculate_qc_metrics` (scanpy's `preprocessing/_qc.py`): per-cell and per-gene quality-control
 * metrics, and the counting kernel behind `pct_counts_in_top_<n>_genes` (the share of a cell's counts in
 * its n most expressed genes, found without sorting every row).
 */
import type { SparseMatrix } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import type { Column } from "../../../sdk/data/dataframe.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { csrColumnNnz, csrColumnSums, csrRowNnz, csrRowSums, numberData } from "../../../sdk/math/csr.js";
import { selectKth } from "../../../sdk/math/select.js";
import { activeTable, asCsr, boolMask, f32Column, f64Column, getMatrix, i32Column } from "../helpers.js";

/** A gene count (`percent_top` entry). @asType integer @minimum 1 */
export type TopCount = number;

// ---------------------------------------------------------------------------------------------
// calculate_qc_metrics

/** Params of `calculate_qc_metrics`. */
export interface CalculateQcMetricsParams {
  /**
   * Name of the kind of values in X (the `counts` of `total_counts`).
   * @default "counts"
   */
  expr_type?: string;
  /**
   * Name of the kind of variables (the `genes` of `n_genes_by_counts`).
   * @default "genes"
   */
  var_type?: string;
  /**
   * Boolean var columns marking gene sets (e.g. `mt`): each adds `total_counts_<name>`,
   * `log1p_total_counts_<name>` and `pct_counts_<name>` to obs.
   * @default []
   */
  qc_vars?: string[];
  /**
   * Ranks at which the cumulative share of counts in each cell's top genes is reported
   * (`pct_counts_in_top_<n>_genes`); null or empty for none.
   * @default [50, 100, 200, 500]
   */
  percent_top?: TopCount[] | null;
  /** Layer to use instead of X. */
  layer?: string;
  /**
   * Also write the log1p-transformed metrics.
   * @default true
   */
  log1p?: boolean;
}

/**
 * Calculate quality-control metrics per cell and per gene (scanpy's `calculate_qc_metrics`, scater's
 * `calculateQCMetrics`). Writes obs `n_genes_by_counts`, `total_counts`, `pct_counts_in_top_<n>_genes`,
 * `total_counts_<qc_var>`, `pct_counts_<qc_var>` (and their `log1p_` forms) and var
 * `n_cells_by_counts`, `mean_counts`, `pct_dropout_by_counts`, `total_counts` (and `log1p_` forms).
 */
export async function calculate_qc_metrics(
  sd: SpatialData,
  params: CalculateQcMetricsParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "calculate_qc_metrics";
  const t = activeTable(sd, ctx, op);
  const expr = params.expr_type ?? "counts";
  const vt = params.var_type ?? "genes";
  const log1p = params.log1p ?? true;
  const qcVars = params.qc_vars ?? [];
  const masks = qcVars.map((q) => boolMask(t.var, q, "var", op));
  const percentTop = [
    ...(params.percent_top === undefined ? [50, 100, 200, 500] : (params.percent_top ?? [])),
  ].sort((a, b) => a - b);
  const x = asCsr(await getMatrix(t, params.layer, op));
  const [n, m] = x.shape;
  if (percentTop.length && (percentTop[percentTop.length - 1]! > m || percentTop[0]! < 1))
    throw new Error(
      `${op}: percent_top positions outside the range of features (1..${m}): ${percentTop.join(", ")}`,
    );
  ctx.progress(0.05);
  ctx.signal.throwIfAborted();

  const obs: Record<string, Column> = {};
  const nGenes = csrRowNnz(x);
  obs[`n_${vt}_by_${expr}`] = i32Column(nGenes);
  if (log1p) obs[`log1p_n_${vt}_by_${expr}`] = f64Column(Float64Array.from(nGenes, (v) => Math.log1p(v)));
  const total = f32Column(csrRowSums(x));
  obs[`total_${expr}`] = total;
  if (log1p) obs[`log1p_total_${expr}`] = f32Column(Float32Array.from(total.data, (v) => Math.log1p(v)));
  ctx.progress(0.2);
  if (percentTop.length) {
    const props = topSegmentProportions(x, percentTop, ctx.signal);
    percentTop.forEach((nTop, i) => {
      obs[`pct_${expr}_in_top_${nTop}_${vt}`] = f64Column(props[i]!.map((p) => p * 100));
    });
  }
  ctx.progress(0.6);
  qcVars.forEach((q, i) => {
    ctx.signal.throwIfAborted();
    const sub = f32Column(csrRowSums(x, masks[i]!));
    obs[`total_${expr}_${q}`] = sub;
    if (log1p) obs[`log1p_total_${expr}_${q}`] = f32Column(Float32Array.from(sub.data, (v) => Math.log1p(v)));
    // float32 / float32 * 100, rounded at each step as numpy does.
    const pct = new Float32Array(n);
    for (let c = 0; c < n; c++) pct[c] = Math.fround(sub.data[c]! / total.data[c]!) * 100;
    obs[`pct_${expr}_${q}`] = f32Column(pct);
  });
  ctx.progress(0.75);
  ctx.signal.throwIfAborted();

  const vr: Record<string, Column> = {};
  const nCells = csrColumnNnz(x);
  const sums = csrColumnSums(x);
  vr[`n_cells_by_${expr}`] = i32Column(nCells);
  const mean = f32Column(sums.map((s) => s / n));
  vr[`mean_${expr}`] = mean;
  if (log1p) vr[`log1p_mean_${expr}`] = f32Column(Float32Array.from(mean.data, (v) => Math.log1p(v)));
  vr[`pct_dropout_by_${expr}`] = f64Column(Float64Array.from(nCells, (c) => (1 - c / n) * 100));
  const vtotal = f32Column(sums);
  vr[`total_${expr}`] = vtotal;
  if (log1p) vr[`log1p_total_${expr}`] = f32Column(Float32Array.from(vtotal.data, (v) => Math.log1p(v)));
  ctx.progress(1);
  return { tables: { [ctx.table]: { obs, var: vr } } };
}

const COUNT_MAX = 4096;

const histogram = new Int32Array(COUNT_MAX + 1);

/**
 * Sums of the top-n values of a row of small non-negative integers (raw counts), by counting: one
 * pass over the row and one over the value range. Returns false (and leaves `sums` alone) when the
 * row holds other values, for the selection path to handle.
 */
function countTop(
  data: ArrayLike<number>,
  a: number,
  len: number,
  total: number,
  ns: readonly number[],
  sums: Float64Array,
): boolean {
  let max = 0;
  for (let k = 0; k < len; k++) {
    const v = data[a + k]!;
    if (!(v >= 0 && v <= COUNT_MAX) || v !== Math.floor(v)) return false;
    if (v > max) max = v;
  }
  for (let k = 0; k < len; k++) histogram[data[a + k]!]!++;
  // Walk down from the largest value, closing each n as the running count passes it.
  let q = 0;
  let taken = 0;
  let sum = 0;
  for (let v = max; v > 0 && q < ns.length; v--) {
    let c = histogram[v]!;
    while (c > 0 && q < ns.length) {
      const need = ns[q]! - taken;
      if (c >= need) {
        sum += need * v;
        taken += need;
        c -= need;
        sums[q++] = sum;
      } else {
        sum += c * v;
        taken += c;
        c = 0;
      }
    }
  }
  for (; q < ns.length; q++) sums[q] = total;
  for (let v = 0; v <= max; v++) histogram[v] = 0;
  return true;
}

/**
 * For each row of a CSR matrix and each n of `ns` (ascending, ≥ 1), the fraction of the row's total
 * in its n largest values. Returns one Float64Array per n (NaN where a row sums to zero).
 */
export function topSegmentProportions(
  m: SparseMatrix,
  ns: readonly number[],
  signal?: AbortSignal,
): Float64Array[] {
  const rows = m.shape[0];
  const data = numberData(m.data);
  const { indptr } = m;
  const out = ns.map(() => new Float64Array(rows));
  let maxLen = 0;
  for (let i = 0; i < rows; i++) maxLen = Math.max(maxLen, indptr[i + 1]! - indptr[i]!);
  const scratch = new Float64Array(maxLen);
  const sums = new Float64Array(ns.length);
  for (let i = 0; i < rows; i++) {
    if (signal && (i & 0x3fff) === 0) signal.throwIfAborted();
    const a = indptr[i]!;
    const len = indptr[i + 1]! - a;
    let total = 0;
    for (let k = 0; k < len; k++) {
      const v = data[a + k]!;
      scratch[k] = v;
      total += v;
    }
    // Largest n first: after selecting the n largest into the suffix [len − n, len), smaller n select
    // inside it.
    if (countTop(data, a, len, total, ns, sums)) {
      for (let q = 0; q < ns.length; q++) out[q]![i] = sums[q]! / total;
      continue;
    }
    let lo = 0;
    for (let q = ns.length - 1; q >= 0; q--) {
      const n = ns[q]!;
      if (n >= len - lo) {
        let s = 0;
        for (let k = lo; k < len; k++) s += scratch[k]!;
        sums[q] = lo === 0 ? total : s;
        continue;
      }
      const from = lo;
      lo = len - n;
      selectKth(scratch, from, len - 1, lo);
      let s = 0;
      for (let k = lo; k < len; k++) s += scratch[k]!;
      sums[q] = s;
    }
    for (let q = 0; q < ns.length; q++) out[q]![i] = sums[q]! / total;
  }
  return out;
}

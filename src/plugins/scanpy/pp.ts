/**
 * `sc.pp` preprocessing operations: quality-control metrics, cell and gene filters, total-count
 * normalisation, log1p, highly variable genes and scaling. Names, parameters, defaults and output
 * keys follow scanpy 1.12, and so do the numbers (float32 data stays float32 with numpy's rounding
 * where scanpy's results depend on it). Each operation reads the committed table and returns a
 * `Change` with new arrays; the input is never written.
 */
import { allocArray, type DenseArray, type Matrix, type SparseMatrix } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import type { Column } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { nObs, type Table } from "../../sdk/data/table.js";
import { unsDict, unsGet } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import {
  csrColumnMeanVar,
  csrColumnNnz,
  csrColumnSums,
  csrRowNnz,
  csrRowSums,
  floatDtypeFor,
  numberData,
} from "../../sdk/math/csr.js";
import { csrScaleRowsAsync, log1pValues } from "../../sdk/math/csr-threads.js";
import { switchCompression } from "../../sdk/math/sparse.js";
import { batchedDispersionHvg, dispersionHvg, type HvgCutoffs, seuratV3Hvg } from "./pp-hvg.js";
import {
  activeTable,
  asCsr,
  boolColumn,
  boolMask,
  f32Column,
  f64Column,
  getMatrix,
  i32Column,
  subsetObs,
  subsetVar,
} from "./pp-matrix.js";
import { topSegmentProportions } from "./pp-qc.js";

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

// ---------------------------------------------------------------------------------------------
// filter_cells / filter_genes

/** Params of `filter_cells`: exactly one threshold. */
export interface FilterCellsParams {
  /** Minimum total counts for a cell to be kept. */
  min_counts?: number;
  /**
   * Minimum number of expressed genes (values > 0) for a cell to be kept.
   * @asType integer
   */
  min_genes?: number;
  /** Maximum total counts for a cell to be kept. */
  max_counts?: number;
  /**
   * Maximum number of expressed genes for a cell to be kept.
   * @asType integer
   */
  max_genes?: number;
}

function oneThreshold(p: Record<string, number | undefined | null>, names: string[], op: string): string {
  const given = names.filter((k) => p[k] !== undefined && p[k] !== null);
  if (given.length !== 1)
    throw new Error(
      `${op}: give exactly one of ${names.map((n) => `\`${n}\``).join(", ")} per call (got ${given.length})`,
    );
  return given[0]!;
}

/**
 * Filter cell outliers on total counts or number of expressed genes, keeping cells at or above a
 * minimum (or at or below a maximum). Writes obs `n_genes` (or `n_counts`) and drops the other cells
 * from every obs-aligned slot (X, layers, obs, obsm, obsp, raw).
 */
export async function filter_cells(
  sd: SpatialData,
  params: FilterCellsParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "filter_cells";
  const which = oneThreshold(
    params as Record<string, number | undefined>,
    ["min_counts", "min_genes", "max_counts", "max_genes"],
    op,
  );
  const t = activeTable(sd, ctx, op);
  const x = asCsr(await getMatrix(t, null, op));
  ctx.progress(0.1);
  const byGenes = which.endsWith("genes");
  const number = byGenes ? csrRowNnz(x, true) : csrRowSums(x);
  const limit = (params as Record<string, number>)[which]!;
  const n = x.shape[0];
  const keep = new Uint8Array(n);
  for (let i = 0; i < n; i++)
    keep[i] = (which.startsWith("min") ? number[i]! >= limit : number[i]! <= limit) ? 1 : 0;
  let dropped = 0;
  for (let i = 0; i < n; i++) dropped += 1 - keep[i]!;
  if (dropped > 0)
    ctx.log(
      `filtered out ${dropped} cells that have ${which.startsWith("min") ? "less" : "more"} than ${limit} ${byGenes ? "genes expressed" : "counts"}`,
    );
  ctx.signal.throwIfAborted();
  ctx.progress(0.3);
  const extra: Record<string, Column> = byGenes
    ? { n_genes: i32Column(number) }
    : {
        n_counts: {
          kind: "dense",
          dtype: x.dtype === "float64" ? "float64" : "float32",
          shape: [n],
          data: floatCopy(number, x.dtype),
        },
      };
  const table = await subsetObs(t, keep, extra);
  ctx.progress(1);
  return { replaceTables: { [ctx.table]: table } };
}

function floatCopy(v: Float64Array | Int32Array, dtype: string): Float32Array | Float64Array {
  const out = allocArray(dtype === "float64" ? "float64" : "float32", v.length) as
    | Float32Array
    | Float64Array;
  out.set(v);
  return out;
}

/** Params of `filter_genes`: exactly one threshold. */
export interface FilterGenesParams {
  /** Minimum total counts for a gene to be kept. */
  min_counts?: number;
  /**
   * Minimum number of cells expressing the gene (values > 0) for it to be kept.
   * @asType integer
   */
  min_cells?: number;
  /** Maximum total counts for a gene to be kept. */
  max_counts?: number;
  /**
   * Maximum number of cells expressing the gene for it to be kept.
   * @asType integer
   */
  max_cells?: number;
}

/**
 * Filter genes on total counts or number of cells expressing them. Writes var `n_cells` (or
 * `n_counts`) and drops the other genes from every var-aligned slot (X and layers columns, var,
 * varm, varp).
 */
export async function filter_genes(
  sd: SpatialData,
  params: FilterGenesParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "filter_genes";
  const which = oneThreshold(
    params as Record<string, number | undefined>,
    ["min_counts", "min_cells", "max_counts", "max_cells"],
    op,
  );
  const t = activeTable(sd, ctx, op);
  const x = asCsr(await getMatrix(t, null, op));
  ctx.progress(0.1);
  const byCells = which.endsWith("cells");
  const number = byCells ? csrColumnNnz(x, true) : csrColumnSums(x);
  const limit = (params as Record<string, number>)[which]!;
  const m = x.shape[1];
  const keep = new Uint8Array(m);
  for (let j = 0; j < m; j++)
    keep[j] = (which.startsWith("min") ? number[j]! >= limit : number[j]! <= limit) ? 1 : 0;
  let dropped = 0;
  for (let j = 0; j < m; j++) dropped += 1 - keep[j]!;
  if (dropped > 0)
    ctx.log(
      `filtered out ${dropped} genes that are detected in ${which.startsWith("min") ? "less" : "more"} than ${limit} ${byCells ? "cells" : "counts"}`,
    );
  ctx.signal.throwIfAborted();
  ctx.progress(0.3);
  const extra: Record<string, Column> = byCells
    ? { n_cells: i32Column(number) }
    : {
        n_counts: {
          kind: "dense",
          dtype: x.dtype === "float64" ? "float64" : "float32",
          shape: [m],
          data: floatCopy(number, x.dtype),
        },
      };
  const table = await subsetVar(t, keep, extra);
  ctx.progress(1);
  return { replaceTables: { [ctx.table]: table } };
}

// ---------------------------------------------------------------------------------------------
// normalize_total

/** Params of `normalize_total`. */
export interface NormalizeTotalParams {
  /**
   * Total count of every cell after normalisation; null: the median of the totals of cells with
   * non-zero totals (1e6 gives CPM).
   * @default null
   * @exclusiveMinimum 0
   */
  target_sum?: number | null;
  /**
   * Leave out very highly expressed genes (more than `max_fraction` of a cell's total in at least
   * one cell) when computing each cell's size factor.
   * @default false
   */
  exclude_highly_expressed?: boolean;
  /**
   * The fraction of a cell's total above which a gene counts as highly expressed.
   * @default 0.05
   * @minimum 0
   * @maximum 1
   */
  max_fraction?: number;
  /** obs column to store each cell's size factor (its total divided by `target_sum`) in. */
  key_added?: string;
  /** Layer to normalise instead of X. */
  layer?: string;
}

/**
 * Normalise counts per cell so that every cell has the same total count (`target_sum`, by default
 * the median total), optionally ignoring highly expressed genes for the size factors. Replaces X (or
 * the layer) with a new matrix; a CSC input comes back as CSR, as in scanpy.
 * @peakMemory x_bytes * 1.2
 */
export async function normalize_total(
  sd: SpatialData,
  params: NormalizeTotalParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "normalize_total";
  const t = activeTable(sd, ctx, op);
  const maxFraction = params.max_fraction ?? 0.05;
  if (maxFraction < 0 || maxFraction > 1)
    throw new Error(`${op}: choose max_fraction between 0 and 1 (got ${maxFraction})`);
  const input = await getMatrix(t, params.layer, op);
  const x: Matrix = input.kind === "csc" ? switchCompression(input) : input;
  const csr = x.kind === "dense" ? asCsr(x) : x;
  const n = csr.shape[0];
  const m = csr.shape[1];
  ctx.progress(0.1);
  // Totals in float64, stored as the data's float type (scanpy keeps them in X's dtype).
  const dtype = floatDtypeFor(x.dtype);
  const round = dtype === "float32" ? Math.fround : (v: number) => v;
  let counts = csrRowSums(csr);
  let excluded = 0;
  if (params.exclude_highly_expressed) {
    const data = numberData(csr.data);
    const { indptr, indices } = csr;
    const hi = new Uint8Array(m);
    for (let i = 0; i < n; i++) {
      const limit = maxFraction * round(counts[i]!);
      const end = indptr[i + 1]!;
      for (let k = indptr[i]!; k < end; k++) if (data[k]! > limit) hi[indices[k]!] = 1;
    }
    const keepGenes = new Uint8Array(m);
    for (let j = 0; j < m; j++) {
      keepGenes[j] = hi[j] ? 0 : 1;
      excluded += hi[j]!;
    }
    counts = csrRowSums(csr, keepGenes);
    const names = t.var.index.values.filter((_, j) => hi[j]);
    ctx.log(
      `The following highly-expressed genes are not considered during normalization factor computation: ${names.slice(0, 50).join(", ")}${names.length > 50 ? ` … (${names.length})` : ""}`,
    );
  }
  for (let i = 0; i < n; i++) counts[i] = round(counts[i]!);
  ctx.signal.throwIfAborted();
  let target: number;
  if (params.target_sum === undefined || params.target_sum === null) {
    // A typed array's own sort (numeric, no comparator calls): ~3× less CPU than Array#sort at 200k cells.
    const positive = counts.filter((c) => c > 0).sort();
    if (!positive.length) throw new Error(`${op}: every cell has a total of zero; cannot take the median`);
    const k = positive.length;
    target = k % 2 ? positive[(k - 1) / 2]! : round((positive[k / 2 - 1]! + positive[k / 2]!) / 2);
  } else target = round(params.target_sum);
  // Size factors (total / target, in the data's float type); zero totals divide by 1.
  const factors = new Float64Array(n);
  let zeroCells = 0;
  for (let i = 0; i < n; i++) {
    const f = round(counts[i]! / target);
    factors[i] = f === 0 ? 1 : f;
    if (!(f > 0)) zeroCells++;
  }
  if (zeroCells) ctx.log(`Some cells have zero counts (${zeroCells})`);
  ctx.progress(0.3);
  let out: Matrix;
  if (x.kind === "dense") {
    const src = numberData(x.data);
    const data = allocArray(dtype, src.length) as Float32Array | Float64Array;
    for (let i = 0; i < n; i++) {
      if ((i & 0x3fff) === 0) ctx.signal.throwIfAborted();
      const f = factors[i]!;
      for (let j = i * m, e = j + m; j < e; j++) data[j] = src[j]! / f;
    }
    out = { kind: "dense", dtype, shape: x.shape, data };
  } else out = await csrScaleRowsAsync(x, factors, { dtype, divide: true }, ctx.threads, ctx.signal);
  ctx.progress(0.9);
  const tc: { X?: Matrix; layers?: Record<string, Matrix>; obs?: Record<string, Column> } = params.layer
    ? { layers: { [params.layer]: out } }
    : { X: out };
  if (params.key_added) {
    const norm = allocArray(dtype, n) as Float32Array | Float64Array;
    for (let i = 0; i < n; i++) norm[i] = round(counts[i]! / target);
    tc.obs = { [params.key_added]: { kind: "dense", dtype, shape: [n], data: norm } };
  }
  if (excluded) ctx.log(`${excluded} genes excluded from the size factors`);
  ctx.progress(1);
  return { tables: { [ctx.table]: tc } };
}

// ---------------------------------------------------------------------------------------------
// log1p

/** Params of `log1p`. */
export interface Log1pParams {
  /**
   * Base of the logarithm; null for the natural logarithm.
   * @default null
   * @exclusiveMinimum 0
   */
  base?: number | null;
  /** Layer to transform instead of X. */
  layer?: string;
}

/**
 * Logarithmise the data matrix: X = log(X + 1), natural unless `base` is given. Replaces X (or the
 * layer) with a new matrix and records `uns/log1p/base`.
 * @peakMemory x_bytes * 1.2
 */
export async function log1p(sd: SpatialData, params: Log1pParams, ctx: OpContext): Promise<Change> {
  const op = "log1p";
  const t = activeTable(sd, ctx, op);
  if (unsGet(t.uns, "log1p") !== undefined) ctx.log("adata.X seems to be already log-transformed.");
  const x = await getMatrix(t, params.layer, op);
  const base = params.base ?? null;
  if (base !== null && !(base > 0 && base !== 1))
    throw new Error(`${op}: base must be positive and not 1 (got ${base})`);
  ctx.progress(0.05);
  // scanpy: float data keeps its type; integer data becomes float64 (sparse and dense alike).
  const dtype = x.dtype === "float32" ? "float32" : "float64";
  const lb = base === null ? 0 : dtype === "float32" ? Math.fround(Math.log(base)) : Math.log(base);
  const src = numberData(x.data);
  let data: Float32Array | Float64Array;
  if (src instanceof Float32Array) {
    // Stored values (sparse) or every value (dense), shared among the job's threads when many.
    data = await log1pValues(src, dtype, lb, ctx.threads, ctx.signal);
  } else {
    // Integer or float64 data: float64 result.
    data = allocArray(dtype, src.length) as Float32Array | Float64Array;
    for (let k = 0; k < src.length; k++) {
      if ((k & 0xfffff) === 0) ctx.signal.throwIfAborted();
      data[k] = lb === 0 ? Math.log1p(src[k]!) : Math.log1p(src[k]!) / lb;
    }
  }
  const out: Matrix =
    x.kind === "dense" ? { kind: "dense", dtype, shape: x.shape, data } : { ...x, dtype, data };
  ctx.progress(1);
  return {
    tables: {
      [ctx.table]: {
        ...(params.layer ? { layers: { [params.layer]: out } } : { X: out }),
        uns: { log1p: unsDict({ base }) },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// highly_variable_genes

/** Params of `highly_variable_genes`. */
export interface HighlyVariableGenesParams {
  /** Layer to use instead of X. */
  layer?: string;
  /**
   * Number of highly variable genes to keep; when set, the mean and dispersion cutoffs are ignored.
   * Required in effect for `seurat_v3` (default there 2000).
   * @asType integer
   * @minimum 1
   */
  n_top_genes?: number;
  /**
   * Minimum normalised dispersion (dispersion flavours, without `n_top_genes`).
   * @default 0.5
   */
  min_disp?: number;
  /** Maximum normalised dispersion (default: no limit). */
  max_disp?: number;
  /**
   * Minimum mean (dispersion flavours, without `n_top_genes`).
   * @default 0.0125
   */
  min_mean?: number;
  /**
   * Maximum mean (dispersion flavours, without `n_top_genes`).
   * @default 3
   */
  max_mean?: number;
  /**
   * Fraction of the genes used in each local LOESS fit of `seurat_v3`.
   * @default 0.3
   * @exclusiveMinimum 0
   */
  span?: number;
  /**
   * Number of bins of mean expression within which dispersions are normalised.
   * @default 20
   * @asType integer
   * @minimum 1
   */
  n_bins?: number;
  /**
   * `seurat` and `cell_ranger` expect log data; `seurat_v3`/`seurat_v3_paper` expect counts.
   * @default "seurat"
   */
  flavor?: "seurat" | "cell_ranger" | "seurat_v3" | "seurat_v3_paper";
  /**
   * Keep only the highly variable genes (drops the others from the table).
   * @default false
   */
  subset?: boolean;
  /** obs column of batches: genes are selected within each batch and merged. */
  batch_key?: string;
  /**
   * Leave genes expressed in no cell out of the computation (always on with `batch_key`).
   * @default false
   */
  filter_unexpressed_genes?: boolean;
  /**
   * Warn (in the log) when `seurat_v3` input is not integer counts.
   * @default true
   */
  check_values?: boolean;
}

/** Batches of an obs column as row masks (categories in order, empty ones skipped). */
function batchMasks(t: Table, key: string, op: string): Uint8Array[] {
  const col = t.obs.columns[key];
  if (!col) throw new Error(`${op}: no obs column "${key}" (batch_key)`);
  const n = nObs(t);
  let codes: Int32Array;
  let nCat: number;
  if (col.kind === "categorical") {
    codes = col.codes;
    nCat = col.categories.kind === "string" ? col.categories.values.length : col.categories.data.length;
  } else if (col.kind === "string") {
    const cats = [...new Set(col.values.filter((v): v is string => v !== null))].sort();
    const at = new Map(cats.map((c, i) => [c, i]));
    codes = Int32Array.from(col.values, (v) => (v === null ? -1 : at.get(v)!));
    nCat = cats.length;
  } else if (col.kind === "dense" && col.dtype !== "float32" && col.dtype !== "float64") {
    const vals = numberData(col.data);
    const cats = [...new Set(vals)].sort((a, b) => a - b);
    const at = new Map(cats.map((c, i) => [c, i]));
    codes = Int32Array.from(vals, (v) => at.get(v)!);
    nCat = cats.length;
  } else throw new Error(`${op}: batch_key "${key}" must be a categorical, string or integer obs column`);
  const masks: Uint8Array[] = [];
  for (let c = 0; c < nCat; c++) {
    const mask = new Uint8Array(n);
    let any = 0;
    for (let i = 0; i < n; i++)
      if (codes[i] === c) {
        mask[i] = 1;
        any = 1;
      }
    if (any) masks.push(mask);
  }
  return masks;
}

/**
 * Annotate highly variable genes (Satija 2015, Zheng 2017, Stuart 2019): dispersion-based flavours
 * `seurat` and `cell_ranger` on log data, variance-stabilising `seurat_v3` on counts. Writes var
 * `highly_variable`, `means` and `dispersions`/`dispersions_norm` (or `variances`, `variances_norm`,
 * `highly_variable_rank`), per-batch counts with `batch_key`, and `uns/hvg/flavor`.
 */
export async function highly_variable_genes(
  sd: SpatialData,
  params: HighlyVariableGenesParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "highly_variable_genes";
  const t = activeTable(sd, ctx, op);
  const flavor = params.flavor ?? "seurat";
  const x = asCsr(await getMatrix(t, params.layer, op));
  ctx.progress(0.1);
  ctx.signal.throwIfAborted();
  const vr: Record<string, Column> = {};
  let hv: Uint8Array;
  if (flavor === "seurat_v3" || flavor === "seurat_v3_paper") {
    const nTop = params.n_top_genes ?? 2000;
    if (params.check_values ?? true) {
      const d = numberData(x.data);
      for (let k = 0; k < d.length; k++) {
        const v = d[k]!;
        if (v < 0 || !Number.isInteger(v)) {
          ctx.log(`flavor='${flavor}' expects raw count data, but non-integers were found.`);
          break;
        }
      }
    }
    const batches = params.batch_key ? batchMasks(t, params.batch_key, op) : [null];
    const r = seuratV3Hvg(x, batches, { flavor, nTopGenes: nTop, span: params.span ?? 0.3 }, ctx.signal);
    hv = r.highlyVariable;
    vr.highly_variable = boolColumn(hv);
    vr.highly_variable_rank = f32Column(r.rank);
    vr.means = f64Column(r.means);
    vr.variances = f64Column(r.variances);
    vr.variances_norm = f64Column(r.variancesNorm);
    if (params.batch_key) vr.highly_variable_nbatches = i32Column(r.nBatches);
  } else {
    const defaults = { min_disp: 0.5, max_disp: Infinity, min_mean: 0.0125, max_mean: 3 };
    let cutoff: number | HvgCutoffs;
    if (params.n_top_genes !== undefined) {
      const changed = (Object.keys(defaults) as (keyof typeof defaults)[]).some(
        (k) => params[k] !== undefined && params[k] !== defaults[k],
      );
      if (changed) ctx.log("If you pass `n_top_genes`, all cutoffs are ignored.");
      cutoff = params.n_top_genes;
    } else {
      cutoff = {
        minDisp: params.min_disp ?? defaults.min_disp,
        maxDisp: params.max_disp ?? defaults.max_disp,
        minMean: params.min_mean ?? defaults.min_mean,
        maxMean: params.max_mean ?? defaults.max_mean,
      };
    }
    const baseValue = unsGet(t.uns, "log1p/base");
    const logBase = typeof baseValue === "number" ? baseValue : null;
    const settings = {
      flavor,
      cutoff,
      nBins: params.n_bins ?? 20,
      logBase,
      filterUnexpressed: params.filter_unexpressed_genes ?? false,
      log: (s: string) => ctx.log(s),
    };
    if (params.batch_key) {
      const batches = batchMasks(t, params.batch_key, op);
      const r = batchedDispersionHvg(x, batches, t.var.index.values, settings, ctx.signal);
      hv = r.highlyVariable;
      vr.highly_variable = boolColumn(hv);
      vr.means = f64Column(r.means);
      vr.dispersions = f64Column(r.dispersions);
      vr.dispersions_norm = f32Column(r.dispersionsNorm);
      vr.highly_variable_nbatches = i32Column(r.nBatches);
      vr.highly_variable_intersection = boolColumn(r.intersection);
    } else {
      const r = dispersionHvg(x, null, settings);
      hv = r.highlyVariable;
      vr.highly_variable = boolColumn(hv);
      vr.means = f64Column(r.means);
      vr.dispersions = f64Column(r.dispersions);
      vr.dispersions_norm = f32Column(r.dispersionsNorm);
    }
  }
  ctx.progress(0.9);
  const uns = { hvg: unsDict({ flavor }) };
  if (params.subset) {
    const withUns: Table = { ...t, uns: unsDict({ ...t.uns.entries, ...uns }) };
    const table = await subsetVar(withUns, hv, vr);
    ctx.progress(1);
    return { replaceTables: { [ctx.table]: table } };
  }
  ctx.progress(1);
  return { tables: { [ctx.table]: { var: vr, uns } } };
}

// ---------------------------------------------------------------------------------------------
// scale

/** Params of `scale`. */
export interface ScaleParams {
  /**
   * Subtract each gene's mean (makes a sparse matrix dense); false keeps sparse data sparse.
   * @default true
   */
  zero_center?: boolean;
  /** Clip scaled values to this maximum (and to its negative when zero-centring); none by default. */
  max_value?: number;
  /** Layer to scale instead of X. */
  layer?: string;
  /** Boolean obs column: only these cells give the means and deviations and are scaled. */
  mask_obs?: string;
}

/**
 * Scale each gene to unit variance and (by default) zero mean, optionally clipping at `max_value`.
 * Writes the scaled matrix (dense when zero-centred) to X or the layer and var `mean` and `std`
 * (named `mean of <mask_obs>`/`std of <mask_obs>` with a mask).
 * @peakMemory dense_bytes * 2 + n_vars * 32
 */
export async function scale(sd: SpatialData, params: ScaleParams, ctx: OpContext): Promise<Change> {
  const op = "scale";
  const t = activeTable(sd, ctx, op);
  const x = await getMatrix(t, params.layer, op);
  const zeroCenter = params.zero_center ?? true;
  const maxValue = params.max_value ?? null;
  if (maxValue !== null && !zeroCenter)
    ctx.log("... be careful when using `max_value` without `zero_center`.");
  const mask = params.mask_obs ? boolMask(t.obs, params.mask_obs, "obs", op) : null;
  const [n, m] = x.shape as [number, number];
  ctx.progress(0.05);
  // scanpy: integer input becomes float64; float keeps its type, except that zero-centring a sparse
  // matrix subtracts a float64 mean from its dense form, which makes it float64.
  const densified = zeroCenter && x.kind !== "dense";
  const dtype = x.dtype === "float32" && !densified ? "float32" : "float64";
  const round = dtype === "float32" ? Math.fround : (v: number) => v;
  let meanVar: { mean: Float64Array; var: Float64Array };
  if (x.kind === "dense") meanVar = denseColumnMeanVar(x, mask);
  else
    meanVar = csrColumnMeanVar(asCsr(x), {
      ddof: 1,
      float32Squares: x.dtype === "float32",
      ...(mask ? { rowMask: mask } : {}),
    });
  if (x.kind === "dense") {
    // denseColumnMeanVar returns population variance; apply the n/(n−1) correction here.
    let used = n;
    if (mask) used = mask.reduce((a, b) => a + b, 0);
    if (used > 1) for (let j = 0; j < m; j++) meanVar.var[j]! *= used / (used - 1);
  }
  const mean = meanVar.mean;
  const std = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    const s = Math.sqrt(meanVar.var[j]!);
    std[j] = s === 0 ? 1 : s;
  }
  ctx.progress(0.3);
  ctx.signal.throwIfAborted();
  const hi = maxValue ?? Number.POSITIVE_INFINITY;
  const lo = maxValue !== null && zeroCenter ? -maxValue : Number.NEGATIVE_INFINITY;
  const clip = (v: number) => {
    if (maxValue === null) return v;
    if (v > maxValue) return maxValue;
    if (zeroCenter && v < -maxValue) return -maxValue;
    return v;
  };
  let out: Matrix;
  if (!zeroCenter && x.kind !== "dense") {
    // Sparse stays sparse: each stored value divided by its gene's deviation.
    const csr = asCsr(x);
    const src = numberData(csr.data);
    const data = allocArray(dtype, src.length) as Float32Array | Float64Array;
    const { indptr, indices } = csr;
    for (let i = 0; i < n; i++) {
      const end = indptr[i + 1]!;
      if (mask && !mask[i]) {
        for (let k = indptr[i]!; k < end; k++) data[k] = src[k]!;
        continue;
      }
      for (let k = indptr[i]!; k < end; k++) data[k] = clip(round(src[k]! / std[indices[k]!]!));
    }
    out = { ...csr, dtype, data } as SparseMatrix;
  } else {
    if (x.kind !== "dense" && zeroCenter) ctx.log("zero-centering a sparse array/matrix densifies it.");
    const data = allocArray(dtype, n * m) as Float32Array | Float64Array;
    if (x.kind === "dense") {
      const src = numberData(x.data);
      for (let i = 0; i < n; i++) {
        if ((i & 0xfff) === 0) ctx.signal.throwIfAborted();
        const base = i * m;
        if (mask && !mask[i]) {
          for (let j = 0; j < m; j++) data[base + j] = src[base + j]!;
          continue;
        }
        // Hot loop without closures: centre, divide (rounded as numpy rounds float32), clip.
        if (dtype === "float32") {
          for (let j = 0; j < m; j++) {
            const c = zeroCenter ? Math.fround(src[base + j]! - mean[j]!) : src[base + j]!;
            const v = Math.fround(c / std[j]!);
            data[base + j] = v > hi ? hi : v < lo ? lo : v;
          }
        } else {
          for (let j = 0; j < m; j++) {
            const c = zeroCenter ? src[base + j]! - mean[j]! : src[base + j]!;
            const v = c / std[j]!;
            data[base + j] = v > hi ? hi : v < lo ? lo : v;
          }
        }
      }
    } else {
      // Sparse input, zero-centred: the dense result starts at each gene's scaled zero.
      const csr = asCsr(x);
      const src = numberData(csr.data);
      const zeroRow = new Float64Array(m);
      for (let j = 0; j < m; j++) zeroRow[j] = clip(round(round(0 - mean[j]!) / std[j]!));
      const { indptr, indices } = csr;
      for (let i = 0; i < n; i++) {
        if ((i & 0xfff) === 0) ctx.signal.throwIfAborted();
        const base = i * m;
        const end = indptr[i + 1]!;
        if (mask && !mask[i]) {
          for (let k = indptr[i]!; k < end; k++) data[base + indices[k]!] = src[k]!;
          continue;
        }
        data.set(zeroRow, base);
        for (let k = indptr[i]!; k < end; k++) {
          const j = indices[k]!;
          data[base + j] = clip(round(round(src[k]! - mean[j]!) / std[j]!));
        }
      }
    }
    out = { kind: "dense", dtype, shape: [n, m], data } as DenseArray;
  }
  ctx.progress(0.95);
  const [meanKey, stdKey] = params.mask_obs
    ? [`mean of ${params.mask_obs}`, `std of ${params.mask_obs}`]
    : ["mean", "std"];
  ctx.progress(1);
  return {
    tables: {
      [ctx.table]: {
        ...(params.layer ? { layers: { [params.layer]: out } } : { X: out }),
        var: { [meanKey]: f64Column(mean), [stdKey]: f64Column(std) },
      },
    },
  };
}

/** Column means and population variances of a dense matrix (float32 squares rounded, as numpy's `power`). */
function denseColumnMeanVar(
  x: DenseArray,
  mask: Uint8Array | null,
): { mean: Float64Array; var: Float64Array } {
  const [n, m] = x.shape as [number, number];
  const src = numberData(x.data);
  const f32 = x.dtype === "float32";
  const sum = new Float64Array(m);
  const sq = new Float64Array(m);
  let used = 0;
  for (let i = 0; i < n; i++) {
    if (mask && !mask[i]) continue;
    used++;
    const base = i * m;
    for (let j = 0; j < m; j++) {
      const v = src[base + j]!;
      sum[j]! += v;
      sq[j]! += f32 ? Math.fround(v * v) : v * v;
    }
  }
  const mean = new Float64Array(m);
  const variance = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    mean[j] = sum[j]! / used;
    variance[j] = sq[j]! / used - mean[j]! ** 2;
  }
  return { mean, var: variance };
}

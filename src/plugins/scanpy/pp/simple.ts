/**
 * The simple `sc.pp` operations of scanpy's `preprocessing/_simple.py`: `filter_cells`, `filter_genes`,
 * `log1p` and `regress_out`. Names, parameters, defaults and output keys follow scanpy 1.12, and so do the
 * numbers (float32 data stays float32 with numpy's rounding where scanpy's results depend on it). Each
 * operation reads the committed table and returns a `Change` with new arrays; the input is never written.
 */
import { allocArray, dense, type Matrix } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { type Column, nRows } from "../../../sdk/data/dataframe.js";
import { deferredChain } from "../../../sdk/data/deferred.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { unsDict, unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { csrColumnNnz, csrColumnSums, csrRowNnz, csrRowSums, numberData } from "../../../sdk/math/csr.js";
import { log1pValues } from "../../../sdk/math/csr-threads.js";
import { deferredValues } from "../../../sdk/math/deferred-values.js";
import {
  categoricalResidualsInto,
  constantColumns,
  type DesignMatrix,
  type FloatArray,
  leastSquares,
  residualsInto,
  rowMatrix,
} from "../../../sdk/math/regression.js";
import {
  activeTable,
  asCsr,
  getMatrix,
  i32Column,
  refuseNegative,
  subsetObs,
  subsetVar,
} from "../helpers.js";
import { checkDenseSize, matrixOf, numericObs, outputDtype } from "./helpers.js";

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
  const base = params.base ?? null;
  if (base !== null && !(base > 0 && base !== 1))
    throw new Error(`${op}: base must be positive and not 1 (got ${base})`);
  const record = { uns: { log1p: unsDict({ base }) } };
  // normalize_total's deferred division (not written out yet): log1p joins the chain, and the first
  // step that reads the values writes both out in one pass (the values the two passes would make).
  const chain = deferredChain(params.layer ? t.layers[params.layer] : t.X);
  if (chain && chain.log1p === null && chain.nonNegative) {
    const lb = base === null ? 0 : Math.fround(Math.log(base));
    const out = deferredValues(
      chain.base,
      { ...chain, log1p: { lb } },
      { threads: ctx.threads, offThread: false },
    );
    ctx.progress(1);
    return {
      tables: {
        [ctx.table]: { ...(params.layer ? { layers: { [params.layer]: out } } : { X: out }), ...record },
      },
    };
  }
  const x = await getMatrix(t, params.layer, op);
  const refuse = () =>
    refuseNegative(
      x,
      params.layer ? `layers/${params.layer}` : "X",
      op,
      "log1p expects counts or normalised counts (sc.pp.normalize_total): run it before sc.pp.scale, or on a counts layer through `layer`",
    );
  // Float32 values are checked by the log1p pass itself (it flags a sign bit), saving a pass.
  if (!(x.data instanceof Float32Array)) refuse();
  ctx.progress(0.05);
  // scanpy: float data keeps its type; integer data becomes float64 (sparse and dense alike).
  const dtype = x.dtype === "float32" ? "float32" : "float64";
  const lb = base === null ? 0 : dtype === "float32" ? Math.fround(Math.log(base)) : Math.log(base);
  const src = numberData(x.data);
  let data: Float32Array | Float64Array;
  if (src instanceof Float32Array) {
    // Stored values (sparse) or every value (dense), shared among the job's threads when many.
    const seen = { negative: false };
    data = await log1pValues(src, dtype, lb, ctx.threads, ctx.signal, seen);
    if (seen.negative) refuse();
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
        ...record,
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// highly_variable_genes

/** Parameters of `regress_out`. */
export interface RegressOutParams {
  /**
   * Keys of obs columns to regress on: numeric columns (an intercept is added), or a single
   * categorical column (each gene is regressed on its per-category means).
   * @widget multitext
   */
  keys: string | string[];
  /** If given, regress this layer (and write the result there) instead of X. */
  layer?: string | null;
  /**
   * Number of jobs for parallel computation (accepted for scanpy compatibility; the thread budget
   * decides).
   * @asType integer
   */
  n_jobs?: number | null;
  /**
   * Largest dense result allowed, in GiB (Tessera's guard: scanpy densifies X without asking).
   * @default 8
   * @exclusiveMinimum 0
   */
  max_dense_gib?: number;
}

/**
 * Regress out (mostly) unwanted sources of variation with simple linear regression, as Seurat's
 * `regressOut`.
 *
 * Like scanpy, the result is dense: X (or the layer) is replaced by the residuals, an n_obs × n_vars
 * float matrix (float32, or float64 for float64 input), so a sparse X of 100k cells × 2k genes grows
 * to 0.8 GB. A result above `max_dense_gib` is refused. With numeric keys the design is
 * `[1, keys…]` and the residuals are exactly X − D·(DᵀD)⁻¹DᵀX (no intercept added back, as scanpy's
 * `numpy_regress_out`). When DᵀD is singular scanpy falls back to one GLM per gene, which returns a
 * constant gene unchanged; so does this. With one categorical key each gene is fitted on
 * `[1, per-category mean]`, which leaves the value minus its category mean.
 */
export async function regress_out(
  sd: SpatialData,
  params: RegressOutParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "regress_out";
  const t = activeTable(sd, ctx, op);
  const keys = typeof params.keys === "string" ? [params.keys] : [...(params.keys ?? [])];
  const n = nRows(t.obs);
  const x = await matrixOf(t, params.layer, op);
  const [rows, m] = x.shape as [number, number];
  if (rows !== n) throw new Error(`${op}: matrix has ${rows} rows, obs has ${n}`);
  const dtype = outputDtype(x.dtype);
  checkDenseSize(op, n, m, dtype === "float64" ? 8 : 4, params.max_dense_gib);
  if (x.kind !== "dense") ctx.log(`${op}: sparse input is densified (${n} × ${m} ${dtype})`);
  ctx.signal.throwIfAborted();
  ctx.progress(0.05, "reading");
  const y = rowMatrix(x);
  const out = allocArray(dtype, n * m) as FloatArray;

  const first = keys.length > 0 ? t.obs.columns[keys[0]!] : undefined;
  if (first && first.kind === "categorical") {
    if (keys.length > 1) {
      throw new Error(
        `${op}: "${keys[0]}" is categorical; with a categorical variable only a single key is allowed ` +
          "(each gene is regressed on its mean per category)",
      );
    }
    const nCat =
      first.categories.kind === "string" ? first.categories.values.length : first.categories.data.length;
    ctx.progress(0.2, "regressing on per-category means");
    categoricalResidualsInto(y, first.codes, nCat, out, ctx.signal);
  } else {
    // scanpy uses every obs column when keys is empty.
    const cols = keys.length > 0 ? keys : [...t.obs.columnOrder];
    for (const k of cols) {
      const c = t.obs.columns[k];
      if (c && c.kind === "categorical")
        throw new Error(`${op}: "${k}" is categorical; a categorical key must be the only key`);
    }
    const p = cols.length + 1;
    const design = new Float64Array(n * p);
    const vals = cols.map((k) => numericObs(t, k, op));
    for (let i = 0; i < n; i++) {
      design[i * p] = 1;
      for (let k = 0; k < cols.length; k++) {
        const v = vals[k]![i]!;
        if (!Number.isFinite(v))
          throw new Error(`${op}: obs column "${cols[k]}" has a non-finite value at row ${i}`);
        design[i * p + k + 1] = v;
      }
    }
    const d: DesignMatrix = { data: design, rows: n, cols: p };
    ctx.progress(0.2, "fitting");
    const fit = leastSquares(d, y, ctx.signal);
    if (fit.singular) ctx.log(`${op}: the regressors are collinear; using the minimum-norm fit`);
    ctx.progress(0.5, "residuals");
    residualsInto(d, y, fit.coef, out, fit.singular ? constantColumns(y) : undefined, ctx.signal);
  }
  ctx.progress(1);
  const result = dense(out, [n, m], dtype);
  const tc = params.layer ? { layers: { [params.layer]: result } } : { X: result };
  return { tables: { [ctx.table]: tc } };
}

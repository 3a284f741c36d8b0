/**
 * `sc.get.aggregate` (scanpy's `get/_aggregated.py`) as an extract: sums, means, non-zero counts or
 * variances of the genes over the groups of one or more obs columns, answered as JSON.
 */
import type { Matrix } from "../../../sdk/data/arrays.js";
import { type Column, columnValue } from "../../../sdk/data/dataframe.js";
import { loadMatrix, type MatrixSlot } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import type { Table } from "../../../sdk/data/table.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { activeTable } from "../helpers.js";
import { expressionSource, type Grouping, groupingOf } from "./expression.js";
import { numbersJson } from "./get.js";

/** An aggregation of `aggregate`. */
export type AggFunc = "sum" | "mean" | "count_nonzero" | "var";

/** Params of `aggregate`. */
export interface AggregateParams {
  /** obs column(s) to group the cells by; several columns group by their combinations (`a_b`). */
  by: string | string[];
  /** Aggregation(s) to compute, each giving one groups × features matrix. */
  func: AggFunc | AggFunc[];
  /**
   * Boolean obs column: only cells where it is true are aggregated.
   * @widget obs_key
   */
  mask?: string;
  /**
   * Degrees of freedom of the variance.
   * @default 1
   * @asType integer
   * @minimum 0
   */
  dof?: number;
  /** Layer to aggregate instead of X. */
  layer?: string;
  /** obsm entry to aggregate instead of X. */
  obsm?: string;
}

/** Result of `aggregate`: the groups (rows), the features (columns) and one matrix per function. */
export interface AggregateJson {
  /** Group labels, in category order (combinations joined with `_`), only those with cells. */
  readonly groups: string[];
  /** Feature names: var_names for X or a layer, column positions for an obsm matrix. */
  readonly var_names: string[];
  /** Cells aggregated into each group. */
  readonly n_obs_aggregated: number[];
  /** Per function, a groups × features matrix (row per group). NaN (var of a group of ≤ dof cells) is null. */
  readonly values: Partial<Record<AggFunc, (number | null)[][]>>;
}

/** Combined grouping of several obs columns (scanpy's `_combine_categories`): only used combinations. */
function combinedGrouping(t: Table, by: readonly string[], op: string): Grouping {
  const parts = by.map((k) => {
    const g = groupingOf(t, k, op);
    // pandas' remove_unused_categories, per column.
    const used = new Uint8Array(g.categories.length);
    for (const c of g.codes) if (c >= 0) used[c] = 1;
    const remap = new Int32Array(g.categories.length).fill(-1);
    const cats: string[] = [];
    g.categories.forEach((c, i) => {
      if (used[i]) {
        remap[i] = cats.length;
        cats.push(c);
      }
    });
    return { codes: g.codes.map((c) => (c >= 0 ? remap[c]! : -1)), categories: cats };
  });
  const n = t.obs.index.values.length;
  const codes = new Int32Array(n);
  const sizes = parts.map((p) => p.categories.length);
  for (let i = 0; i < n; i++) {
    let code = 0;
    for (let p = 0; p < parts.length; p++) {
      const c = parts[p]!.codes[i]!;
      if (c < 0) {
        code = -1;
        break;
      }
      code = code * sizes[p]! + c;
    }
    codes[i] = code;
  }
  const total = sizes.reduce((a, b) => a * b, 1);
  const used = new Uint8Array(total);
  for (const c of codes) if (c >= 0) used[c] = 1;
  const remap = new Int32Array(total).fill(-1);
  const categories: string[] = [];
  for (let c = 0; c < total; c++) {
    if (!used[c]) continue;
    const labels: string[] = [];
    let rest = c;
    for (let p = parts.length - 1; p >= 0; p--) {
      labels.unshift(parts[p]!.categories[rest % sizes[p]!]!);
      rest = Math.floor(rest / sizes[p]!);
    }
    remap[c] = categories.length;
    categories.push(labels.join("_"));
  }
  return { codes: codes.map((c) => (c >= 0 ? remap[c]! : -1)), categories };
}

/**
 * Aggregate the cells by a categorical grouping: per group and feature the sum, mean, count of
 * non-zeros or variance (scanpy's `sc.get.aggregate`, which returns an AnnData whose layers are these
 * matrices; here the matrices come back as JSON).
 * @effect extract
 */
export async function aggregate(
  sd: SpatialData,
  params: AggregateParams,
  ctx: OpContext,
): Promise<AggregateJson> {
  const op = "aggregate";
  const t = activeTable(sd, ctx, op);
  const by = typeof params.by === "string" ? [params.by] : params.by;
  if (by.length === 0) throw new Error(`${op}: "by" names no column`);
  const funcs = new Set(typeof params.func === "string" ? [params.func] : params.func);
  for (const f of funcs) {
    if (!["sum", "mean", "count_nonzero", "var"].includes(f))
      throw new Error(`${op}: func "${f}" is not one of sum, mean, count_nonzero, var`);
  }
  if (params.layer && params.obsm) throw new Error(`${op}: give only one of layer and obsm`);
  const dof = params.dof ?? 1;
  const g = combinedGrouping(t, by, op);
  let mask: Column | undefined;
  if (params.mask) {
    mask = t.obs.columns[params.mask];
    if (!mask) throw new Error(`${op}: no obs column "${params.mask}" for the mask`);
  }
  let matrix: Matrix;
  let varNames: string[];
  if (params.obsm) {
    const a = t.obsm[params.obsm];
    if (!a) throw new Error(`${op}: no obsm "${params.obsm}"`);
    if (a.kind === "dataframe")
      throw new Error(`${op}: obsm "${params.obsm}" is a data frame; aggregate a matrix`);
    matrix = await loadMatrix(a as MatrixSlot);
    varNames = Array.from({ length: matrix.shape[1] ?? 1 }, (_, i) => String(i));
  } else {
    const src = await expressionSource(t, false, params.layer, op);
    matrix = src.matrix;
    varNames = [...src.varNames];
  }
  const k = g.categories.length;
  const m = matrix.shape[1] ?? 1;
  const rows = matrix.shape[0]!;
  const cell = new Int32Array(rows);
  const counts = new Float64Array(k);
  for (let i = 0; i < rows; i++) {
    let c = g.codes[i]!;
    if (c >= 0 && mask && !columnValue(mask, i)) c = -1;
    cell[i] = c;
    if (c >= 0) counts[c]!++;
  }
  const sum = new Float64Array(k * m);
  const nnz = new Float64Array(k * m);
  const add = (c: number, j: number, v: number) => {
    sum[c * m + j]! += v;
    if (v !== 0) nnz[c * m + j]!++;
  };
  const data = matrix.data as unknown as ArrayLike<number>;
  if (matrix.kind === "dense") {
    for (let i = 0; i < rows; i++) {
      const c = cell[i]!;
      if (c >= 0) for (let j = 0; j < m; j++) add(c, j, Number(data[i * m + j]));
    }
  } else if (matrix.kind === "csr") {
    for (let i = 0; i < rows; i++) {
      const c = cell[i]!;
      if (c < 0) continue;
      for (let p = Number(matrix.indptr[i]); p < Number(matrix.indptr[i + 1]); p++)
        add(c, matrix.indices[p]!, Number(data[p]));
    }
  } else {
    for (let j = 0; j < m; j++) {
      for (let p = Number(matrix.indptr[j]); p < Number(matrix.indptr[j + 1]); p++) {
        const c = cell[matrix.indices[p]!]!;
        if (c >= 0) add(c, j, Number(data[p]));
      }
    }
  }
  let m2: Float64Array | null = null;
  if (funcs.has("var")) {
    // Second pass on deviations from the group mean (stable, like scanpy's Welford kernels); the
    // implicit zeros of a sparse matrix contribute (count - stored) · mean² each.
    m2 = new Float64Array(k * m);
    const stored = new Float64Array(k * m);
    const dev = (c: number, j: number, v: number) => {
      const mu = sum[c * m + j]! / counts[c]!;
      m2![c * m + j]! += (v - mu) * (v - mu);
      stored[c * m + j]!++;
    };
    if (matrix.kind === "dense") {
      for (let i = 0; i < rows; i++) {
        const c = cell[i]!;
        if (c >= 0) for (let j = 0; j < m; j++) dev(c, j, Number(data[i * m + j]));
      }
    } else if (matrix.kind === "csr") {
      for (let i = 0; i < rows; i++) {
        const c = cell[i]!;
        if (c < 0) continue;
        for (let p = Number(matrix.indptr[i]); p < Number(matrix.indptr[i + 1]); p++)
          dev(c, matrix.indices[p]!, Number(data[p]));
      }
    } else {
      for (let j = 0; j < m; j++) {
        for (let p = Number(matrix.indptr[j]); p < Number(matrix.indptr[j + 1]); p++) {
          const c = cell[matrix.indices[p]!]!;
          if (c >= 0) dev(c, j, Number(data[p]));
        }
      }
    }
    for (let c = 0; c < k; c++) {
      for (let j = 0; j < m; j++) {
        const mu = sum[c * m + j]! / counts[c]!;
        m2[c * m + j]! += (counts[c]! - stored[c * m + j]!) * mu * mu;
      }
    }
  }
  const matrixJson = (f: (c: number, j: number) => number) =>
    Array.from({ length: k }, (_, c) => numbersJson(Float64Array.from({ length: m }, (_, j) => f(c, j))));
  const values: Partial<Record<AggFunc, (number | null)[][]>> = {};
  if (funcs.has("sum")) values.sum = matrixJson((c, j) => sum[c * m + j]!);
  if (funcs.has("mean")) values.mean = matrixJson((c, j) => sum[c * m + j]! / counts[c]!);
  if (funcs.has("count_nonzero")) values.count_nonzero = matrixJson((c, j) => nnz[c * m + j]!);
  if (m2) {
    const mm = m2;
    values.var = matrixJson((c, j) => (counts[c]! > dof ? mm[c * m + j]! / (counts[c]! - dof) : Number.NaN));
  }
  return { groups: [...g.categories], var_names: varNames, n_obs_aggregated: Array.from(counts), values };
}

/**
 * The remaining `sc.pp` operations of scanpy: `regress_out`, `subsample`, `combat` and `scrublet`.
 * Names, parameters, defaults and output keys follow scanpy 1.12 (`preprocessing/_simple.py`,
 * `_deprecated/sampling.py`, `_combat.py`, `_scrublet/`).
 */
import {
  allocArray,
  type Categorical,
  type DenseArray,
  type DType,
  dense,
  type Matrix,
  type SparseMatrix,
  type StringArray,
  type TypedArray,
} from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import { type Column, type DataFrame, dataFrame, nRows } from "../../sdk/data/dataframe.js";
import { loadMatrix, type MatrixSlot, matrixInfo } from "../../sdk/data/lazy.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { type AxisArray, makeTable, type RawTable, type Table } from "../../sdk/data/table.js";
import { isUnsDict, type UnsDict, type UnsValue, unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { knn, knnExact } from "../../sdk/math/knn.js";
import {
  categoricalResidualsInto,
  constantColumns,
  type DesignMatrix,
  type FloatArray,
  leastSquares,
  type RowMatrix,
  residualsInto,
  rowMatrix,
} from "../../sdk/math/regression.js";
import { Rng } from "../../sdk/math/rng.js";
import { switchCompression } from "../../sdk/math/sparse.js";
import { dataOperator, lanczosSvd, project } from "../../sdk/math/svd.js";
import { activeTable } from "./pp-matrix.js";

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

const GIB = 1024 ** 3;
/** Default ceiling for a densified matrix (`max_dense_gib`). */
const DEFAULT_MAX_DENSE_GIB = 8;

/** X or `layers[layer]` of a table, read if lazy. */
async function matrixOf(t: Table, layer: string | null | undefined, op: string): Promise<Matrix> {
  if (layer) {
    const slot = t.layers[layer];
    if (!slot)
      throw new Error(`${op}: no layer "${layer}" (layers: ${Object.keys(t.layers).join(", ") || "none"})`);
    return loadMatrix(slot);
  }
  if (!t.X) throw new Error(`${op}: the table has no X`);
  return loadMatrix(t.X);
}

/** Refuse to densify an n × m matrix of `bytesPer`-byte values above `maxGib` GiB. */
function checkDenseSize(
  op: string,
  n: number,
  m: number,
  bytesPer: number,
  maxGib: number | undefined,
): void {
  const limit = (maxGib ?? DEFAULT_MAX_DENSE_GIB) * GIB;
  const need = n * m * bytesPer;
  if (need > limit) {
    throw new Error(
      `${op}: the result is a dense ${n} × ${m} matrix (${(need / GIB).toFixed(2)} GiB), above the limit of ` +
        `${(limit / GIB).toFixed(2)} GiB (max_dense_gib). Subset the genes first (for example to the highly ` +
        "variable ones) or raise max_dense_gib if the machine has the memory.",
    );
  }
}

/** Output float dtype: float64 stays float64 (as numpy keeps it); everything else becomes float32. */
function outputDtype(dtype: DType): "float32" | "float64" {
  return dtype === "float64" || dtype === "int64" || dtype === "uint64" ? "float64" : "float32";
}

/** An obs column as float64 numbers; categorical or string columns and missing values are refused. */
function numericObs(t: Table, key: string, op: string): Float64Array {
  const col = t.obs.columns[key];
  if (!col) throw new Error(`${op}: no obs column "${key}" (obs: ${t.obs.columnOrder.join(", ")})`);
  if (col.kind === "dense") {
    const d = col.data;
    return Float64Array.from(d as ArrayLike<number | bigint>, (v) => Number(v));
  }
  if (col.kind === "nullable") {
    for (let i = 0; i < col.mask.length; i++) {
      if (col.mask[i]) throw new Error(`${op}: obs column "${key}" has missing values (row ${i})`);
    }
    return Float64Array.from(col.data as ArrayLike<number | bigint>, (v) => Number(v));
  }
  throw new Error(`${op}: obs column "${key}" is ${col.kind}, not numeric`);
}

/** Group codes of an obs column as pandas' `groupby(observed=True)` orders groups. */
interface Groups {
  /** Group of each row. */
  readonly codes: Int32Array;
  /** Label of each group, in order. */
  readonly labels: string[];
}

/**
 * Groups of an obs column: a categorical's observed categories in category order; strings
 * (categorical after scanpy's `sanitize_anndata`) and numbers by sorted unique value. Missing values
 * are refused (`what` names the role of the column in the message).
 */
function obsGroups(t: Table, key: string, op: string, what: string): Groups {
  const col = t.obs.columns[key];
  if (!col)
    throw new Error(`${op}: no obs column "${key}" for ${what} (obs: ${t.obs.columnOrder.join(", ")})`);
  const n = nRows(t.obs);
  if (col.kind === "categorical") {
    const nCat = col.categories.kind === "string" ? col.categories.values.length : col.categories.data.length;
    const used = new Int32Array(nCat).fill(-1);
    for (let i = 0; i < n; i++) {
      const c = col.codes[i]!;
      if (c < 0) throw new Error(`${op}: obs column "${key}" (${what}) has a missing value at row ${i}`);
      used[c] = 1;
    }
    const labels: string[] = [];
    for (let c = 0; c < nCat; c++) {
      if (used[c]! < 0) continue;
      used[c] = labels.length;
      labels.push(
        col.categories.kind === "string" ? String(col.categories.values[c]) : String(col.categories.data[c]),
      );
    }
    return { codes: Int32Array.from(col.codes, (c) => used[c]!), labels };
  }
  let values: (string | number)[];
  if (col.kind === "string") {
    values = col.values.map((v, i) => {
      if (v === null) throw new Error(`${op}: obs column "${key}" (${what}) has a missing value at row ${i}`);
      return v;
    });
  } else {
    values = Array.from(numericObs(t, key, op));
  }
  const uniq = [...new Set(values)].sort((a, b) =>
    typeof a === "number" && typeof b === "number"
      ? a - b
      : String(a) < String(b)
        ? -1
        : String(a) > String(b)
          ? 1
          : 0,
  );
  const pos = new Map(uniq.map((v, i) => [v, i]));
  return { codes: Int32Array.from(values, (v) => pos.get(v)!), labels: uniq.map(String) };
}

/** Whether an obs column acts as a categorical (categorical, string or boolean, as pandas/patsy see it). */
function isCategoricalObs(col: Column): boolean {
  return (
    col.kind === "categorical" || col.kind === "string" || (col.kind !== "nullable" && col.dtype === "bool")
  );
}

// ---------------------------------------------------------------------------------------------
// regress_out
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// subsample: numpy's legacy RandomState, so a seed picks the same cells as scanpy
// ---------------------------------------------------------------------------------------------

/**
 * MT19937 as numpy's legacy `RandomState` seeds and draws it (`np.random.seed(s)`), with its
 * `random_interval` (masked rejection). Used so that `subsample(random_state=s)` selects exactly the
 * cells scanpy selects.
 */
class LegacyMt19937 {
  private readonly mt = new Uint32Array(624);
  private pos = 624;

  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
      throw new Error(`random_state must be an integer in [0, 2^32 - 1], got ${seed}`);
    const mt = this.mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = mt[i - 1]!;
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
  }

  private twist(): void {
    const mt = this.mt;
    for (let k = 0; k < 624; k++) {
      const y = (mt[k]! & 0x80000000) | (mt[(k + 1) % 624]! & 0x7fffffff);
      mt[k] = mt[(k + 397) % 624]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.pos = 0;
  }

  /** The next 32-bit output. */
  uint32(): number {
    if (this.pos >= 624) this.twist();
    let y = this.mt[this.pos++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** Uniform integer in [0, max] (numpy's `random_interval`; max < 2^32). */
  interval(max: number): number {
    if (max === 0) return 0;
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let v: number;
    do v = (this.uint32() & mask) >>> 0;
    while (v > max);
    return v;
  }
}

/**
 * The row indices `np.random.seed(seed); np.random.choice(n, size, replace)` draws: without
 * replacement the first `size` entries of the legacy `permutation(n)`, with replacement
 * `randint(0, n, size)`. Order is the draw order, as scanpy keeps it.
 */
export function legacyChoice(n: number, size: number, replace: boolean, seed: number): Int32Array {
  if (n > 0xffffffff) throw new Error(`subsample: ${n} rows is more than this sampler supports`);
  const rng = new LegacyMt19937(seed);
  if (replace) {
    const out = new Int32Array(size);
    if (n === 0 && size > 0) throw new Error("subsample: cannot sample from zero observations");
    for (let i = 0; i < size; i++) out[i] = rng.interval(n - 1);
    return out;
  }
  if (size > n) throw new Error(`subsample: cannot take ${size} of ${n} observations without replacement`);
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.interval(i);
    const tmp = perm[i]!;
    perm[i] = perm[j]!;
    perm[j] = tmp;
  }
  return perm.slice(0, size);
}

/** Rows `idx` of a dense array of any rank (rows along the first axis). */
function takeDenseRows(a: DenseArray, idx: Int32Array): DenseArray {
  const width = a.shape.slice(1).reduce((p, s) => p * s, 1);
  const out = allocArray(a.dtype, idx.length * width);
  const src = a.data as unknown as { subarray(s: number, e: number): TypedArray };
  const dst = out as unknown as { set(a: TypedArray, o: number): void };
  for (let r = 0; r < idx.length; r++) {
    const i = idx[r]!;
    dst.set(src.subarray(i * width, (i + 1) * width), r * width);
  }
  return { kind: "dense", dtype: a.dtype, shape: [idx.length, ...a.shape.slice(1)], data: out };
}

/** Rows `idx` of a CSR matrix. */
function takeCsrRows(m: SparseMatrix, idx: Int32Array): SparseMatrix {
  let nnz = 0;
  for (const i of idx) nnz += Number(m.indptr[i + 1]) - Number(m.indptr[i]);
  const indptr = allocArray(nnz > 0x7fffffff ? "float64" : "int32", idx.length + 1) as
    | Int32Array
    | Float64Array;
  const indices = allocArray(m.indices instanceof Float64Array ? "float64" : "int32", nnz) as
    | Int32Array
    | Float64Array;
  const data = allocArray(m.dtype, nnz);
  const dst = data as unknown as { set(a: TypedArray, o: number): void };
  const src = m.data as unknown as { subarray(s: number, e: number): TypedArray };
  let at = 0;
  for (let r = 0; r < idx.length; r++) {
    const s = Number(m.indptr[idx[r]!]);
    const e = Number(m.indptr[idx[r]! + 1]);
    indices.set(m.indices.subarray(s, e), at);
    dst.set(src.subarray(s, e), at);
    at += e - s;
    indptr[r + 1] = at;
  }
  return { kind: "csr", dtype: m.dtype, shape: [idx.length, m.shape[1]], data, indices, indptr };
}

/** Rows `idx` of a matrix (CSC goes through CSR and back). */
function takeMatrixRows(m: Matrix, idx: Int32Array): Matrix {
  if (m.kind === "dense") return takeDenseRows(m, idx);
  if (m.kind === "csr") return takeCsrRows(m, idx);
  return switchCompression(takeCsrRows(switchCompression(m), idx));
}

/** Rows and columns `idx` of a square matrix (an obsp graph). Row entries come out column-sorted. */
function takeSquare(m: Matrix, idx: Int32Array): Matrix {
  if (m.kind === "dense") {
    const n = m.shape[1]!;
    const k = idx.length;
    const out = allocArray(m.dtype, k * k);
    const src = m.data as unknown as { [i: number]: number | bigint };
    const dst = out as unknown as { [i: number]: number | bigint };
    for (let r = 0; r < k; r++) for (let c = 0; c < k; c++) dst[r * k + c] = src[idx[r]! * n + idx[c]!]!;
    return { kind: "dense", dtype: m.dtype, shape: [k, k], data: out };
  }
  const wasCsc = m.kind === "csc";
  const rowsCsr = takeCsrRows(wasCsc ? switchCompression(m) : m, idx);
  // Old column → its new positions (several when drawn with replacement), as a CSR-like list.
  const n = m.shape[1];
  const k = idx.length;
  const start = new Int32Array(n + 1);
  for (const c of idx) start[c + 1]!++;
  for (let c = 0; c < n; c++) start[c + 1]! += start[c];
  const fill = start.slice(0, n);
  const pos = new Int32Array(k);
  for (let r = 0; r < k; r++) pos[fill[idx[r]!]!++] = r;
  let nnz = 0;
  for (let t = 0; t < rowsCsr.indices.length; t++) {
    const c = rowsCsr.indices[t]!;
    nnz += start[c + 1]! - start[c]!;
  }
  const indptr = allocArray(nnz > 0x7fffffff ? "float64" : "int32", k + 1) as Int32Array | Float64Array;
  const indices = allocArray("int32", nnz) as Int32Array;
  const data = allocArray(m.dtype, nnz);
  const src = rowsCsr.data as unknown as { [i: number]: number | bigint };
  const dst = data as unknown as { [i: number]: number | bigint };
  let at = 0;
  const order: number[] = [];
  for (let r = 0; r < k; r++) {
    const s = Number(rowsCsr.indptr[r]);
    const e = Number(rowsCsr.indptr[r + 1]);
    order.length = 0;
    for (let t = s; t < e; t++) {
      const c = rowsCsr.indices[t]!;
      for (let q = start[c]!; q < start[c + 1]!; q++) order.push(pos[q]! * 0x100000000 + t);
    }
    // Sort by new column (high part), carrying the source entry (low part).
    order.sort((a, b) => a - b);
    for (const key of order) {
      indices[at] = Math.floor(key / 0x100000000);
      dst[at] = src[key % 0x100000000]!;
      at++;
    }
    indptr[r + 1] = at;
  }
  const out: SparseMatrix = { kind: "csr", dtype: m.dtype, shape: [k, k], data, indices, indptr };
  return wasCsc ? switchCompression(out) : out;
}

/** Values `idx` of a 1-d column; categoricals drop categories no kept row uses (as anndata does). */
function takeColumn(col: Column, idx: Int32Array): { col: Column; keptCategories?: Int32Array } {
  switch (col.kind) {
    case "dense":
      return { col: takeDenseRows(col, idx) };
    case "string":
      return {
        col: { kind: "string", shape: [idx.length], values: Array.from(idx, (i) => col.values[i] ?? null) },
      };
    case "nullable": {
      const data = allocArray(col.dtype, idx.length);
      const src = col.data as unknown as { [i: number]: number | bigint };
      const dst = data as unknown as { [i: number]: number | bigint };
      const mask = new Uint8Array(idx.length);
      for (let r = 0; r < idx.length; r++) {
        dst[r] = src[idx[r]!]!;
        mask[r] = col.mask[idx[r]!]!;
      }
      return { col: { kind: "nullable", dtype: col.dtype, data, mask } };
    }
    case "categorical": {
      const cats = col.categories;
      const nCat = cats.kind === "string" ? cats.values.length : cats.data.length;
      const remap = new Int32Array(nCat).fill(-1);
      for (const i of idx) {
        const c = col.codes[i]!;
        if (c >= 0) remap[c] = 0;
      }
      const kept: number[] = [];
      for (let c = 0; c < nCat; c++) if (remap[c] === 0) remap[c] = kept.push(c) - 1;
      const codes = allocArray("int32", idx.length) as Int32Array;
      for (let r = 0; r < idx.length; r++) {
        const c = col.codes[idx[r]!]!;
        codes[r] = c < 0 ? -1 : remap[c]!;
      }
      const keptIdx = Int32Array.from(kept);
      const categories: DenseArray | StringArray =
        cats.kind === "string"
          ? { kind: "string", shape: [kept.length], values: kept.map((c) => cats.values[c] ?? null) }
          : takeDenseRows(cats, keptIdx);
      const out: Categorical = { kind: "categorical", codes, categories, ordered: col.ordered };
      return { col: out, keptCategories: keptIdx };
    }
  }
}

/** Rows `idx` of a frame; reports, per categorical column, which categories were kept. */
function takeFrame(df: DataFrame, idx: Int32Array): { df: DataFrame; kept: Map<string, Int32Array> } {
  const kept = new Map<string, Int32Array>();
  const cols: Record<string, Column> = {};
  for (const name of df.columnOrder) {
    const r = takeColumn(df.columns[name]!, idx);
    cols[name] = r.col;
    if (r.keptCategories) kept.set(name, r.keptCategories);
  }
  const index: StringArray = {
    kind: "string",
    shape: [idx.length],
    values: Array.from(idx, (i) => df.index.values[i] ?? null),
  };
  return { df: dataFrame(index, cols, df.indexName, df.columnOrder), kept };
}

async function takeSlotRows(slot: MatrixSlot, idx: Int32Array): Promise<Matrix> {
  return takeMatrixRows(await loadMatrix(slot), idx);
}

async function takeAxisRows(a: AxisArray, idx: Int32Array): Promise<AxisArray> {
  return a.kind === "dataframe" ? takeFrame(a, idx).df : takeSlotRows(a, idx);
}

/** A table restricted to rows `idx` (in that order): every obs-aligned slot, obsp on both axes, raw. */
export async function subsetTableRows(t: Table, idx: Int32Array, signal?: AbortSignal): Promise<Table> {
  const { df: obs, kept } = takeFrame(t.obs, idx);
  const mapAsync = async <V, R>(rec: Readonly<Record<string, V>>, f: (v: V) => Promise<R> | R) => {
    const out: Record<string, R> = {};
    for (const [k, v] of Object.entries(rec)) {
      signal?.throwIfAborted();
      out[k] = await f(v);
    }
    return out;
  };
  // anndata subsets `uns[<col>_colors]` along with the categories it drops.
  let uns: UnsDict = t.uns;
  for (const [name, keptCats] of kept) {
    const colors = t.uns.entries[`${name}_colors`];
    const col = t.obs.columns[name] as Categorical;
    const nCat = col.categories.kind === "string" ? col.categories.values.length : col.categories.data.length;
    if (colors && !isUnsDict(colors as UnsValue) && typeof colors === "object" && colors !== null) {
      if (colors.kind === "string" && colors.values.length === nCat && keptCats.length < nCat) {
        const sub: StringArray = {
          kind: "string",
          shape: [keptCats.length],
          values: Array.from(keptCats, (c) => colors.values[c] ?? null),
        };
        uns = unsDict({ ...uns.entries, [`${name}_colors`]: sub });
      }
    }
  }
  let raw: RawTable | null = null;
  if (t.raw) raw = { X: await takeSlotRows(t.raw.X, idx), var: t.raw.var, varm: t.raw.varm };
  return makeTable({
    X: t.X ? await takeSlotRows(t.X, idx) : null,
    obs,
    var: t.var,
    obsm: await mapAsync(t.obsm, (a) => takeAxisRows(a, idx)),
    varm: { ...t.varm },
    obsp: await mapAsync(t.obsp, async (s) => takeSquare(await loadMatrix(s), idx)),
    varp: { ...t.varp },
    layers: await mapAsync(t.layers, (s) => takeSlotRows(s, idx)),
    uns,
    raw,
    annotation: t.annotation,
  });
}

/** Parameters of `subsample`. */
export interface SubsampleParams {
  /**
   * Subsample to this fraction of the number of observations (the count is truncated:
   * `int(fraction * n_obs)`). Give this or `n_obs`.
   * @minimum 0
   */
  fraction?: number | null;
  /**
   * Subsample to this number of observations. Give this or `fraction`.
   * @asType integer
   * @minimum 0
   */
  n_obs?: number | null;
  /**
   * Random seed (numpy's legacy `RandomState` stream, so a seed selects the same cells as scanpy).
   * @default 0
   * @asType integer
   * @minimum 0
   */
  random_state?: number;
  /**
   * Draw with replacement (then `fraction` may exceed 1 and rows may repeat).
   * @default false
   */
  replace?: boolean;
}

/**
 * Subsample to a fraction or a number of the observations.
 *
 * The whole table is replaced by the chosen rows, in the order drawn, exactly as scanpy's
 * `pp.subsample` (`np.random.seed(random_state)` then `np.random.choice`) leaves them: X, layers,
 * obsm, obs, raw and obsp (rows and columns) are subset; categories no longer used are dropped along
 * with their `uns[<key>_colors]` entries, as anndata does.
 */
export async function subsample(sd: SpatialData, params: SubsampleParams, ctx: OpContext): Promise<Change> {
  const op = "subsample";
  const t = activeTable(sd, ctx, op);
  const n = nRows(t.obs);
  const replace = params.replace ?? false;
  const hasF = params.fraction !== undefined && params.fraction !== null;
  const hasN = params.n_obs !== undefined && params.n_obs !== null;
  if (hasF === hasN) throw new Error(`${op}: give exactly one of fraction and n_obs`);
  let size: number;
  if (hasF) {
    const f = params.fraction!;
    if (!(f >= 0)) throw new Error(`${op}: fraction=${f} needs to be nonnegative`);
    if (!replace && f > 1)
      throw new Error(`${op}: with replace=false, fraction=${f} needs to be within [0, 1]`);
    size = Math.trunc(f * n);
  } else {
    size = params.n_obs!;
    if (!Number.isInteger(size) || size < 0) throw new Error(`${op}: n_obs must be a non-negative integer`);
    if (!replace && size > n)
      throw new Error(`${op}: n_obs=${size} is larger than the ${n} observations (use replace=true)`);
  }
  const idx = legacyChoice(n, size, replace, params.random_state ?? 0);
  ctx.progress(0.2, "subsetting");
  const table = await subsetTableRows(t, idx, ctx.signal);
  ctx.log(`${op}: kept ${size} of ${n} observations`);
  ctx.progress(1);
  return { replaceTables: { [ctx.table]: table } };
}

// ---------------------------------------------------------------------------------------------
// combat
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// scrublet
// ---------------------------------------------------------------------------------------------

/** Parameters of `scrublet`. */
export interface ScrubletParams {
  /** Obs column of batches; Scrublet then runs on each batch independently. */
  batch_key?: string | null;
  /**
   * Number of doublets to simulate relative to the number of observed transcriptomes.
   * @default 2
   * @exclusiveMinimum 0
   */
  sim_doublet_ratio?: number;
  /**
   * The estimated doublet rate of the experiment.
   * @default 0.05
   * @exclusiveMinimum 0
   * @exclusiveMaximum 1
   */
  expected_doublet_rate?: number;
  /**
   * Uncertainty in the expected doublet rate.
   * @default 0.02
   * @minimum 0
   */
  stdev_doublet_rate?: number;
  /**
   * Rate for sampling UMIs when creating synthetic doublets: 1 adds the counts of two cells; below
   * 1 the summed counts are thinned binomially at this rate.
   * @default 1
   * @exclusiveMinimum 0
   * @maximum 1
   */
  synthetic_doublet_umi_subsampling?: number;
  /**
   * Distance metric of the nearest-neighbour search.
   * @default "euclidean"
   */
  knn_dist_metric?: "euclidean" | "cosine" | "manhattan";
  /**
   * Scale each gene to unit variance (over the observed cells) before the embedding.
   * @default true
   */
  normalize_variance?: boolean;
  /**
   * Log-transform (log1p) observed and simulated counts before normalising them.
   * @default false
   */
  log_transform?: boolean;
  /**
   * Centre each gene (PCA); without it a truncated SVD of the uncentred data is used.
   * @default true
   */
  mean_center?: boolean;
  /**
   * Number of principal components of the embedding the kNN classifier works in.
   * @default 30
   * @asType integer
   * @minimum 1
   */
  n_prin_comps?: number;
  /**
   * Approximate neighbours (a random-projection forest searched exactly within its leaves; Euclidean
   * only); null chooses exact search up to 20,000 points (observed + simulated) and the forest above.
   */
  use_approx_neighbors?: boolean | null;
  /**
   * Also store, per observed cell, the parents of its simulated-doublet neighbours
   * (`uns["scrublet"]["doublet_neighbor_parents"]`, as one index list per cell).
   * @default false
   */
  get_doublet_neighbor_parents?: boolean;
  /**
   * Neighbours of the kNN graph; default round(0.5 · √n_obs).
   * @asType integer
   * @minimum 1
   */
  n_neighbors?: number | null;
  /**
   * Doublet score threshold; null finds it at the minimum between the two modes of the simulated
   * doublets' score histogram (scikit-image's `threshold_minimum`).
   */
  threshold?: number | null;
  /**
   * Log summary statistics.
   * @default true
   */
  verbose?: boolean;
  /**
   * Seed of the doublet simulation and the embedding.
   * @default 0
   * @asType integer
   */
  random_state?: number;
}

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

/** A CSR with float64 values in plain arrays: the working form of the scrublet pipeline. */
interface Csr {
  readonly rows: number;
  readonly cols: number;
  readonly indptr: Float64Array;
  readonly indices: Int32Array;
  readonly data: Float64Array;
}

/** Rows `rows` and columns with `colKeep[j] >= 0` (renumbered to `colKeep[j]`) of a row matrix. */
function subsetCsr(y: RowMatrix, rows: Int32Array, colKeep: Int32Array, nCols: number): Csr {
  let nnz = 0;
  const m = y.cols;
  if (y.kind === "csr") {
    for (const i of rows)
      for (let t = y.indptr[i]!; t < y.indptr[i + 1]!; t++) if (colKeep[y.indices[t]!]! >= 0) nnz++;
  } else {
    for (const i of rows) for (let j = 0; j < m; j++) if (colKeep[j]! >= 0 && y.data[i * m + j] !== 0) nnz++;
  }
  const indptr = new Float64Array(rows.length + 1);
  const indices = new Int32Array(nnz);
  const data = new Float64Array(nnz);
  let at = 0;
  for (let r = 0; r < rows.length; r++) {
    const i = rows[r]!;
    if (y.kind === "csr") {
      for (let t = y.indptr[i]!; t < y.indptr[i + 1]!; t++) {
        const c = colKeep[y.indices[t]!]!;
        if (c < 0) continue;
        indices[at] = c;
        data[at++] = y.data[t]!;
      }
    } else {
      for (let j = 0; j < m; j++) {
        const v = y.data[i * m + j]!;
        if (colKeep[j]! < 0 || v === 0) continue;
        indices[at] = colKeep[j]!;
        data[at++] = v;
      }
    }
    indptr[r + 1] = at;
  }
  return { rows: rows.length, cols: nCols, indptr, indices, data };
}

/** Row sums of a CSR. */
function rowSums(x: Csr): Float64Array {
  const s = new Float64Array(x.rows);
  for (let i = 0; i < x.rows; i++) for (let t = x.indptr[i]!; t < x.indptr[i + 1]!; t++) s[i]! += x.data[t];
  return s;
}

/** Scale each row to sum `target` (rows summing to 0 stay 0), as `normalize_total(target_sum=…)`. */
function normalizeRows(x: Csr, target: number): Csr {
  const sums = rowSums(x);
  const data = new Float64Array(x.data.length);
  for (let i = 0; i < x.rows; i++) {
    const f = sums[i]! > 0 ? target / sums[i]! : 1;
    for (let t = x.indptr[i]!; t < x.indptr[i + 1]!; t++) data[t] = x.data[t]! * f;
  }
  return { ...x, data };
}

/** Median of the positive values (numpy's median: mean of the two middle values for even counts). */
function medianPositive(v: Float64Array): number {
  const pos = Float64Array.from(v.filter((x) => x > 0)).sort();
  if (pos.length === 0) return 0;
  const h = pos.length >> 1;
  return pos.length % 2 ? pos[h]! : (pos[h - 1]! + pos[h]!) / 2;
}

/** Per-column mean and variance (ddof 1) of a CSR (implicit zeros included). */
function columnMeanVar(x: Csr): { mean: Float64Array; variance: Float64Array } {
  const n = x.rows;
  const s1 = new Float64Array(x.cols);
  const s2 = new Float64Array(x.cols);
  for (let t = 0; t < x.data.length; t++) {
    const v = x.data[t]!;
    s1[x.indices[t]!]! += v;
    s2[x.indices[t]!]! += v * v;
  }
  const mean = new Float64Array(x.cols);
  const variance = new Float64Array(x.cols);
  for (let j = 0; j < x.cols; j++) {
    mean[j] = s1[j]! / n;
    variance[j] = n > 1 ? Math.max(0, (s2[j]! - n * mean[j]! * mean[j]!) / (n - 1)) : Number.NaN;
  }
  return { mean, variance };
}

/**
 * scanpy's `highly_variable_genes(flavor="seurat")` with its defaults (min_mean 0.0125, max_mean 3,
 * min_disp 0.5, 20 bins) on normalised counts (the expm1 of the log1p layer it is given).
 */
function seuratHvg(norm: Csr): Uint8Array {
  const { mean, variance } = columnMeanVar(norm);
  const m = norm.cols;
  const logMean = new Float64Array(m);
  const disp = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    const mu = mean[j] === 0 ? 1e-12 : mean[j]!;
    const d = variance[j]! / mu;
    disp[j] = d === 0 ? Number.NaN : Math.log(d);
    logMean[j] = Math.log1p(mu);
  }
  // pd.cut(means, 20): equal-width bins over [min, max], the lowest edge lowered by 0.1 % of the range.
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of logMean) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const nBins = 20;
  const bin = new Int32Array(m);
  const edges = new Float64Array(nBins + 1);
  for (let b = 0; b <= nBins; b++) edges[b] = lo + ((hi - lo) * b) / nBins;
  edges[0] = lo - (hi - lo) * 0.001;
  for (let j = 0; j < m; j++) {
    let b = 0;
    while (b < nBins - 1 && logMean[j]! > edges[b + 1]!) b++;
    bin[j] = hi === lo ? 0 : b;
  }
  const cnt = new Float64Array(nBins);
  const sum = new Float64Array(nBins);
  const sumSq = new Float64Array(nBins);
  for (let j = 0; j < m; j++) {
    if (Number.isNaN(disp[j]!)) continue;
    cnt[bin[j]!]!++;
    sum[bin[j]!]! += disp[j];
  }
  const avg = sum.map((s, b) => s / cnt[b]!);
  for (let j = 0; j < m; j++) if (!Number.isNaN(disp[j]!)) sumSq[bin[j]!]! += (disp[j]! - avg[bin[j]!]!) ** 2;
  const dev = sumSq.map((s, b) => (cnt[b]! > 1 ? Math.sqrt(s / (cnt[b]! - 1)) : Number.NaN));
  const hv = new Uint8Array(m);
  for (let j = 0; j < m; j++) {
    let a = avg[bin[j]!]!;
    let d = dev[bin[j]!]!;
    if (cnt[bin[j]!] === 1) {
      // A lone gene in its bin gets a normalised dispersion of 1 (scanpy's seurat post-processing).
      d = a;
      a = 0;
    }
    const norm = (disp[j]! - a) / d;
    hv[j] = logMean[j]! > 0.0125 && logMean[j]! < 3 && norm > 0.5 && norm < Infinity ? 1 : 0;
  }
  return hv;
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
interface ScrubletRun {
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
function runScrublet(
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

/** One run's uns entry, laid out as scanpy's `uns["scrublet"]`. */
function scrubletUns(run: ScrubletRun, params: ScrubletParams, seed: number): UnsDict {
  const entries: Record<string, UnsValue> = {
    doublet_scores_sim: dense(toSharedF64(run.scoresSim)),
    doublet_parents: dense(run.parents, [run.parents.length / 2, 2], "int32"),
    parameters: unsDict({
      expected_doublet_rate: params.expected_doublet_rate ?? 0.05,
      sim_doublet_ratio: params.sim_doublet_ratio ?? 2,
      n_neighbors: run.nNeighbors,
      random_state: seed,
    }),
  };
  if (run.threshold !== null) entries.threshold = run.threshold;
  if (run.neighborParents) {
    entries.doublet_neighbor_parents = unsDict(
      Object.fromEntries(run.neighborParents.map((a, i) => [String(i), dense(a, [a.length], "int32")])),
    );
  }
  return unsDict(entries);
}

function toSharedF64(a: Float64Array): Float64Array {
  const out = allocArray("float64", a.length) as Float64Array;
  out.set(a);
  return out;
}

/**
 * Predict doublets with Scrublet (Wolock et al. 2019): a nearest-neighbour classifier of observed
 * transcriptomes and simulated doublets.
 *
 * X must be raw counts. As scanpy's wrapper does: genes in fewer than 3 cells and cells with fewer
 * than 3 genes are set aside; the counts are normalised to the median total, highly variable genes
 * picked (seurat flavour, default cut-offs); doublets are simulated by summing the counts of random
 * distinct pairs of cells; observed and simulated cells are normalised to 10⁶ per cell, z-scored with
 * the observed statistics and embedded by a PCA fitted on the observed cells; each cell's score is the
 * Bayesian doublet likelihood from the fraction of simulated doublets among its k·(1 + n_sim/n_obs)
 * neighbours. Writes obs `doublet_score` and `predicted_doublet` and uns `scrublet`
 * (`doublet_scores_sim`, `doublet_parents` as row positions of the table, `parameters`, `threshold`);
 * with `batch_key` per batch under `uns["scrublet"]["batches"]` plus `batched_by`. The random streams
 * differ from numpy's, so scores agree with scanpy in distribution, not digit for digit.
 */
export async function scrublet(sd: SpatialData, params: ScrubletParams, ctx: OpContext): Promise<Change> {
  const op = "scrublet";
  const t = activeTable(sd, ctx, op);
  const n = nRows(t.obs);
  const seed = params.random_state ?? 0;
  const full = {
    sim_doublet_ratio: params.sim_doublet_ratio ?? 2,
    expected_doublet_rate: params.expected_doublet_rate ?? 0.05,
    stdev_doublet_rate: params.stdev_doublet_rate ?? 0.02,
    synthetic_doublet_umi_subsampling: params.synthetic_doublet_umi_subsampling ?? 1,
    knn_dist_metric: params.knn_dist_metric ?? "euclidean",
    normalize_variance: params.normalize_variance ?? true,
    log_transform: params.log_transform ?? false,
    mean_center: params.mean_center ?? true,
    n_prin_comps: params.n_prin_comps ?? 30,
    use_approx_neighbors: params.use_approx_neighbors ?? null,
    get_doublet_neighbor_parents: params.get_doublet_neighbor_parents ?? false,
    n_neighbors: params.n_neighbors ?? null,
    threshold: params.threshold ?? null,
    verbose: params.verbose ?? true,
    random_state: seed,
  };
  const x = await matrixOf(t, null, op);
  const y = rowMatrix(x);
  const rng = new Rng(seed);
  const scores = allocArray("float64", n) as Float64Array;
  const called = new Int8Array(n).fill(-1);
  let uns: UnsDict;
  const runOn = (rows: Int32Array, label: string, from: number, to: number, r: Rng) => {
    const run = runScrublet(y, rows, full, r, ctx, (f, msg) =>
      ctx.progress(from + (to - from) * f, `${label}${msg}`),
    );
    for (let i = 0; i < rows.length; i++) {
      scores[rows[i]!] = run.scores[i]!;
      called[rows[i]!] = run.called[i]!;
    }
    if (full.verbose && run.stats) ctx.log(`${op}: ${label}${run.stats}`);
    return run;
  };
  if (params.batch_key) {
    const groups = obsGroups(t, params.batch_key, op, "batch_key");
    const batches: Record<string, UnsValue> = {};
    for (let b = 0; b < groups.labels.length; b++) {
      const rows = Int32Array.from(
        (function* () {
          for (let i = 0; i < n; i++) if (groups.codes[i] === b) yield i;
        })(),
      );
      const from = b / groups.labels.length;
      const run = runOn(
        rows,
        `batch ${groups.labels[b]}: `,
        from,
        (b + 1) / groups.labels.length,
        rng.fork(b),
      );
      batches[groups.labels[b]!] = scrubletUns(run, full, seed);
    }
    uns = unsDict({ batches: unsDict(batches), batched_by: params.batch_key });
  } else {
    const rows = Int32Array.from({ length: n }, (_, i) => i);
    uns = scrubletUns(runOn(rows, "", 0, 1, rng), full, seed);
  }
  const anyMissing = called.some((c) => c < 0);
  const boolData = allocArray("bool", n) as Uint8Array;
  for (let i = 0; i < n; i++) boolData[i] = called[i] === 1 ? 1 : 0;
  const predicted: Column = anyMissing
    ? {
        kind: "nullable",
        dtype: "bool",
        data: boolData,
        mask: Uint8Array.from(called, (c) => (c < 0 ? 1 : 0)),
      }
    : dense(boolData, [n], "bool");
  ctx.progress(1);
  return {
    tables: {
      [ctx.table]: {
        obs: { doublet_score: dense(scores), predicted_doublet: predicted },
        uns: { scrublet: uns },
      },
    },
  };
}

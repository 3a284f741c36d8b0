/**
 * `sc.pp.pca`: principal component analysis of X (or a layer), as scanpy computes and stores it.
 * Sparse X is centred implicitly and never densified (see `sdk/math/svd.ts`).
 */
import { allocArray, type DenseArray, type Matrix } from "../../../sdk/data/arrays.js";
import type { Change, TableChange } from "../../../sdk/data/change.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs, nVars, type Table } from "../../../sdk/data/table.js";
import { type UnsValue, unsDict } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { csrColumnSumsAsync } from "../../../sdk/math/csr-threads.js";
import { Rng } from "../../../sdk/math/rng.js";
import {
  type DataOperator,
  dataOperator,
  lanczosSvd,
  lanczosUsesGram,
  preferGram,
  projectAsync,
  randomizedSvd,
  type TruncatedSvd,
} from "../../../sdk/math/svd.js";

/** Parameters of `pca`. */
export interface PcaParams {
  /**
   * Number of principal components to compute. Defaults to 50, or 1 − the smaller dimension of the
   * (masked) data when that is ≤ 50; larger requests are capped at that value.
   * @minimum 1
   * @asType integer
   */
  n_comps?: number | null;
  /** Use this layer instead of X. */
  layer?: string | null;
  /**
   * If true, compute PCA from the covariance matrix (centred, implicitly for sparse data); if false,
   * a truncated SVD of the uncentred data.
   * @default true
   */
  zero_center?: boolean;
  /**
   * SVD solver. `arpack`: Lanczos on the covariance operator (exact to ~1e-10); `randomized`:
   * Halko et al.'s randomized range finder; `full` / `covariance_eigh`: the exact eigen-decomposition of
   * the covariance matrix; `auto`: chosen by size as scikit-learn does. `lobpcg` and `tsqr` run as
   * `arpack`.
   * @default "arpack"
   */
  svd_solver?: "arpack" | "randomized" | "full" | "auto" | "covariance_eigh" | "lobpcg" | "tsqr";
  /**
   * Seed of the starting vector (arpack) or the random test matrix (randomized).
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /**
   * Boolean var column restricting PCA to some genes. Left unset, `highly_variable` is used when
   * that column exists; `null` uses all genes.
   */
  mask_var?: string | null;
  /** Deprecated alias: true means `mask_var="highly_variable"`, false means no mask. */
  use_highly_variable?: boolean | null;
  /**
   * Data type of the stored PCA coordinates.
   * @default "float32"
   */
  dtype?: "float32" | "float64";
  /**
   * Incremental PCA in chunks (scanpy); ignored here: the sparse solver never densifies X anyway.
   * @default false
   */
  chunked?: boolean;
  /** Chunk size of `chunked` (ignored). */
  chunk_size?: number | null;
  /** Store under obsm/varm/uns `key_added` instead of `X_pca` / `PCs` / `pca`. */
  key_added?: string | null;
}

/** What `runPca` computed, before it is put into a Change. */
export interface PcaResult {
  readonly xPca: DenseArray;
  readonly pcs: DenseArray;
  readonly variance: Float64Array;
  readonly varianceRatio: Float64Array;
  readonly maskVar: string | null;
  readonly solver: string;
}

/** The boolean mask of var column `name` (dense bool/numeric or nullable bool). */
function varMask(t: Table, name: string): Uint8Array {
  const col = t.var.columns[name];
  if (!col) throw new Error(`pca: mask_var "${name}" is not a column of var`);
  const n = nVars(t);
  const out = new Uint8Array(n);
  if (col.kind === "dense") {
    for (let i = 0; i < n; i++) out[i] = Number(col.data[i]) ? 1 : 0;
  } else if (col.kind === "nullable") {
    for (let i = 0; i < n; i++) out[i] = !col.mask[i] && Number(col.data[i]) ? 1 : 0;
  } else {
    throw new Error(`pca: mask_var "${name}" must be a boolean var column, found a ${col.kind} column`);
  }
  return out;
}

/** Resolve mask_var / use_highly_variable as scanpy's `_handle_mask_var` does. */
function resolveMask(t: Table, params: PcaParams): string | null {
  const uhv = params.use_highly_variable;
  if (uhv !== undefined && uhv !== null && params.mask_var !== undefined) {
    throw new Error("pca: use_highly_variable and mask_var are incompatible; use mask_var only");
  }
  if (uhv === true) return "highly_variable";
  if (uhv === false) return null;
  if (params.mask_var === undefined) return "highly_variable" in t.var.columns ? "highly_variable" : null;
  return params.mask_var;
}

/** scikit-learn's `auto` choice for PCA. */
function autoSolver(n: number, m: number, k: number): string {
  if (m <= 1000 && n >= 10 * m) return "covariance_eigh";
  if (Math.max(n, m) <= 500) return "full";
  if (k < 0.8 * Math.min(n, m)) return "randomized";
  return "full";
}

/**
 * Compute PCA of a table's X (or layer) without building a Change; `neighbors` uses it when it has
 * to compute a representation first.
 */
export async function runPca(t: Table, params: PcaParams, ctx: OpContext): Promise<PcaResult> {
  const slot = params.layer ? t.layers[params.layer] : t.X;
  if (!slot) {
    throw new Error(
      params.layer ? `pca: no layer "${params.layer}" in the table` : "pca: the table has no X",
    );
  }
  const x: Matrix = await loadMatrix(slot);
  if (x.shape.length !== 2) throw new Error("pca: X must be a 2-d matrix");
  const maskVar = resolveMask(t, params);
  const mask = maskVar ? varMask(t, maskVar) : null;
  const zeroCenter = params.zero_center ?? true;
  ctx.progress(0, "preparing");
  // A big CSR X's column sums on the job's threads (four fixed row blocks: the same on any number).
  const columnSums =
    x.kind === "csr" &&
    (x.data instanceof Float32Array || x.data instanceof Float64Array) &&
    !(x.indptr instanceof BigInt64Array) &&
    !(x.indices instanceof BigInt64Array)
      ? await csrColumnSumsAsync(x, {}, ctx.threads, ctx.signal)
      : undefined;
  const op: DataOperator = dataOperator(x, {
    mask,
    center: zeroCenter,
    ...(columnSums ? { columnSums } : {}),
  });
  const n = op.n;
  const m = op.m;
  if (m < 1) throw new Error(`pca: mask_var "${maskVar}" selects no genes`);
  const minDim = Math.min(n, m);
  const cap = minDim - 1;
  if (cap < 1) throw new Error(`pca: need at least 2 cells and 2 genes, got ${n} × ${m}`);
  let k = params.n_comps ?? (minDim <= 50 ? cap : 50);
  if (k > cap) {
    ctx.log(`pca: n_comps=${k} capped at ${cap} (min(n_obs, n_vars) − 1)`);
    k = cap;
  }
  let solver: string = params.svd_solver ?? "arpack";
  if (solver === "auto") solver = autoSolver(n, m, k);
  if (solver === "lobpcg" || solver === "tsqr") {
    ctx.log(`pca: svd_solver "${solver}" runs as "arpack"`);
    solver = "arpack";
  }
  const rng = new Rng(params.random_state ?? 0);
  const svdOpts = {
    rng,
    signal: ctx.signal,
    progress: (f: number) => ctx.progress(0.05 + 0.75 * f, "solving"),
  };
  let svd: TruncatedSvd;
  const q = k < 0.1 * minDim ? 7 : 4;
  // The Gram matrix, when the chosen path forms it, is shared among the job's threads.
  const gramFor = async (exact: boolean) =>
    lanczosUsesGram(op, k, exact) ? { gram: await op.gramAsync(ctx.threads, ctx.signal) } : {};
  if (solver === "randomized" && preferGram(op, op.nnz, (2 * q + 2) * (k + 10))) {
    // One pass to form the Gram matrix costs less than the power iterations: its exact Lanczos
    // answer comes cheaper than the approximation asked for.
    ctx.log("pca: randomized: the covariance (Gram) path is cheaper here and exact; using it");
    svd = lanczosSvd(op, k, { ...svdOpts, gram: await op.gramAsync(ctx.threads, ctx.signal) });
  } else if (solver === "randomized") svd = randomizedSvd(op, k, { ...svdOpts, powerIterations: q });
  else if ((solver === "full" || solver === "covariance_eigh") && m <= 6000)
    svd = lanczosSvd(op, k, { ...svdOpts, exact: true, ...(await gramFor(true)) });
  else svd = lanczosSvd(op, k, { ...svdOpts, ...(await gramFor(false)) });
  ctx.signal.throwIfAborted();
  ctx.progress(0.8, "projecting");

  const dtype = params.dtype ?? "float32";
  const proj = await projectAsync(
    op,
    svd.v,
    k,
    allocArray("float32", n * k) as Float32Array,
    ctx.threads,
    ctx.signal,
  );
  const variance = new Float64Array(k);
  let total = 0;
  if (zeroCenter) {
    for (let c = 0; c < k; c++) variance[c] = (svd.s[c] * svd.s[c]) / (n - 1);
    for (let j = 0; j < m; j++) total += op.colVar[j];
  } else {
    // TruncatedSVD: the variance (ddof 0) of each projected column over that of X's columns.
    for (let c = 0; c < k; c++) {
      let s = 0;
      let s2 = 0;
      for (let i = 0; i < n; i++) {
        const v = proj[i * k + c];
        s += v;
        s2 += v * v;
      }
      const mu = s / n;
      variance[c] = s2 / n - mu * mu;
    }
    for (let j = 0; j < m; j++) total += op.colVar[j];
  }
  const varianceRatio = variance.map((v) => (total > 0 ? v / total : 0));
  let xPca: DenseArray;
  if (dtype === "float64") {
    const d = allocArray("float64", n * k) as Float64Array;
    for (let i = 0; i < n * k; i++) d[i] = proj[i];
    xPca = { kind: "dense", dtype: "float64", shape: [n, k], data: d };
  } else xPca = { kind: "dense", dtype: "float32", shape: [n, k], data: proj };

  // Loadings: n_vars × k, zero rows for masked-out genes (float64 then, as scanpy's np.zeros).
  const nv = nVars(t);
  const pcsDtype = mask ? "float64" : "float32";
  const pcs = allocArray(pcsDtype, nv * k) as Float64Array | Float32Array;
  for (let j = 0, c = 0; j < nv; j++) {
    if (mask && !mask[j]) continue;
    for (let t2 = 0; t2 < k; t2++) pcs[j * k + t2] = svd.v[c * k + t2];
    c++;
  }
  ctx.log(
    `pca: ${n} × ${m} (${maskVar ? `mask_var=${maskVar}` : "all genes"}), ${k} components, ` +
      `solver ${solver} (${svd.iterations} iterations)`,
  );
  ctx.progress(1);
  return {
    xPca,
    pcs: { kind: "dense", dtype: pcsDtype, shape: [nv, k], data: pcs },
    variance,
    varianceRatio,
    maskVar,
    solver,
  };
}

/** The table change that stores a PCA result under scanpy's keys. */
export function pcaTableChange(r: PcaResult, params: PcaParams): TableChange {
  const keyObsm = params.key_added ?? "X_pca";
  const keyVarm = params.key_added ?? "PCs";
  const keyUns = params.key_added ?? "pca";
  const pcaParams: Record<string, UnsValue> = {
    zero_center: params.zero_center ?? true,
    use_highly_variable: r.maskVar === "highly_variable",
    mask_var: r.maskVar,
  };
  if (params.layer) pcaParams.layer = params.layer;
  // The whole dict is replaced, so stale entries of an earlier run do not survive.
  const uns: Record<string, UnsValue> = {
    [keyUns]: unsDict({
      params: unsDict(pcaParams),
      variance: vec(r.variance),
      variance_ratio: vec(r.varianceRatio),
    }),
  };
  return { obsm: { [keyObsm]: r.xPca }, varm: { [keyVarm]: r.pcs }, uns };
}

function vec(a: Float64Array): DenseArray {
  const d = allocArray("float64", a.length) as Float64Array;
  d.set(a);
  return { kind: "dense", dtype: "float64", shape: [a.length], data: d };
}

/**
 * Principal component analysis: PCA coordinates (obsm `X_pca`), loadings (varm `PCs`) and the
 * variance decomposition (uns `pca`), as `sc.pp.pca`.
 *
 * Sparse data is centred implicitly, `(X − 1μᵀ)V = XV − 1(μᵀV)`, so X is never densified. Component
 * signs follow scikit-learn's `svd_flip` on the components: each component's largest-magnitude
 * loading is positive.
 * @peakMemory n_vars * n_vars * 16 + (n_obs + n_vars) * max(n_comps, 50) * 32
 */
export async function pca(sd: SpatialData, params: PcaParams, ctx: OpContext): Promise<Change> {
  const t = sd.tables[ctx.table];
  if (!t) throw new Error(`pca: no table "${ctx.table}"`);
  if (nObs(t) < 2) throw new Error("pca: need at least 2 cells");
  const r = await runPca(t, params, ctx);
  return { tables: { [ctx.table]: pcaTableChange(r, params) } };
}

/**
 * `sc.pp.highly_variable_genes` (scanpy's `preprocessing/_highly_variable_genes.py`): the operation —
 * parameters, batches, output columns. The flavours' computations are in `highly-variable-genes-kernels.ts`.
 */
import type { Change } from "../../../sdk/data/change.js";
import type { Column } from "../../../sdk/data/dataframe.js";
import { deferredChain } from "../../../sdk/data/deferred.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs, type Table } from "../../../sdk/data/table.js";
import { unsDict, unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { numberData } from "../../../sdk/math/csr.js";
import { csrColumnMeanVarAsync } from "../../../sdk/math/csr-threads.js";
import {
  activeTable,
  asCsr,
  boolColumn,
  f32Column,
  f64Column,
  getMatrix,
  i32Column,
  subsetVar,
} from "../helpers.js";
import {
  batchedDispersionHvg,
  dispersionHvg,
  type HvgCutoffs,
  seuratV3Hvg,
} from "./highly-variable-genes-kernels.js";

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
  // normalize_total → log1p left a deferred chain: the dispersion flavours need only column means and
  // variances, taken from the chain on the fly (the same sums) without writing it out; the next step
  // that needs the values themselves (pca) writes it out.
  const chain = deferredChain(params.layer ? t.layers[params.layer] : t.X);
  const fromChain =
    chain?.log1p &&
    (flavor === "seurat" || flavor === "cell_ranger") &&
    !params.batch_key &&
    !params.filter_unexpressed_genes &&
    chain.base.data instanceof Float32Array &&
    chain.base.indptr instanceof Int32Array &&
    chain.base.indices instanceof Int32Array
      ? chain
      : null;
  const x = fromChain
    ? { ...fromChain.base, dtype: "float32" as const }
    : asCsr(await getMatrix(t, params.layer, op));
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
      // The one pass over every stored value, on the job's threads (plain float data, 32-bit indices).
      const threaded =
        (x.data instanceof Float32Array || x.data instanceof Float64Array) &&
        x.indptr instanceof Int32Array &&
        x.indices instanceof Int32Array;
      const mv = threaded
        ? await csrColumnMeanVarAsync(
            x,
            {
              ddof: 1,
              float32Squares: x.dtype === "float32",
              transform: flavor === "seurat" ? { kind: "expm1", logBase } : { kind: "none" },
              ...(fromChain ? { chain: { ...fromChain, base: x } } : {}),
            },
            ctx.threads,
            ctx.signal,
          )
        : undefined;
      const r = dispersionHvg(x, null, settings, mv);
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

/**
 * `gr.spatial_autocorr`: Moran's I or Geary's C of genes (or obs columns, or obsm columns) over the
 * spatial graph, with analytic and permutation p-values and their FDR, stored as squidpy 1.8.3 stores
 * it: a data frame in uns `moranI` or `gearyC`, sorted by the statistic.
 */
import type { Change } from "../../sdk/data/change.js";
import { type Column, dataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import {
  autocorrWithPerms,
  normalVariance,
  rowNormalize,
  weightMoments,
} from "../../sdk/math/spatial/autocorr.js";
import { benjaminiHochberg, bonferroni, normalCdf } from "../../sdk/math/stats.js";
import { geneFeatures, type NamedFeatures, obsFeatures, obsmFeatures } from "./features.js";
import { obspGraph, tableOf } from "./inputs.js";

/** A gene name, obs column or obsm column index. @maxLength 256 */
export type FeatureName = string;

/** Parameters of `spatial_autocorr`. */
export interface SpatialAutocorrParams {
  /**
   * obsp key of the spatial graph.
   * @default "spatial_connectivities"
   * @maxLength 256
   */
  connectivity_key?: string;
  /**
   * attr `X`: genes (var names; unset: the `highly_variable` genes, else all). attr `obs`: numeric
   * obs columns (unset: all). attr `obsm`: column indices of obsm `layer` (unset: all).
   * @maxItems 50000
   */
  genes?: FeatureName | FeatureName[] | number | number[] | null;
  /**
   * `moran` (Moran's I) or `geary` (Geary's C).
   * @default "moran"
   */
  mode?: "moran" | "geary";
  /**
   * Row-normalise the weights first (advised for the analytic p-values).
   * @default true
   */
  transformation?: boolean;
  /**
   * Permutations for the permutation p-values; unset: only the analytic ones.
   * @minimum 1
   * @maximum 100000
   * @asType integer
   */
  n_perms?: number | null;
  /**
   * Two-tailed analytic p-values (else one-tailed).
   * @default false
   */
  two_tailed?: boolean;
  /**
   * Multiple-testing correction of each p-value column (`{column}_{corr_method}`); null: none.
   * @default "fdr_bh"
   */
  corr_method?: "fdr_bh" | "bonferroni" | null;
  /**
   * Where the features are: `X` (genes), `obs` (columns) or `obsm` (columns of obsm `layer`).
   * @default "X"
   */
  attr?: "obs" | "X" | "obsm";
  /** attr `X`: a layer instead of X; attr `obsm`: the obsm key. */
  layer?: string | null;
  /**
   * attr `X`: read raw X (genes looked up in raw's var names) instead of X.
   * @default false
   */
  use_raw?: boolean;
  /**
   * Seed of the permutations.
   * @asType integer
   */
  seed?: number | null;
}

/** Relative difference below which a permuted statistic ties with the observed one. */
const TIE_TOLERANCE = 1e-9;

function asList<T>(v: T | T[] | null | undefined): T[] | null {
  if (v == null) return null;
  return Array.isArray(v) ? v : [v];
}

/**
 * Global spatial autocorrelation (squidpy's `gr.spatial_autocorr`): Moran's I or Geary's C per
 * feature, p-values under normality and from permutations, with FDR.
 */
export async function spatial_autocorr(
  sd: SpatialData,
  params: SpatialAutocorrParams,
  ctx: OpContext,
): Promise<Change> {
  const what = "spatial_autocorr";
  const t = tableOf(sd, ctx.table);
  const mode = params.mode ?? "moran";
  const attr = params.attr ?? "X";
  const list = asList(params.genes as (string | number)[] | string | number | null | undefined);
  let f: NamedFeatures;
  if (attr === "X")
    f = await geneFeatures(
      t,
      list ? list.map(String) : null,
      params.layer ?? null,
      what,
      params.use_raw ?? false,
    );
  else if (attr === "obs") f = obsFeatures(t, list ? list.map(String) : null, what);
  else f = await obsmFeatures(t, params.layer ?? null, list ? list.map(Number) : null, what);
  if (f.nFeatures === 0) throw new Error(`${what}: no features to score`);
  let g = await obspGraph(t, ctx.table, params.connectivity_key ?? "spatial_connectivities");
  if (params.transformation ?? true) g = rowNormalize(g);
  const n = g.n;
  const nPerms = params.n_perms ?? 0;
  ctx.log(
    `${what}: ${mode} over ${f.nFeatures} features, ${nPerms} permutations on ${ctx.threads} thread(s)`,
  );
  const { scores, perms } = await autocorrWithPerms(g, f, mode, {
    nPerms,
    seed: params.seed ?? 0,
    threads: ctx.threads,
    signal: ctx.signal,
  });
  const m = f.nFeatures;
  const variance = normalVariance(mode, weightMoments(g), n);
  const expected = mode === "moran" ? -1 / (n - 1) : 1;
  const pNorm = new Float64Array(m);
  for (let k = 0; k < m; k++) {
    const z = ((scores[k] as number) - expected) / Math.sqrt(variance);
    pNorm[k] = (z > 0 ? 1 - normalCdf(z) : normalCdf(z)) * (params.two_tailed ? 2 : 1);
  }
  const stat = mode === "moran" ? "I" : "C";
  const cols: Record<string, Float64Array> = {
    [stat]: scores,
    pval_norm: pNorm,
    var_norm: new Float64Array(m).fill(variance),
  };
  if (perms) {
    const pZ = new Float64Array(m);
    const pSim = new Float64Array(m);
    const vSim = new Float64Array(m);
    for (let k = 0; k < m; k++) {
      let larger = 0;
      let sum = 0;
      // A permuted value equal to the observed one up to rounding counts as ≥ (sparse features have
      // discrete nulls where most permutations tie with the observation; which side rounding puts
      // them on is noise).
      const s = scores[k] as number;
      const floor = s - TIE_TOLERANCE * Math.abs(s);
      for (let q = 0; q < nPerms; q++) {
        const v = perms[q * m + k] as number;
        if (v >= floor) larger++;
        sum += v;
      }
      if (nPerms - larger < larger) larger = nPerms - larger;
      pSim[k] = (larger + 1) / (nPerms + 1);
      const mean = sum / nPerms;
      let ss = 0;
      for (let q = 0; q < nPerms; q++) ss += ((perms[q * m + k] as number) - mean) ** 2;
      vSim[k] = ss / nPerms;
      const z = ((scores[k] as number) - mean) / Math.sqrt(vSim[k] as number);
      pZ[k] = z > 0 ? 1 - normalCdf(z) : normalCdf(z);
    }
    cols.pval_z_sim = pZ;
    cols.pval_sim = pSim;
    cols.var_sim = vSim;
  }
  const corr = params.corr_method === undefined ? "fdr_bh" : params.corr_method;
  if (corr) {
    for (const pv of Object.keys(cols).filter((c) => c.includes("pval"))) {
      const p = cols[pv] as Float64Array;
      cols[`${pv}_${corr}`] = corr === "fdr_bh" ? benjaminiHochberg(p) : bonferroni(p);
    }
  }
  // Sorted by the statistic: Moran's I descending, Geary's C ascending (NaN last, ties stable).
  const order = Array.from({ length: m }, (_, k) => k).sort((a, b) => {
    const va = scores[a] as number;
    const vb = scores[b] as number;
    if (Number.isNaN(va) || Number.isNaN(vb)) return Number.isNaN(va) ? (Number.isNaN(vb) ? 0 : 1) : -1;
    return mode === "moran" ? vb - va : va - vb;
  });
  const columns: Record<string, Column> = {};
  for (const [name, v] of Object.entries(cols)) {
    columns[name] = {
      kind: "dense",
      dtype: "float64",
      shape: [m],
      data: Float64Array.from(order, (k) => v[k] as number),
    };
  }
  const df = dataFrame(
    order.map((k) => f.names[k] as string),
    columns,
  );
  return { tables: { [ctx.table]: { uns: { [`${mode}${stat}`]: df } } } };
}

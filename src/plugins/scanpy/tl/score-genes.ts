/**
 * `sc.tl.score_genes` and `sc.tl.score_genes_cell_cycle` (scanpy's `tools/_score_genes.py`): the mean
 * expression of a gene set minus that of control genes drawn from the same expression bins, and the S
 * and G2/M scores with the phase each cell is most likely in (two `score_genes` calls with a shared
 * control size).
 */
import { allocArray, type Matrix, strings } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import type { Column } from "../../../sdk/data/dataframe.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { Rng } from "../../../sdk/math/rng.js";
import { expressionSource } from "../get/expression.js";
import { activeTable } from "../helpers.js";

/** Params of `score_genes`. */
export interface ScoreGenesParams {
  /**
   * Genes whose mean expression is scored (names missing from var_names are ignored with a log line).
   * @widget var_names
   */
  gene_list: string[];
  /**
   * Allow the genes of `gene_list` to be drawn as control genes (scanpy's default until 2.0).
   * @default true
   */
  ctrl_as_ref?: boolean;
  /**
   * Control genes drawn from each expression bin that holds a gene of the list.
   * @default 50
   * @asType integer
   * @minimum 1
   */
  ctrl_size?: number;
  /**
   * Genes to draw controls from (default: all genes).
   * @widget var_names
   */
  gene_pool?: string[];
  /**
   * Number of expression-level bins.
   * @default 25
   * @asType integer
   * @minimum 2
   */
  n_bins?: number;
  /**
   * Name of the obs column written.
   * @default "score"
   */
  score_name?: string;
  /**
   * Seed of the control-gene sampling.
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /** Use `raw` (default: true when the table has raw and no layer is given). */
  use_raw?: boolean;
  /** Layer to read expression from. */
  layer?: string;
}

/** Per-gene means over all cells (scanpy's `_nan_means(axis=0)`: NaN values are skipped). */
function geneMeans(x: Matrix, genes: readonly number[]): Float64Array {
  const rows = x.shape[0]!;
  const width = x.shape[1]!;
  const slot = new Int32Array(width).fill(-1);
  genes.forEach((j, s) => {
    slot[j] = s;
  });
  const sum = new Float64Array(genes.length);
  const nan = new Float64Array(genes.length);
  const data = x.data as unknown as ArrayLike<number>;
  const visit = (j: number, v: number) => {
    const s = slot[j]!;
    if (s < 0) return;
    if (Number.isNaN(v)) nan[s]!++;
    else sum[s]! += v;
  };
  if (x.kind === "dense") {
    for (let i = 0; i < rows; i++) for (let j = 0; j < width; j++) visit(j, Number(data[i * width + j]));
  } else if (x.kind === "csr") {
    for (let p = 0; p < x.indices.length; p++) visit(x.indices[p]!, Number(data[p]));
  } else {
    for (let j = 0; j < width; j++)
      for (let p = x.indptr[j]!; p < x.indptr[j + 1]!; p++) visit(j, Number(data[p]));
  }
  return Float64Array.from(sum, (s, i) => s / (rows - nan[i]!));
}

/** Per-cell means over a set of genes (scanpy's `_nan_means(axis=1)`). */
function cellMeans(x: Matrix, genes: readonly number[]): Float64Array {
  const rows = x.shape[0]!;
  const width = x.shape[1]!;
  const inSet = new Uint8Array(width);
  for (const j of genes) inSet[j] = 1;
  const sum = new Float64Array(rows);
  const nan = new Float64Array(rows);
  const data = x.data as unknown as ArrayLike<number>;
  const visit = (i: number, j: number, v: number) => {
    if (!inSet[j]) return;
    if (Number.isNaN(v)) nan[i]!++;
    else sum[i]! += v;
  };
  if (x.kind === "dense") {
    for (let i = 0; i < rows; i++) for (const j of genes) visit(i, j, Number(data[i * width + j]));
  } else if (x.kind === "csr") {
    for (let i = 0; i < rows; i++)
      for (let p = x.indptr[i]!; p < x.indptr[i + 1]!; p++) visit(i, x.indices[p]!, Number(data[p]));
  } else {
    for (const j of genes)
      for (let p = x.indptr[j]!; p < x.indptr[j + 1]!; p++) visit(x.indices[p]!, j, Number(data[p]));
  }
  const n = genes.length;
  return Float64Array.from(sum, (s, i) => s / (n - nan[i]!));
}

/**
 * Expression bins of the gene pool as scanpy cuts them: genes ranked by mean expression (ties
 * take the lowest rank, pandas' `rank(method="min")`), then `floor(rank / n_items)` with
 * `n_items = round(n / (n_bins - 1))`. Returns a bin per pool gene (NaN for non-finite means).
 * @internal
 */
export function scoreGenesBins(means: Float64Array, nBins: number): Float64Array {
  const finite: number[] = [];
  means.forEach((m, i) => {
    if (Number.isFinite(m)) finite.push(i);
  });
  const nItems = Math.round(finite.length / (nBins - 1)) || 1;
  const sorted = [...finite].sort((a, b) => means[a]! - means[b]! || a - b);
  const cut = new Float64Array(means.length).fill(Number.NaN);
  let i = 0;
  while (i < sorted.length) {
    let j = i + 1;
    while (j < sorted.length && means[sorted[j]!] === means[sorted[i]!]) j++;
    const rank = i + 1; // method="min"
    for (let q = i; q < j; q++) cut[sorted[q]!] = Math.floor(rank / nItems);
    i = j;
  }
  return cut;
}

/**
 * Score each cell by the mean expression of a gene set minus the mean of control genes drawn from
 * the same expression bins (Tirosh et al. 2016, as scanpy's `score_genes`). Writes `obs/<score_name>`.
 * The controls are drawn with Tessera's seeded generator, so for the same `random_state` they differ
 * from scanpy's numpy draws (the binning and the gene-set mean are the same).
 */
export async function score_genes(
  sd: SpatialData,
  params: ScoreGenesParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "score_genes";
  const t = activeTable(sd, ctx, op);
  const src = await expressionSource(t, params.use_raw, params.layer, op);
  const x = src.matrix;
  const at = new Map(src.varNames.map((g, i) => [g, i]));
  const listNames = [...new Set(params.gene_list)];
  const missing = listNames.filter((g) => !at.has(g));
  if (missing.length > 0) ctx.log(`${op}: genes are not in var_names and ignored: ${missing.join(", ")}`);
  const list = listNames.filter((g) => at.has(g));
  if (list.length === 0) throw new Error(`${op}: no valid genes were passed for scoring`);
  const pool = params.gene_pool
    ? [...new Set(params.gene_pool)].filter((g) => at.has(g))
    : [...new Set(src.varNames)];
  if (pool.length === 0) throw new Error(`${op}: no valid genes were passed for reference set`);
  const nBins = params.n_bins ?? 25;
  const ctrlSize = params.ctrl_size ?? 50;
  const ctrlAsRef = params.ctrl_as_ref ?? true;
  const rng = new Rng(params.random_state ?? 0);

  const poolCols = pool.map((g) => at.get(g)!);
  const cut = scoreGenesBins(geneMeans(x, poolCols), nBins);
  const cutOf = new Map(pool.map((g, i) => [g, cut[i]!]));
  const listSet = new Set(list);
  const listCuts = [
    ...new Set(list.map((g) => cutOf.get(g)).filter((c): c is number => c !== undefined && !Number.isNaN(c))),
  ].sort((a, b) => a - b);
  const control = new Set<string>();
  for (const c of listCuts) {
    let r = pool.filter((g, i) => cut[i] === c && (ctrlAsRef || !listSet.has(g)));
    if (r.length === 0) ctx.log(`${op}: no control genes for cut=${c}; consider a larger gene_pool`);
    if (ctrlSize < r.length) {
      // Sample ctrl_size genes without replacement (partial Fisher–Yates).
      const a = [...r];
      for (let i = 0; i < ctrlSize; i++) {
        const jj = i + rng.int(a.length - i);
        [a[i], a[jj]] = [a[jj]!, a[i]!];
      }
      r = a.slice(0, ctrlSize);
    }
    for (const g of r) if (!(ctrlAsRef && listSet.has(g))) control.add(g);
  }
  if (control.size === 0) {
    throw new Error(`${op}: no control genes found in any cut${ctrlAsRef ? "; try ctrl_as_ref=false" : ""}`);
  }
  const meansList = cellMeans(
    x,
    list.map((g) => at.get(g)!),
  );
  const meansCtrl = cellMeans(
    x,
    [...control].map((g) => at.get(g)!),
  );
  const n = meansList.length;
  const score = allocArray("float64", n) as Float64Array;
  for (let i = 0; i < n; i++) score[i] = meansList[i]! - meansCtrl[i]!;
  const name = params.score_name ?? "score";
  ctx.log(`${op}: added obs["${name}"] (${control.size} control genes)`);
  ctx.progress(1);
  return {
    tables: {
      [ctx.table]: { obs: { [name]: { kind: "dense", dtype: "float64", shape: [n], data: score } } },
    },
  };
}

/** Params of `score_genes_cell_cycle`. */
export interface ScoreGenesCellCycleParams {
  /**
   * Genes of the S phase (e.g. Tirosh et al.'s list: MCM5, PCNA, TYMS …).
   * @widget var_names
   */
  s_genes: string[];
  /**
   * Genes of the G2/M phase (e.g. HMGB2, CDK1, NUSAP1 …).
   * @widget var_names
   */
  g2m_genes: string[];
  /**
   * Number of expression-level bins for control genes.
   * @default 25
   * @asType integer
   * @minimum 2
   */
  n_bins?: number;
  /**
   * Seed of the control-gene sampling.
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /** Use `raw` (default: true when the table has raw and no layer is given). */
  use_raw?: boolean;
  /** Layer to read expression from. */
  layer?: string;
}

/** The obs column `score_genes` wrote into its change. */
function scoreOf(change: Change, table: string, name: string): Float64Array {
  const col = change.tables?.[table]?.obs?.[name] as Column | null | undefined;
  if (!col || col.kind !== "dense")
    throw new Error(`score_genes_cell_cycle: score_genes wrote no obs column "${name}"`);
  return Float64Array.from(col.data as ArrayLike<number>);
}

/**
 * Score the cell cycle: writes obs `S_score`, `G2M_score` and `phase` (`G1` when both scores are
 * negative, else `S` or `G2M` by the higher score), as scanpy's `score_genes_cell_cycle`.
 */
export async function score_genes_cell_cycle(
  sd: SpatialData,
  params: ScoreGenesCellCycleParams,
  ctx: OpContext,
): Promise<Change> {
  if (!params.s_genes?.length || !params.g2m_genes?.length) {
    throw new Error("score_genes_cell_cycle: s_genes and g2m_genes must both name at least one gene");
  }
  // scanpy uses the smaller list's length as the control size for both scores.
  const common = {
    ctrl_size: Math.min(params.s_genes.length, params.g2m_genes.length),
    n_bins: params.n_bins ?? 25,
    random_state: params.random_state ?? 0,
    ...(params.use_raw !== undefined ? { use_raw: params.use_raw } : {}),
    ...(params.layer !== undefined ? { layer: params.layer } : {}),
  };
  const sChange = await score_genes(sd, { ...common, gene_list: params.s_genes, score_name: "S_score" }, ctx);
  const g2mChange = await score_genes(
    sd,
    { ...common, gene_list: params.g2m_genes, score_name: "G2M_score" },
    ctx,
  );
  const s = scoreOf(sChange, ctx.table, "S_score");
  const g2m = scoreOf(g2mChange, ctx.table, "G2M_score");
  // Categories sorted as pandas sorts them when anndata writes the string column: G1, G2M, S.
  const codes = new Int32Array(s.length);
  for (let i = 0; i < s.length; i++) {
    codes[i] = s[i]! < 0 && g2m[i]! < 0 ? 0 : g2m[i]! > s[i]! ? 1 : 2;
  }
  ctx.log(`score_genes_cell_cycle: added obs S_score, G2M_score, phase`);
  return {
    tables: {
      [ctx.table]: {
        obs: {
          S_score: { kind: "dense", dtype: "float64", shape: [s.length], data: s },
          G2M_score: { kind: "dense", dtype: "float64", shape: [g2m.length], data: g2m },
          phase: { kind: "categorical", codes, categories: strings(["G1", "G2M", "S"]), ordered: false },
        },
      },
    },
  };
}

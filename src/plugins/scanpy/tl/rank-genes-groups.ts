/**
 * `sc.tl.rank_genes_groups` (scanpy's `tools/_rank_genes_groups.py`): marker genes of each group by a
 * t-test, t-test_overestim_var, Wilcoxon rank-sum (`rank-genes-groups-wilcoxon.ts`) or logistic
 * regression (`rank-genes-groups-logreg.ts`). Names, parameters, defaults and output keys follow
 * scanpy 1.12.
 *
 * Results go to `uns[key_added]` as scanpy lays them out, with one difference of container: scanpy
 * stores `names`, `scores`, `pvals`, `pvals_adj` and `logfoldchanges` as numpy record arrays with one
 * field per group; here each is a DataFrame with one column per group (rows = rank, index "0", "1",
 * …), which is how an h5ad/zarr reader presents such a record array too. `pts`/`pts_rest` are
 * DataFrames indexed by gene, as in scanpy.
 */
import { allocArray, type DenseArray, type Matrix, strings } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { columnValue, dataFrame } from "../../../sdk/data/dataframe.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import type { Table } from "../../../sdk/data/table.js";
import { type UnsValue, unsDict, unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { benjaminiHochberg, welchTTest } from "../../../sdk/math/stats.js";
import { expressionSource, type Grouping, groupingOf } from "../get/expression.js";
import { activeTable } from "../helpers.js";
import { logregTests } from "./rank-genes-groups-logreg.js";
import { wilcoxonTests } from "./rank-genes-groups-wilcoxon.js";

/** Test of `rank_genes_groups`. */
export type RankMethod = "t-test" | "t-test_overestim_var" | "wilcoxon" | "logreg";

/** p-value correction of `rank_genes_groups`. */
export type CorrMethod = "benjamini-hochberg" | "bonferroni";

/** Params of `rank_genes_groups`. */
export interface RankGenesGroupsParams {
  /** The obs column (categorical) whose groups are characterised. */
  groupby: string;
  /** Boolean var column: test only the genes where it is true (scanpy's `mask_var`). */
  mask_var?: string;
  /**
   * Use `raw` (its X and var). Default: true when the table has raw and no `layer` is given.
   */
  use_raw?: boolean;
  /** Layer to test instead of X. */
  layer?: string;
  /**
   * Groups to characterise, or "all". With `reference = "rest"` the rest is still every other cell.
   * @default "all"
   */
  groups?: "all" | string[];
  /**
   * "rest" compares each group with the union of the other cells; a group name compares with that group.
   * @default "rest"
   */
  reference?: string;
  /**
   * Genes kept per group in the result tables (default: all tested genes).
   * @asType integer
   * @minimum 1
   */
  n_genes?: number;
  /**
   * Rank by the absolute value of the score (scores are still stored signed).
   * @default false
   */
  rankby_abs?: boolean;
  /**
   * Also store the fraction of cells expressing each gene (`pts`, and `pts_rest` against the rest).
   * @default false
   */
  pts?: boolean;
  /**
   * uns key the results are stored under.
   * @default "rank_genes_groups"
   */
  key_added?: string;
  /**
   * Test: Welch's t-test, the t-test with the group's size for the rest's (overestimating the
   * variance of small groups), the Wilcoxon rank-sum test, or `logreg` (scikit-learn's default
   * L2 logistic regression, C = 1, 100 L-BFGS iterations; scores are its coefficients, no p-values).
   * @default "t-test"
   */
  method?: RankMethod;
  /**
   * p-value correction for multiple testing.
   * @default "benjamini-hochberg"
   */
  corr_method?: CorrMethod;
  /**
   * Tie correction of the Wilcoxon z-scores.
   * @default false
   */
  tie_correct?: boolean;
}

/** How the cells split into the selected groups, the reference and the rest. */
export interface Design {
  /** Selected groups in scanpy's order (the `groups` list with the reference appended, or all categories). */
  readonly order: string[];
  /** Per cell: selected-group index, or `k` (a remainder group: unselected or missing). */
  readonly cellSel: Int32Array;
  /** Cells per selected group, then the remainder. */
  readonly sizes: Float64Array;
  /** Index of the reference group in `order`, or -1 for "rest". */
  readonly ireference: number;
}

function designOf(g: Grouping, groups: "all" | string[], reference: string, op: string): Design {
  let order: string[];
  if (groups === "all") order = [...g.categories];
  else {
    if (groups.length === 0) throw new Error(`${op}: "groups" is empty`);
    order = [...groups];
    if (reference !== "rest" && !order.includes(reference)) order.push(reference);
  }
  if (reference !== "rest" && !g.categories.includes(reference)) {
    throw new Error(
      `${op}: reference = ${reference} needs to be one of groupby = ${JSON.stringify(g.categories)}`,
    );
  }
  const catToSel = new Int32Array(g.categories.length).fill(-1);
  order.forEach((name, s) => {
    const c = g.categories.indexOf(name);
    if (c < 0) throw new Error(`${op}: group "${name}" is not a category (${g.categories.join(", ")})`);
    catToSel[c] = s;
  });
  const k = order.length;
  const n = g.codes.length;
  const cellSel = new Int32Array(n);
  const sizes = new Float64Array(k + 1);
  for (let i = 0; i < n; i++) {
    const c = g.codes[i]!;
    const s = c >= 0 ? catToSel[c]! : -1;
    cellSel[i] = s >= 0 ? s : k;
    sizes[cellSel[i]!]!++;
  }
  // Singlet groups make the variance undefined; scanpy refuses any selected group under 2 cells.
  const small = order.filter((_, s) => sizes[s]! < 2);
  if (small.length > 0) {
    throw new Error(
      `${op}: could not calculate statistics for groups ${small.join(", ")} since they only contain one sample`,
    );
  }
  return { order, cellSel, sizes, ireference: reference === "rest" ? -1 : order.indexOf(reference) };
}

/** Per (group, gene) sums, sums of squares and non-zero counts, groups 0..k (k = remainder). */
interface GroupStats {
  readonly s1: Float64Array;
  readonly s2: Float64Array;
  readonly nz: Float64Array;
}

/**
 * One pass over the stored values (CSR, CSC or dense) accumulating, per group and tested gene, the
 * sum, the sum of squares and the non-zero count in float64 (float32 squares are exact in float64).
 */
function groupStats(
  x: Matrix,
  cellSel: Int32Array,
  k: number,
  colSlot: Int32Array,
  mt: number,
  ctx: OpContext,
): GroupStats {
  const s1 = new Float64Array((k + 1) * mt);
  const s2 = new Float64Array((k + 1) * mt);
  const nz = new Float64Array((k + 1) * mt);
  const data = x.data as unknown as ArrayLike<number>;
  const rows = x.shape[0]!;
  const width = x.shape[1]!;
  if (x.kind === "dense") {
    for (let i = 0; i < rows; i++) {
      if ((i & 4095) === 0) ctx.signal.throwIfAborted();
      const base = cellSel[i]! * mt;
      const off = i * width;
      for (let j = 0; j < width; j++) {
        const s = colSlot[j]!;
        const v = Number(data[off + j]);
        if (s < 0 || v === 0) continue;
        s1[base + s]! += v;
        s2[base + s]! += v * v;
        nz[base + s]!++;
      }
    }
  } else if (x.kind === "csr") {
    const { indptr, indices } = x;
    for (let i = 0; i < rows; i++) {
      if ((i & 4095) === 0) ctx.signal.throwIfAborted();
      const base = cellSel[i]! * mt;
      const end = indptr[i + 1]!;
      for (let p = indptr[i]!; p < end; p++) {
        const s = colSlot[indices[p]!]!;
        const v = data[p]!;
        if (s < 0 || v === 0) continue;
        s1[base + s]! += v;
        s2[base + s]! += v * v;
        nz[base + s]!++;
      }
    }
  } else {
    const { indptr, indices } = x;
    for (let j = 0; j < width; j++) {
      const s = colSlot[j]!;
      if (s < 0) continue;
      if ((j & 255) === 0) ctx.signal.throwIfAborted();
      const end = indptr[j + 1]!;
      for (let p = indptr[j]!; p < end; p++) {
        const v = data[p]!;
        if (v === 0) continue;
        const at = cellSel[indices[p]!]! * mt + s;
        s1[at]! += v;
        s2[at]! += v * v;
        nz[at]!++;
      }
    }
  }
  return { s1, s2, nz };
}

/** Mean and unbiased variance of `n` values from their sum and sum of squares. */
function meanVar(s1: number, s2: number, n: number): [number, number] {
  const mean = s1 / n;
  const v = (s2 - s1 * mean) / (n - 1);
  return [mean, v > 0 ? v : 0];
}

/** Per-group test output over all tested genes. */
export interface TestResult {
  readonly group: number;
  readonly scores: Float64Array;
  readonly pvals: Float64Array | null;
}

function tTests(
  st: GroupStats,
  d: Design,
  mt: number,
  nCells: number,
  method: "t-test" | "t-test_overestim_var",
): TestResult[] {
  const k = d.order.length;
  const out: TestResult[] = [];
  for (let g = 0; g < k; g++) {
    if (g === d.ireference) continue;
    const n1 = d.sizes[g]!;
    const nOther = d.ireference >= 0 ? d.sizes[d.ireference]! : nCells - n1;
    const n2 = method === "t-test" ? nOther : n1;
    const scores = new Float64Array(mt);
    const pvals = new Float64Array(mt);
    for (let j = 0; j < mt; j++) {
      const [mean1, var1] = meanVar(st.s1[g * mt + j]!, st.s2[g * mt + j]!, n1);
      let r1 = 0;
      let r2 = 0;
      if (d.ireference >= 0) {
        r1 = st.s1[d.ireference * mt + j]!;
        r2 = st.s2[d.ireference * mt + j]!;
      } else {
        // The rest's sums are summed over the other groups (no total-minus-group cancellation).
        for (let h = 0; h <= k; h++) {
          if (h === g) continue;
          r1 += st.s1[h * mt + j]!;
          r2 += st.s2[h * mt + j]!;
        }
      }
      const [mean2, var2] = meanVar(r1, r2, nOther);
      const r = welchTTest(mean1, var1, n1, mean2, var2, n2);
      scores[j] = Number.isNaN(r.statistic) ? 0 : r.statistic;
      pvals[j] = Number.isNaN(r.pvalue) ? 1 : r.pvalue;
    }
    out.push({ group: g, scores, pvals });
  }
  return out;
}

/** expm1, or its version for a log1p of another base (`uns/log1p/base`), as scanpy uses for fold changes. */
export function expm1For(t: Table): (x: number) => number {
  const base = unsGet(t.uns, "log1p/base");
  if (typeof base === "number" && Number.isFinite(base)) {
    const lb = Math.log(base);
    return (x) => Math.expm1(x * lb);
  }
  return Math.expm1;
}

function float32Column(v: Float64Array | Float32Array): DenseArray {
  const a = allocArray("float32", v.length) as Float32Array;
  a.set(v);
  return { kind: "dense", dtype: "float32", shape: [v.length], data: a };
}

function float64Column(v: Float64Array): DenseArray {
  const a = allocArray("float64", v.length) as Float64Array;
  a.set(v);
  return { kind: "dense", dtype: "float64", shape: [v.length], data: a };
}

function rankIndex(n: number): string[] {
  return Array.from({ length: n }, (_, i) => String(i));
}

/**
 * Rank genes characterising groups of cells by a differential-expression test against the rest
 * (or a reference group). Expects log-transformed data. Writes `uns/<key_added>` with `params`,
 * `names`, `scores`, `pvals`, `pvals_adj`, `logfoldchanges` (and `pts`, `pts_rest` when asked).
 */
export async function rank_genes_groups(
  sd: SpatialData,
  params: RankGenesGroupsParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "rank_genes_groups";
  const t = activeTable(sd, ctx, op);
  const method = params.method ?? "t-test";
  const corr = params.corr_method ?? "benjamini-hochberg";
  const reference = params.reference ?? "rest";
  const keyAdded = params.key_added ?? "rank_genes_groups";
  if (!["t-test", "t-test_overestim_var", "wilcoxon", "logreg"].includes(method)) {
    throw new Error(`${op}: method must be one of t-test, t-test_overestim_var, wilcoxon, logreg`);
  }
  if (corr !== "benjamini-hochberg" && corr !== "bonferroni") {
    throw new Error(`${op}: correction method must be one of benjamini-hochberg, bonferroni`);
  }
  if (params.use_raw === true && !t.raw)
    throw new Error(`${op}: received \`use_raw=True\`, but \`adata.raw\` is empty`);
  const src = await expressionSource(t, params.use_raw, params.layer, op);
  const x = src.matrix;
  if (x.shape.length !== 2) throw new Error(`${op}: the expression matrix is not 2-d`);
  const nCells = x.shape[0]!;
  const width = x.shape[1]!;

  // Tested genes (mask_var).
  let genes: Int32Array;
  if (params.mask_var) {
    const col = src.varFrame.columns[params.mask_var];
    if (!col) throw new Error(`${op}: no var column "${params.mask_var}" for mask_var`);
    const keep: number[] = [];
    for (let j = 0; j < width; j++) if (columnValue(col, j) === true) keep.push(j);
    if (keep.length === 0) throw new Error(`${op}: mask_var "${params.mask_var}" selects no gene`);
    genes = Int32Array.from(keep);
  } else genes = Int32Array.from({ length: width }, (_, j) => j);
  const mt = genes.length;
  const colSlot = new Int32Array(width).fill(-1);
  genes.forEach((j, s) => {
    colSlot[j] = s;
  });
  const varNames = Array.from(genes, (j) => src.varNames[j]!);

  const grouping = groupingOf(t, params.groupby, op);
  if (grouping.codes.length !== nCells)
    throw new Error(`${op}: obs and the expression matrix disagree in length`);
  const d = designOf(grouping, params.groups ?? "all", reference, op);
  const k = d.order.length;

  ctx.progress(0, "group statistics");
  const st = groupStats(x, d.cellSel, k, colSlot, mt, ctx);
  const results =
    method === "wilcoxon"
      ? wilcoxonTests(x, genes, d, nCells, params.tie_correct ?? false, ctx)
      : method === "logreg"
        ? logregTests(x, genes, d, grouping, ctx)
        : tTests(st, d, mt, nCells, method);

  // Assemble the per-group tables (scanpy's _build_stats_dataframe).
  const nGenes = Math.min(params.n_genes ?? mt, mt);
  const expm1 = expm1For(t);
  const cols: Record<string, Record<string, DenseArray | ReturnType<typeof strings>>> = {
    names: {},
    scores: {},
    pvals: {},
    pvals_adj: {},
    logfoldchanges: {},
  };
  const groupNames: string[] = [];
  for (const res of results) {
    const g = res.group;
    const name = d.order[g]!;
    groupNames.push(name);
    const key = Float64Array.from(res.scores, (v) => (params.rankby_abs ? Math.abs(v) : v));
    const order = Array.from({ length: mt }, (_, j) => j).sort((a, b) => key[b]! - key[a]! || a - b);
    const top = order.slice(0, nGenes);
    cols.names![name] = strings(top.map((j) => varNames[j]!));
    cols.scores![name] = float32Column(Float64Array.from(top, (j) => res.scores[j]!));
    if (res.pvals) {
      const pv = res.pvals;
      const adj =
        corr === "benjamini-hochberg"
          ? benjaminiHochberg(Float64Array.from(pv, (p) => (Number.isNaN(p) ? 1 : p)))
          : Float64Array.from(pv, (p) => Math.min(p * mt, 1));
      cols.pvals![name] = float64Column(Float64Array.from(top, (j) => pv[j]!));
      cols.pvals_adj![name] = float64Column(Float64Array.from(top, (j) => adj[j]!));
    }
    if (method === "logreg") continue; // scanpy's logreg stores names and scores only
    const lfc = new Float64Array(nGenes);
    top.forEach((j, r) => {
      const n1 = d.sizes[g]!;
      const meanGroup = st.s1[g * mt + j]! / n1;
      let meanRest: number;
      if (d.ireference >= 0) meanRest = st.s1[d.ireference * mt + j]! / d.sizes[d.ireference]!;
      else {
        let s = 0;
        for (let h = 0; h <= k; h++) if (h !== g) s += st.s1[h * mt + j]!;
        meanRest = s / (nCells - n1);
      }
      lfc[r] = Math.log2((expm1(meanGroup) + 1e-9) / (expm1(meanRest) + 1e-9));
    });
    cols.logfoldchanges![name] = float32Column(lfc);
  }
  const idx = rankIndex(nGenes);
  const entries: Record<string, UnsValue> = {
    params: unsDict({
      groupby: params.groupby,
      reference,
      method,
      use_raw: src.useRaw,
      layer: params.layer ?? null,
      corr_method: corr,
    }),
  };
  const fields =
    method === "logreg" ? ["names", "scores"] : ["names", "scores", "pvals", "pvals_adj", "logfoldchanges"];
  for (const f of fields) entries[f] = dataFrame(idx, cols[f]!, "_index", groupNames);
  if (params.pts && method !== "logreg") {
    const ptsCols: Record<string, DenseArray> = {};
    const restCols: Record<string, DenseArray> = {};
    d.order.forEach((name, g) => {
      ptsCols[name] = float64Column(
        Float64Array.from({ length: mt }, (_, j) => st.nz[g * mt + j]! / d.sizes[g]!),
      );
      if (d.ireference < 0) {
        restCols[name] = float64Column(
          Float64Array.from({ length: mt }, (_, j) => {
            let s = 0;
            for (let h = 0; h <= k; h++) if (h !== g) s += st.nz[h * mt + j]!;
            return s / (nCells - d.sizes[g]!);
          }),
        );
      }
    });
    entries.pts = dataFrame(varNames, ptsCols, "_index", d.order);
    if (d.ireference < 0) entries.pts_rest = dataFrame(varNames, restCols, "_index", d.order);
  }
  ctx.progress(1);
  ctx.log(
    `${op}: ${method} on ${mt} genes, ${results.length} groups (${reference === "rest" ? "vs rest" : `vs ${reference}`}), ` +
      `added uns["${keyAdded}"]`,
  );
  return { tables: { [ctx.table]: { uns: { [keyAdded]: unsDict(entries) } } } };
}

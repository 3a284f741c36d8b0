/**
 * scanpy's differential-expression and gene-scoring tools (namespace `sc.tl`): `rank_genes_groups`
 * (t-test, t-test_overestim_var, Wilcoxon rank-sum, logreg), `filter_rank_genes_groups` and
 * `score_genes`.
 * Names, parameters, defaults and output keys follow scanpy 1.12 (`tools/_rank_genes_groups.py`,
 * `tools/_score_genes.py`).
 *
 * Results go to `uns[key_added]` as scanpy lays them out, with one difference of container: scanpy
 * stores `names`, `scores`, `pvals`, `pvals_adj` and `logfoldchanges` as numpy record arrays with one
 * field per group; here each is a DataFrame with one column per group (rows = rank, index "0", "1",
 * …), which is how an h5ad/zarr reader presents such a record array too. `pts`/`pts_rest` are
 * DataFrames indexed by gene, as in scanpy.
 */
import {
  allocArray,
  type DenseArray,
  type Matrix,
  type SparseMatrix,
  strings,
} from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import { columnValue, type DataFrame, dataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";
import { isUnsDict, type UnsDict, type UnsValue, unsDict, unsGet } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { Rng } from "../../sdk/math/rng.js";
import { switchCompression } from "../../sdk/math/sparse.js";
import { benjaminiHochberg, normalSf, tieCorrection, welchTTest } from "../../sdk/math/stats.js";
import { expressionSource, type Grouping, groupingOf, matrixColumns } from "./get.js";
import { activeTable } from "./pp-matrix.js";

// ---------------------------------------------------------------------------------------------
// rank_genes_groups
// ---------------------------------------------------------------------------------------------

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
interface Design {
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
interface TestResult {
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

/**
 * One column's non-zeros, gathered for ranking: a sort key per value and the value's group. Float32
 * data is keyed by its bits made order-preserving as unsigned integers (so equal keys are equal
 * values, and keys ≥ 2^31 are the positive values); other dtypes keep the float64 value.
 */
interface ColumnScratch {
  keys: Uint32Array;
  grp: Int32Array;
  keys2: Uint32Array;
  grp2: Int32Array;
  vals: Float64Array;
  order: Uint32Array;
  hist: Uint32Array;
}

function columnScratch(n: number, float32: boolean): ColumnScratch {
  const m = Math.max(1, n);
  return {
    keys: new Uint32Array(float32 ? m : 0),
    grp: new Int32Array(m),
    keys2: new Uint32Array(float32 ? m : 0),
    grp2: new Int32Array(float32 ? m : 0),
    vals: new Float64Array(float32 ? 0 : m),
    order: new Uint32Array(float32 ? 0 : m),
    hist: new Uint32Array(1 << 16),
  };
}

/**
 * LSD radix sort of `n` (key, group) pairs by key: three 11-bit passes (two 16-bit passes for long
 * columns); a pass whose digit is the same for every key is skipped. Returns the buffers holding the
 * sorted pairs (the scratch's own or its second set).
 */
function radixSortPairs(sc: ColumnScratch, n: number): [Uint32Array, Int32Array] {
  let ka = sc.keys;
  let ga = sc.grp;
  let kb = sc.keys2;
  let gb = sc.grp2;
  const bits = n > 50_000 ? 16 : 11;
  const size = 1 << bits;
  const mask = size - 1;
  const hist = sc.hist;
  for (let shift = 0; shift < 32; shift += bits) {
    hist.fill(0, 0, size);
    for (let i = 0; i < n; i++) hist[(ka[i]! >>> shift) & mask]!++;
    if (hist[(ka[0]! >>> shift) & mask] === n) continue;
    let sum = 0;
    for (let b = 0; b < size; b++) {
      const c = hist[b]!;
      hist[b] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const key = ka[i]!;
      const at = hist[(key >>> shift) & mask]!++;
      kb[at] = key;
      gb[at] = ga[i]!;
    }
    const tk = ka;
    ka = kb;
    kb = tk;
    const tg = ga;
    ga = gb;
    gb = tg;
  }
  return [ka, ga];
}

/** Column access for the Wilcoxon test: CSC (float32 read as bits), or a dense matrix read with a stride. */
interface ColumnSource {
  /** Whether values are float32 (keyed by bits) rather than float64 values. */
  readonly float32: boolean;
  /** Longest column's stored values (scratch size). */
  readonly longest: number;
  /**
   * Gather the non-zeros of column `j` (only cells of groups `a` or `b` when `a` ≥ 0) with their
   * groups; returns the count.
   */
  gather(j: number, sc: ColumnScratch, cellSel: Int32Array, a: number, b: number): number;
}

/**
 * Float32 CSR with sorted column indices → per-gene runs of (sort key, group), a block of genes at a
 * time: what `switchCompression` would give for those columns, but holding the order-preserving
 * keys and the group codes the ranking reads (5 bytes a non-zero, ±0 dropped). Each row keeps a
 * cursor that advances block by block, so a block costs one pass over its own non-zeros, and only
 * one block's buffers (about `blockCols` × the longest column) exist at a time.
 */
class CsrKeyBlocks {
  private readonly cursor: Float64Array;
  private readonly bits: Uint32Array;
  /** Non-zeros per tested gene slot. */
  readonly counts: Float64Array;
  /** Start of each slot's run in `keys`/`grp` (valid for the loaded block), by slot. */
  readonly start: Float64Array;
  keys: Uint32Array = new Uint32Array(0);
  grp: Uint8Array | Int32Array = new Uint8Array(0);
  /** Columns [lo, hi) are loaded. */
  lo = 0;
  hi = 0;

  constructor(
    private readonly x: SparseMatrix,
    private readonly cellSel: Int32Array,
    private readonly colSlot: Int32Array,
    mt: number,
    private readonly blockCols: number,
    private readonly smallGroups: boolean,
  ) {
    const data = x.data as Float32Array;
    this.bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
    this.cursor = Float64Array.from(x.indptr.subarray(0, x.shape[0]) as ArrayLike<number>);
    this.counts = new Float64Array(mt);
    this.start = new Float64Array(mt + 1);
    const { indices } = x;
    const bits = this.bits;
    for (let p = 0; p < indices.length; p++) {
      const s = colSlot[indices[p]!]!;
      if (s >= 0 && (bits[p]! & 0x7fffffff) !== 0) this.counts[s]!++;
    }
  }

  /** Load the block of columns holding column `j` (blocks are visited in increasing order). */
  load(j: number): void {
    const x = this.x;
    const colSlot = this.colSlot;
    const cellSel = this.cellSel;
    const bits = this.bits;
    const cursor = this.cursor;
    const counts = this.counts;
    const start = this.start;
    const width = x.shape[1];
    this.lo = this.hi;
    while (this.lo + this.blockCols <= j) this.lo += this.blockCols; // skip blocks with no tested gene
    const lo = this.lo;
    const hi = Math.min(width, lo + this.blockCols);
    this.hi = hi;
    let total = 0;
    for (let c = lo; c < hi; c++) {
      const s = colSlot[c]!;
      if (s < 0) continue;
      start[s] = total;
      total += counts[s]!;
    }
    if (this.keys.length < total) {
      this.keys = new Uint32Array(total);
      this.grp = this.smallGroups ? new Uint8Array(total) : new Int32Array(total);
    }
    const next = start.slice();
    const { indptr, indices } = x;
    const { keys, grp } = this;
    for (let i = 0; i < x.shape[0]; i++) {
      const g = cellSel[i]!;
      const end = indptr[i + 1]!;
      let p = cursor[i]!;
      for (; p < end; p++) {
        const c = indices[p]!;
        if (c >= hi) break;
        if (c < lo) continue; // columns of skipped blocks
        const s = colSlot[c]!;
        const u = bits[p]!;
        if (s < 0 || (u & 0x7fffffff) === 0) continue;
        const at = next[s]!++;
        // Order-preserving key: flip all bits of negatives, only the sign bit of positives.
        keys[at] = (u ^ ((u >> 31) | 0x80000000)) >>> 0;
        grp[at] = g;
      }
      cursor[i] = p;
    }
  }
}

/** Whether every row's column indices are strictly increasing (canonical CSR). */
function hasSortedIndices(x: SparseMatrix): boolean {
  const { indptr, indices } = x;
  for (let i = 0; i < x.shape[0]; i++) {
    const end = indptr[i + 1]!;
    for (let p = indptr[i]! + 1; p < end; p++) if (indices[p]! <= indices[p - 1]!) return false;
  }
  return true;
}

function columnSource(
  x: Matrix,
  cellSel: Int32Array,
  colSlot: Int32Array,
  mt: number,
  ctx: OpContext,
): ColumnSource {
  if (x.kind === "dense") {
    const rows = x.shape[0]!;
    const width = x.shape[1]!;
    const data = x.data as unknown as ArrayLike<number>;
    return {
      float32: false,
      longest: rows,
      gather(j, sc, cellSel, a, b) {
        let n = 0;
        for (let i = 0; i < rows; i++) {
          const v = Number(data[i * width + j]);
          if (v === 0) continue;
          const s = cellSel[i]!;
          if (a >= 0 && s !== a && s !== b) continue;
          sc.vals[n] = v;
          sc.grp[n++] = s;
        }
        return n;
      },
    };
  }
  if (x.kind === "csr" && x.data instanceof Float32Array && hasSortedIndices(x)) {
    let maxSel = 0;
    for (let i = 0; i < cellSel.length; i++) if (cellSel[i]! > maxSel) maxSel = cellSel[i]!;
    const blocks = new CsrKeyBlocks(x, cellSel, colSlot, mt, 128, maxSel < 256);
    let longest = 0;
    for (let s = 0; s < mt; s++) longest = Math.max(longest, blocks.counts[s]!);
    return {
      float32: true,
      longest,
      gather(j, sc, _cellSel, a, b) {
        if (j >= blocks.hi) {
          ctx.signal.throwIfAborted();
          blocks.load(j);
        }
        const slot = colSlot[j]!;
        const begin = blocks.start[slot]!;
        const end = begin + blocks.counts[slot]!;
        const { keys, grp } = blocks;
        if (a < 0) {
          sc.keys.set(keys.subarray(begin, end));
          for (let p = begin, q = 0; p < end; p++, q++) sc.grp[q] = grp[p]!;
          return end - begin;
        }
        let n = 0;
        for (let p = begin; p < end; p++) {
          const s = grp[p]!;
          if (s !== a && s !== b) continue;
          sc.keys[n] = keys[p]!;
          sc.grp[n++] = s;
        }
        return n;
      },
    };
  }
  const csc = x.kind === "csc" ? x : switchCompression(x);
  const { indptr, indices } = csc;
  let longest = 0;
  for (let j = 0; j < csc.shape[1]; j++) longest = Math.max(longest, indptr[j + 1]! - indptr[j]!);
  if (csc.data instanceof Float32Array) {
    const bits = new Uint32Array(csc.data.buffer, csc.data.byteOffset, csc.data.length);
    return {
      float32: true,
      longest,
      gather(j, sc, cellSel, a, b) {
        const { keys, grp } = sc;
        let n = 0;
        const end = indptr[j + 1]!;
        for (let p = indptr[j]!; p < end; p++) {
          const u = bits[p]!;
          if ((u & 0x7fffffff) === 0) continue; // ±0
          const s = cellSel[indices[p]!]!;
          if (a >= 0 && s !== a && s !== b) continue;
          keys[n] = (u ^ ((u >> 31) | 0x80000000)) >>> 0;
          grp[n++] = s;
        }
        return n;
      },
    };
  }
  const data = csc.data as unknown as ArrayLike<number>;
  return {
    float32: false,
    longest,
    gather(j, sc, cellSel, a, b) {
      let n = 0;
      const end = indptr[j + 1]!;
      for (let p = indptr[j]!; p < end; p++) {
        const v = Number(data[p]);
        if (v === 0) continue;
        const s = cellSel[indices[p]!]!;
        if (a >= 0 && s !== a && s !== b) continue;
        sc.vals[n] = v;
        sc.grp[n++] = s;
      }
      return n;
    },
  };
}

/**
 * Rank the `n` gathered non-zeros among `total` cells whose other `total - n` values are zero (one
 * tie block between the negative and the positive values), adding each value's average rank to its
 * group's `rankSum` and counting it in `nzCount`. Returns Σ(t³ - t) over all tie blocks and the
 * zero block's average rank.
 */
function rankColumn(
  src: ColumnSource,
  sc: ColumnScratch,
  n: number,
  total: number,
  rankSum: Float64Array,
  nzCount: Float64Array,
): { tieSum: number; zeroRank: number } {
  const zeros = total - n;
  let tieSum = zeros * zeros * zeros - zeros;
  let nneg = 0;
  if (src.float32) {
    const [keys, grp] = n > 0 ? radixSortPairs(sc, n) : [sc.keys, sc.grp];
    while (nneg < n && keys[nneg]! < 0x80000000) nneg++;
    let i = 0;
    while (i < n) {
      const key = keys[i]!;
      let j = i + 1;
      while (j < n && keys[j] === key) j++;
      const r = (i + j + 1) / 2 + (key >= 0x80000000 ? zeros : 0);
      for (let q = i; q < j; q++) {
        const g = grp[q]!;
        rankSum[g]! += r;
        nzCount[g]!++;
      }
      const t = j - i;
      tieSum += t * t * t - t;
      i = j;
    }
  } else {
    const { vals, order, grp } = sc;
    for (let i = 0; i < n; i++) order[i] = i;
    order.subarray(0, n).sort((a, b) => vals[a]! - vals[b]!);
    while (nneg < n && vals[order[nneg]!]! < 0) nneg++;
    let i = 0;
    while (i < n) {
      const v = vals[order[i]!]!;
      let j = i + 1;
      while (j < n && vals[order[j]!] === v) j++;
      const r = (i + j + 1) / 2 + (v > 0 ? zeros : 0);
      for (let q = i; q < j; q++) {
        const g = grp[order[q]!]!;
        rankSum[g]! += r;
        nzCount[g]!++;
      }
      const t = j - i;
      tieSum += t * t * t - t;
      i = j;
    }
  }
  return { tieSum, zeroRank: nneg + (zeros + 1) / 2 };
}

/**
 * Wilcoxon rank-sum z-scores per gene, column by column: the non-zeros are sorted (a radix sort of
 * float32 bits), the implicit zeros form one tie block placed between the negative and positive
 * values, and each group's rank sum adds the zero block's average rank once per zero cell of the
 * group — no column is densified.
 */
function wilcoxonTests(
  x: Matrix,
  genes: Int32Array,
  d: Design,
  nCells: number,
  tieCorrect: boolean,
  ctx: OpContext,
): TestResult[] {
  const k = d.order.length;
  const mt = genes.length;
  const colSlot = new Int32Array(x.shape[1]!).fill(-1);
  genes.forEach((j, s) => {
    colSlot[j] = s;
  });
  const src = columnSource(x, d.cellSel, colSlot, mt, ctx);
  const sc = columnScratch(src.longest, src.float32);
  const ref = d.ireference;
  const targets = d.order.map((_, g) => g).filter((g) => g !== ref);
  const slotOf = new Int32Array(k + 1).fill(-1);
  targets.forEach((g, t) => {
    slotOf[g] = t;
  });
  const scores = targets.map(() => new Float64Array(mt));
  const rankSum = new Float64Array(k + 1);
  const nzCount = new Float64Array(k + 1);
  for (let c = 0; c < mt; c++) {
    if ((c & 63) === 0) {
      ctx.signal.throwIfAborted();
      ctx.progress(c / mt);
    }
    const j = genes[c]!;
    // vs rest: one ranking over all cells serves every group; vs a reference: one per group.
    const passes = ref < 0 ? [-1] : targets;
    for (const pass of passes) {
      const n = src.gather(j, sc, d.cellSel, pass, ref);
      const total = pass < 0 ? nCells : d.sizes[pass]! + d.sizes[ref]!;
      rankSum.fill(0);
      nzCount.fill(0);
      const { tieSum, zeroRank } = rankColumn(src, sc, n, total, rankSum, nzCount);
      const tc = tieCorrect ? tieCorrection(tieSum, total) : 1;
      const forGroups = pass < 0 ? targets : [pass];
      for (const g of forGroups) {
        const n1 = d.sizes[g]!;
        const n2 = total - n1;
        const R = rankSum[g]! + zeroRank * (n1 - nzCount[g]!);
        const std = Math.sqrt((tc * n1 * n2 * (total + 1)) / 12);
        const z = (R - (n1 * (total + 1)) / 2) / std;
        scores[slotOf[g]!]![c] = Number.isNaN(z) ? 0 : z;
      }
    }
  }
  return targets.map((g, t) => {
    const s = scores[t]!;
    const p = new Float64Array(mt);
    for (let c = 0; c < mt; c++) p[c] = 2 * normalSf(Math.abs(s[c]!));
    return { group: g, scores: s, pvals: p };
  });
}

/**
 * Rows of a matrix as sparse (column, value) runs: CSR as is, CSC transposed, dense filtered.
 */
function rowView(x: Matrix): { indptr: Float64Array; indices: Int32Array; data: Float64Array } {
  if (x.kind !== "dense") {
    const r = x.kind === "csr" ? x : switchCompression(x);
    // Monomorphic float64 copies keep the optimiser's inner loops on one array type.
    return {
      indptr: Float64Array.from(r.indptr as ArrayLike<number>),
      indices: Int32Array.from(r.indices as ArrayLike<number>),
      data: Float64Array.from(r.data as unknown as ArrayLike<number>),
    };
  }
  const [rows, width] = [x.shape[0]!, x.shape[1]!];
  const src = x.data as unknown as ArrayLike<number>;
  const indptr = new Float64Array(rows + 1);
  const idx: number[] = [];
  const val: number[] = [];
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < width; j++) {
      const v = Number(src[i * width + j]);
      if (v !== 0) {
        idx.push(j);
        val.push(v);
      }
    }
    indptr[i + 1] = idx.length;
  }
  return { indptr, indices: Int32Array.from(idx), data: Float64Array.from(val) };
}

/**
 * L2-penalised logistic regression as scikit-learn's `LogisticRegression()` defaults fit it (C = 1,
 * intercept unpenalised, multinomial softmax over all classes — or one logit for two classes —
 * minimising mean log-loss + ‖W‖²/(2·C·n)), by L-BFGS (10 pairs, Armijo backtracking) stopped when
 * every gradient entry is below `tol` or after `maxIter` iterations, as scikit-learn's lbfgs stops.
 * `y` holds a class per row (-1 = row left out). Returns the coefficients, gene-major (`w[j·K + k]`).
 * @internal
 */
export function fitLogisticRegression(
  x: Matrix,
  y: Int32Array,
  nClasses: number,
  genes: Int32Array,
  opts: { C?: number; maxIter?: number; tol?: number; signal?: AbortSignal } = {},
): {
  coef: Float64Array;
  intercept: Float64Array;
  iterations: number;
  evaluations: number;
  converged: boolean;
} {
  const C = opts.C ?? 1;
  const maxIter = opts.maxIter ?? 100;
  const tol = opts.tol ?? 1e-4;
  const rows = rowView(x);
  const width = x.shape[1]!;
  const slot = new Int32Array(width).fill(-1);
  genes.forEach((j, s) => {
    slot[j] = s;
  });
  const p = genes.length;
  const K = nClasses === 2 ? 1 : nClasses; // binary: one logit for the second class
  const usedList: number[] = [];
  for (let i = 0; i < y.length; i++) if (y[i]! >= 0) usedList.push(i);
  const used = Int32Array.from(usedList);
  const n = used.length;
  const { indptr, indices, data } = rows;
  const dim = p * K + K;
  const lambda = 1 / (C * n);
  const z = new Float64Array(K);
  const pr = new Float64Array(K);

  /** Objective and gradient at θ (W gene-major, then the intercepts). */
  let evaluations = 0;
  const evaluate = (theta: Float64Array, grad: Float64Array): number => {
    evaluations++;
    grad.fill(0);
    let loss = 0;
    const b = p * K;
    for (let u = 0; u < n; u++) {
      const i = used[u]!;
      for (let k = 0; k < K; k++) z[k] = theta[b + k]!;
      const start = indptr[i]!;
      const end = indptr[i + 1]!;
      for (let q = start; q < end; q++) {
        const s = slot[indices[q]!]!;
        if (s < 0) continue;
        const v = data[q]!;
        const o = s * K;
        for (let k = 0; k < K; k++) z[k]! += v * theta[o + k]!;
      }
      const yi = y[i]!;
      if (K === 1) {
        const t = z[0]!;
        // log(1 + e^t) - y·t, stably
        loss += (t > 0 ? t + Math.log1p(Math.exp(-t)) : Math.log1p(Math.exp(t))) - (yi === 1 ? t : 0);
        pr[0] = 1 / (1 + Math.exp(-t)) - (yi === 1 ? 1 : 0);
      } else {
        let mx = Number.NEGATIVE_INFINITY;
        for (let k = 0; k < K; k++) if (z[k]! > mx) mx = z[k]!;
        let se = 0;
        for (let k = 0; k < K; k++) {
          pr[k] = Math.exp(z[k]! - mx);
          se += pr[k]!;
        }
        loss += mx + Math.log(se) - z[yi]!;
        for (let k = 0; k < K; k++) pr[k] = pr[k]! / se - (k === yi ? 1 : 0);
      }
      for (let k = 0; k < K; k++) grad[b + k]! += pr[k];
      for (let q = start; q < end; q++) {
        const s = slot[indices[q]!]!;
        if (s < 0) continue;
        const v = data[q]!;
        const o = s * K;
        for (let k = 0; k < K; k++) grad[o + k]! += pr[k]! * v;
      }
    }
    let reg = 0;
    for (let q = 0; q < b; q++) {
      reg += theta[q]! * theta[q]!;
      grad[q] = grad[q]! / n + lambda * theta[q]!;
    }
    for (let k = 0; k < K; k++) grad[b + k] = grad[b + k]! / n;
    return loss / n + 0.5 * lambda * reg;
  };

  const m = 10;
  const S: Float64Array[] = [];
  const Yv: Float64Array[] = [];
  const rho: number[] = [];
  const theta = new Float64Array(dim);
  const g = new Float64Array(dim);
  let f = evaluate(theta, g);
  const dir = new Float64Array(dim);
  const next = new Float64Array(dim);
  const gNext = new Float64Array(dim);
  const alpha = new Float64Array(m);
  const maxAbs = (a: Float64Array) => a.reduce((mx, v) => Math.max(mx, Math.abs(v)), 0);
  let iterations = 0;
  let converged = maxAbs(g) <= tol;
  while (!converged && iterations < maxIter) {
    opts.signal?.throwIfAborted();
    // Two-loop recursion: dir = -H·g.
    dir.set(g);
    for (let h = S.length - 1; h >= 0; h--) {
      let a = 0;
      for (let q = 0; q < dim; q++) a += S[h]![q]! * dir[q]!;
      a *= rho[h]!;
      alpha[h] = a;
      for (let q = 0; q < dim; q++) dir[q]! -= a * Yv[h]![q]!;
    }
    if (S.length > 0) {
      const last = S.length - 1;
      let sy = 0;
      let yy = 0;
      for (let q = 0; q < dim; q++) {
        sy += S[last]![q]! * Yv[last]![q]!;
        yy += Yv[last]![q]! * Yv[last]![q]!;
      }
      const gamma = sy / yy;
      for (let q = 0; q < dim; q++) dir[q]! *= gamma;
    } else {
      const norm = Math.sqrt(g.reduce((s2, v) => s2 + v * v, 0));
      for (let q = 0; q < dim; q++) dir[q]! /= Math.max(norm, 1);
    }
    for (let h = 0; h < S.length; h++) {
      let b = 0;
      for (let q = 0; q < dim; q++) b += Yv[h]![q]! * dir[q]!;
      b *= rho[h]!;
      for (let q = 0; q < dim; q++) dir[q]! += S[h]![q]! * (alpha[h]! - b);
    }
    for (let q = 0; q < dim; q++) dir[q] = -dir[q]!;
    let slope = 0;
    for (let q = 0; q < dim; q++) slope += dir[q]! * g[q]!;
    if (!(slope < 0)) {
      // Not a descent direction (numerical trouble): restart from steepest descent.
      S.length = 0;
      Yv.length = 0;
      rho.length = 0;
      for (let q = 0; q < dim; q++) dir[q] = -g[q]!;
      slope = -g.reduce((s2, v) => s2 + v * v, 0);
    }
    let step = 1;
    let fNext = f;
    for (let ls = 0; ls < 50; ls++) {
      for (let q = 0; q < dim; q++) next[q] = theta[q]! + step * dir[q]!;
      fNext = evaluate(next, gNext);
      if (fNext <= f + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    const sNew = new Float64Array(dim);
    const yNew = new Float64Array(dim);
    let sy = 0;
    for (let q = 0; q < dim; q++) {
      sNew[q] = next[q]! - theta[q]!;
      yNew[q] = gNext[q]! - g[q]!;
      sy += sNew[q]! * yNew[q]!;
    }
    const progress = Math.abs(f - fNext) / Math.max(Math.abs(f), Math.abs(fNext), 1);
    theta.set(next);
    g.set(gNext);
    f = fNext;
    iterations++;
    if (sy > 1e-12) {
      S.push(sNew);
      Yv.push(yNew);
      rho.push(1 / sy);
      if (S.length > m) {
        S.shift();
        Yv.shift();
        rho.shift();
      }
    }
    converged = maxAbs(g) <= tol;
    if (progress <= 64 * Number.EPSILON) break; // scipy's ftol = 64·eps: no further decrease possible
  }
  return {
    coef: theta.subarray(0, p * K),
    intercept: theta.subarray(p * K),
    iterations,
    evaluations,
    converged,
  };
}

/**
 * scanpy's `logreg`: one L2 logistic regression of the cells' group on the genes (cells of the
 * selected groups only); each group's scores are its coefficients. With two groups scikit-learn
 * fits one logit (for the group of the later category), reported under the first group only.
 */
function logregTests(x: Matrix, genes: Int32Array, d: Design, g: Grouping, ctx: OpContext): TestResult[] {
  const k = d.order.length;
  if (k === 1) throw new Error("rank_genes_groups: cannot perform logistic regression on a single cluster");
  const mt = genes.length;
  const catOf = d.order.map((name) => g.categories.indexOf(name));
  let y: Int32Array;
  if (k === 2) {
    const positive = catOf[0]! > catOf[1]! ? 0 : 1; // scikit-learn's classes_ are sorted: the later code is positive
    y = Int32Array.from(d.cellSel, (s) => (s >= k ? -1 : s === positive ? 1 : 0));
  } else y = Int32Array.from(d.cellSel, (s) => (s >= k ? -1 : s));
  const fit = fitLogisticRegression(x, y, k, genes, { signal: ctx.signal });
  ctx.log(
    `rank_genes_groups: logreg ${fit.converged ? "converged" : "stopped"} after ${fit.iterations} L-BFGS iterations ` +
      `(${fit.evaluations} evaluations of the loss)`,
  );
  const K = k === 2 ? 1 : k;
  const groups = k === 2 ? [0] : d.order.map((_, i) => i);
  return groups.map((grp) => ({
    group: grp,
    scores: Float64Array.from({ length: mt }, (_, j) => fit.coef[j * K + (k === 2 ? 0 : grp)]!),
    pvals: null,
  }));
}

/** expm1, or its version for a log1p of another base (`uns/log1p/base`), as scanpy uses for fold changes. */
function expm1For(t: Table): (x: number) => number {
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

// ---------------------------------------------------------------------------------------------
// filter_rank_genes_groups
// ---------------------------------------------------------------------------------------------

/** Params of `filter_rank_genes_groups`. */
export interface FilterRankGenesGroupsParams {
  /**
   * uns key of the `rank_genes_groups` results.
   * @default "rank_genes_groups"
   */
  key?: string;
  /** obs column of the groups (default: the one the results were computed with). */
  groupby?: string;
  /** Use `raw` (default: as the results were computed). */
  use_raw?: boolean;
  /** Layer to read expression from. */
  layer?: string;
  /**
   * uns key the filtered results are stored under.
   * @default "rank_genes_groups_filtered"
   */
  key_added?: string;
  /**
   * Keep genes expressed in more than this fraction of the group's cells.
   * @default 0.25
   */
  min_in_group_fraction?: number;
  /**
   * Keep genes whose log2 fold change is above this.
   * @default 1
   */
  min_fold_change?: number;
  /**
   * Keep genes expressed in less than this fraction of the other cells.
   * @default 0.5
   */
  max_out_group_fraction?: number;
  /**
   * Compare the absolute log2 fold change with `min_fold_change`.
   * @default false
   */
  compare_abs?: boolean;
}

/**
 * Filter the genes of `rank_genes_groups` results by log fold change and by the fractions of cells
 * expressing them inside and outside each group; genes that fail get a missing name (scanpy's NaN),
 * keeping the tables' shape. Writes `uns/<key_added>`.
 */
export async function filter_rank_genes_groups(
  sd: SpatialData,
  params: FilterRankGenesGroupsParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "filter_rank_genes_groups";
  const t = activeTable(sd, ctx, op);
  const key = params.key ?? "rank_genes_groups";
  const entry = t.uns.entries[key];
  if (!isUnsDict(entry)) throw new Error(`${op}: no rank_genes_groups results in uns "${key}"`);
  const prm = entry.entries.params;
  const pget = (f: string): UnsValue | undefined => (isUnsDict(prm) ? prm.entries[f] : undefined);
  const groupby = params.groupby ?? (pget("groupby") as string | undefined);
  if (typeof groupby !== "string")
    throw new Error(`${op}: uns "${key}/params/groupby" is missing; pass groupby`);
  const useRaw = params.use_raw ?? (params.layer ? false : pget("use_raw") === true);
  const namesV = entry.entries.names;
  if (!namesV || typeof namesV !== "object" || namesV.kind !== "dataframe")
    throw new Error(`${op}: uns "${key}/names" is missing or not a per-group frame`);
  const namesFrame = namesV;
  const sameParams =
    pget("groupby") === groupby && pget("reference") === "rest" && pget("use_raw") === useRaw;
  const lfcV = entry.entries.logfoldchanges;
  const useLogfolds = sameParams && !!lfcV && typeof lfcV === "object" && lfcV.kind === "dataframe";
  const ptsV = entry.entries.pts;
  const restV = entry.entries.pts_rest;
  const useFraction =
    sameParams &&
    !!ptsV &&
    typeof ptsV === "object" &&
    ptsV.kind === "dataframe" &&
    !!restV &&
    typeof restV === "object" &&
    restV.kind === "dataframe";

  const grouping = groupingOf(t, groupby, op);
  let src: Awaited<ReturnType<typeof expressionSource>> | null = null;
  if (!useLogfolds || !useFraction) src = await expressionSource(t, useRaw, params.layer, op);
  const expm1 = expm1For(t);
  const minIn = params.min_in_group_fraction ?? 0.25;
  const maxOut = params.max_out_group_fraction ?? 0.5;
  const minFc = params.min_fold_change ?? 1;
  const newNames: Record<string, ReturnType<typeof strings>> = {};
  for (const group of namesFrame.columnOrder) {
    const col = namesFrame.columns[group]!;
    const geneNames: (string | null)[] = [];
    for (let r = 0; r < namesFrame.index.values.length; r++) {
      const v = columnValue(col, r);
      geneNames.push(v === null ? null : String(v));
    }
    const n = geneNames.length;
    const fin = new Float64Array(n);
    const fout = new Float64Array(n);
    const fc = new Float64Array(n);
    if (src) {
      const at = new Map(src.varNames.map((g, i) => [g, i]));
      const cat = grouping.categories.indexOf(group);
      const cols = geneNames.map((g) => (g === null ? -1 : (at.get(g) ?? -1)));
      const present = cols.filter((c) => c >= 0);
      const values = matrixColumns(src.matrix, present);
      let p = 0;
      let nIn = 0;
      for (const c of grouping.codes) if (c === cat) nIn++;
      const nOut = grouping.codes.length - nIn;
      cols.forEach((c, r) => {
        if (c < 0) {
          fin[r] = fout[r] = fc[r] = Number.NaN;
          return;
        }
        const v = values[p++]!;
        let sIn = 0;
        let sOut = 0;
        let zIn = 0;
        let zOut = 0;
        for (let i = 0; i < v.length; i++) {
          const x = v[i]!;
          if (grouping.codes[i] === cat) {
            sIn += x;
            if (x !== 0) zIn++;
          } else {
            sOut += x;
            if (x !== 0) zOut++;
          }
        }
        fin[r] = zIn / nIn;
        fout[r] = zOut / nOut;
        fc[r] = Math.log2((expm1(sIn / nIn) + 1e-9) / (expm1(sOut / nOut) + 1e-9));
      });
    }
    if (useFraction) {
      const ptsF = ptsV as DataFrame;
      const restF = restV as DataFrame;
      const at = new Map(ptsF.index.values.map((g, i) => [g, i]));
      geneNames.forEach((g, r) => {
        const i = g === null ? undefined : at.get(g);
        fin[r] = i === undefined ? Number.NaN : Number(columnValue(ptsF.columns[group]!, i));
        fout[r] = i === undefined ? Number.NaN : Number(columnValue(restF.columns[group]!, i));
      });
    }
    if (useLogfolds) {
      const lf = (lfcV as DataFrame).columns[group];
      for (let r = 0; r < n; r++) fc[r] = lf ? Number(columnValue(lf, r)) : Number.NaN;
    }
    newNames[group] = strings(
      geneNames.map((g, r) => {
        const f = params.compare_abs ? Math.abs(fc[r]!) : fc[r]!;
        return fin[r]! > minIn && fout[r]! < maxOut && f > minFc ? g : null;
      }),
    );
  }
  const out: Record<string, UnsValue> = { ...entry.entries };
  out.names = dataFrame(namesFrame.index, newNames, namesFrame.indexName, namesFrame.columnOrder);
  const keyAdded = params.key_added ?? "rank_genes_groups_filtered";
  return { tables: { [ctx.table]: { uns: { [keyAdded]: unsDict(out) as UnsDict } } } };
}

// ---------------------------------------------------------------------------------------------
// score_genes
// ---------------------------------------------------------------------------------------------

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

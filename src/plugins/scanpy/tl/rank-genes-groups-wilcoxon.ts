/**
 * The Wilcoxon rank-sum test of `rank_genes_groups`: each gene's column ranked once (radix sort of
 * value/cell pairs, read from CSR in column blocks without transposing the matrix), then every group's
 * rank sum against the rest or a reference, with scanpy's tie correction.
 */
import type { Matrix, SparseMatrix } from "../../../sdk/data/arrays.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { switchCompression } from "../../../sdk/math/sparse.js";
import { normalSf, tieCorrection } from "../../../sdk/math/stats.js";
import type { Design, TestResult } from "./rank-genes-groups.js";

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
export function wilcoxonTests(
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

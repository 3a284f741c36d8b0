/**
 * Kernel of `calculate_qc_metrics`: the share of each cell's counts held by its top-n genes
 * (`pct_counts_in_top_<n>_genes`), for several n at once, in O(non-zeros) per cell with a chain of
 * selections (largest n first, each next selection inside the previous prefix) instead of a sort.
 */
import type { SparseMatrix } from "../../sdk/data/arrays.js";
import { numberData } from "../../sdk/math/csr.js";

/** Reorder `a[lo..hi)` so that its `k` largest values come first (in any order). */
function selectLargest(a: Float64Array, lo: number, hi: number, k: number): void {
  // Hoare-partition quickselect for the k-th largest (descending order).
  let l = lo;
  let r = hi - 1;
  const target = lo + k - 1;
  while (l < r) {
    const pivot = a[(l + r) >> 1]!;
    let i = l;
    let j = r;
    while (i <= j) {
      while (a[i]! > pivot) i++;
      while (a[j]! < pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) r = j;
    else if (target >= i) l = i;
    else return;
  }
}

const COUNT_MAX = 4096;
const histogram = new Int32Array(COUNT_MAX + 1);

/**
 * Sums of the top-n values of a row of small non-negative integers (raw counts), by counting: one
 * pass over the row and one over the value range. Returns false (and leaves `sums` alone) when the
 * row holds other values, for the selection path to handle.
 */
function countTop(
  data: ArrayLike<number>,
  a: number,
  len: number,
  total: number,
  ns: readonly number[],
  sums: Float64Array,
): boolean {
  let max = 0;
  for (let k = 0; k < len; k++) {
    const v = data[a + k]!;
    if (!(v >= 0 && v <= COUNT_MAX) || v !== Math.floor(v)) return false;
    if (v > max) max = v;
  }
  for (let k = 0; k < len; k++) histogram[data[a + k]!]!++;
  // Walk down from the largest value, closing each n as the running count passes it.
  let q = 0;
  let taken = 0;
  let sum = 0;
  for (let v = max; v > 0 && q < ns.length; v--) {
    let c = histogram[v]!;
    while (c > 0 && q < ns.length) {
      const need = ns[q]! - taken;
      if (c >= need) {
        sum += need * v;
        taken += need;
        c -= need;
        sums[q++] = sum;
      } else {
        sum += c * v;
        taken += c;
        c = 0;
      }
    }
  }
  for (; q < ns.length; q++) sums[q] = total;
  for (let v = 0; v <= max; v++) histogram[v] = 0;
  return true;
}

/**
 * For each row of a CSR matrix and each n of `ns` (ascending, ≥ 1), the fraction of the row's total
 * in its n largest values. Returns one Float64Array per n (NaN where a row sums to zero).
 */
export function topSegmentProportions(
  m: SparseMatrix,
  ns: readonly number[],
  signal?: AbortSignal,
): Float64Array[] {
  const rows = m.shape[0];
  const data = numberData(m.data);
  const { indptr } = m;
  const out = ns.map(() => new Float64Array(rows));
  let maxLen = 0;
  for (let i = 0; i < rows; i++) maxLen = Math.max(maxLen, indptr[i + 1]! - indptr[i]!);
  const scratch = new Float64Array(maxLen);
  const sums = new Float64Array(ns.length);
  for (let i = 0; i < rows; i++) {
    if (signal && (i & 0x3fff) === 0) signal.throwIfAborted();
    const a = indptr[i]!;
    const len = indptr[i + 1]! - a;
    let total = 0;
    for (let k = 0; k < len; k++) {
      const v = data[a + k]!;
      scratch[k] = v;
      total += v;
    }
    // Largest n first: after selecting the n largest into the prefix, smaller n select inside it.
    if (countTop(data, a, len, total, ns, sums)) {
      for (let q = 0; q < ns.length; q++) out[q]![i] = sums[q]! / total;
      continue;
    }
    let hi = len;
    for (let q = ns.length - 1; q >= 0; q--) {
      const n = ns[q]!;
      if (n >= hi) {
        let s = 0;
        for (let k = 0; k < hi; k++) s += scratch[k]!;
        sums[q] = hi === len ? total : s;
        continue;
      }
      selectLargest(scratch, 0, hi, n);
      hi = n;
      let s = 0;
      for (let k = 0; k < n; k++) s += scratch[k]!;
      sums[q] = s;
    }
    for (let q = 0; q < ns.length; q++) out[q]![i] = sums[q]! / total;
  }
  return out;
}

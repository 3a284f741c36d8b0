/**
 * Selection without sorting (Hoare's quickselect), the one implementation the operations share: a
 * median, the n largest values of a row (scanpy's `pct_counts_in_top_<n>_genes`), the k-th nearest
 * distance. Linear on average; it reorders the range it works on.
 */

/**
 * Reorder `a[lo…hi]` (both inclusive) so that position `k` holds the value it would hold if the range
 * were sorted ascending, with every value before it ≤ it and every value after it ≥ it; returns that
 * value. NaN-free input assumed.
 */
export function selectKth(a: Float64Array, lo: number, hi: number, k: number): number {
  while (hi > lo) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k]!;
}

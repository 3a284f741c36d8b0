/**
 * An order of the rows of a dense matrix that keeps rows close in space close in memory: the Z-order
 * (Morton) curve through the first few columns, each cut into 2^bits steps between its minimum and
 * maximum. On PCA spaces the leading components carry most of the spread, so neighbours in the full
 * space mostly sit near each other along the curve; a search that compares each row with its
 * candidates then reads memory it has just read. Deterministic: ties keep row order.
 */

/**
 * `order[i]` = the row to put at position i. Uses the first `min(dims, d)` columns (default 5) at
 * `bits` steps each (default 8; dims × bits ≤ 52 so a key is an exact float64).
 */
export function mortonOrder(data: ArrayLike<number>, n: number, d: number, dims = 5, bits = 8): Int32Array {
  const used = Math.min(dims, d);
  if (used * bits > 52) throw new Error(`mortonOrder: ${used} × ${bits} bits do not fit a float64 key`);
  const lo = new Float64Array(used).fill(Number.POSITIVE_INFINITY);
  const hi = new Float64Array(used).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < used; t++) {
      const v = data[i * d + t];
      if (v < lo[t]) lo[t] = v;
      if (v > hi[t]) hi[t] = v;
    }
  }
  const steps = 1 << bits;
  const cell = new Int32Array(used);
  const key = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < used; t++) {
      const span = hi[t] - lo[t];
      const q = span > 0 ? Math.floor(((data[i * d + t] - lo[t]) / span) * steps) : 0;
      cell[t] = Math.min(steps - 1, Math.max(0, q)); // NaN lands at 0 (callers reject NaN anyway)
    }
    // Interleave the bits, most significant first.
    let k = 0;
    for (let b = bits - 1; b >= 0; b--) for (let t = 0; t < used; t++) k = k * 2 + ((cell[t] >> b) & 1);
    key[i] = k;
  }
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return order.sort((a, b) => key[a] - key[b] || a - b);
}

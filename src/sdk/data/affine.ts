/**
 * Homogeneous affine matrices: `(nOut+1) × (nIn+1)` row-major arrays of rows, last row `[0,…,0,1]`.
 * Small and dense on purpose; transforms have at most 4 axes.
 */

/** An affine matrix as a list of rows, homogeneous (the last row is `[0, …, 0, 1]`). */
export type AffineMatrix = number[][];

/** The (n+1)×(n+1) identity. */
export function identityMatrix(n: number): AffineMatrix {
  return Array.from({ length: n + 1 }, (_, i) => Array.from({ length: n + 1 }, (_, j) => (i === j ? 1 : 0)));
}

/** Product `a · b` (apply b first, then a). */
export function multiply(a: AffineMatrix, b: AffineMatrix): AffineMatrix {
  const rows = a.length;
  const inner = b.length;
  const cols = b[0]!.length;
  if (a[0]!.length !== inner)
    throw new Error(`affine: cannot multiply ${rows}×${a[0]!.length} by ${inner}×${cols}`);
  const out: AffineMatrix = [];
  for (let i = 0; i < rows; i++) {
    const row = new Array<number>(cols).fill(0);
    for (let k = 0; k < inner; k++) {
      const aik = a[i]![k]!;
      if (aik === 0) continue;
      for (let j = 0; j < cols; j++) row[j]! += aik * b[k]![j]!;
    }
    out.push(row);
  }
  return out;
}

/** Inverse of a square homogeneous matrix (Gauss-Jordan with partial pivoting). */
export function invert(m: AffineMatrix): AffineMatrix {
  const n = m.length;
  if (m.some((r) => r.length !== n)) throw new Error("affine: only square matrices can be inverted");
  const a = m.map((r, i) => [...r, ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    if (Math.abs(a[p]![c]!) < 1e-12) throw new Error("affine: the transformation is not invertible");
    [a[c], a[p]] = [a[p]!, a[c]!];
    const pivot = a[c]![c]!;
    for (let j = 0; j < 2 * n; j++) a[c]![j]! /= pivot;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = a[r]![c]!;
      if (f === 0) continue;
      for (let j = 0; j < 2 * n; j++) a[r]![j]! -= f * a[c]![j]!;
    }
  }
  return a.map((r) => r.slice(n));
}

/** Apply a 2-d homogeneous matrix to a point. */
export function applyToPoint(m: AffineMatrix, x: number, y: number): [number, number] {
  return [m[0]![0]! * x + m[0]![1]! * y + m[0]![2]!, m[1]![0]! * x + m[1]![1]! * y + m[1]![2]!];
}

/** The six numbers `[a, b, c, d, e, f]` of a 2-d affine `x' = a·x + b·y + c`, `y' = d·x + e·y + f`. */
export function toAffine6(m: AffineMatrix): [number, number, number, number, number, number] {
  return [m[0]![0]!, m[0]![1]!, m[0]![2]!, m[1]![0]!, m[1]![1]!, m[1]![2]!];
}

/** Whether two matrices agree to within `tol`. */
export function nearlyEqual(a: AffineMatrix, b: AffineMatrix, tol = 1e-9): boolean {
  return (
    a.length === b.length &&
    a.every((r, i) => r.length === b[i]!.length && r.every((v, j) => Math.abs(v - b[i]![j]!) <= tol))
  );
}

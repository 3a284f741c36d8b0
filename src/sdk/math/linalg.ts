/**
 * Dense linear algebra on row-major Float64Array matrices: the small kernels that the SVD and PCA
 * solvers build on (products, thin Householder QR, symmetric tridiagonal and Jacobi eigensolvers,
 * one-sided Jacobi SVD). Sizes here are "tall and skinny" (n × l with l ≤ a few hundred) or small
 * square; nothing is meant for large square dense problems.
 *
 * Convention: a matrix is `(data, rows, cols)` with `data[i * cols + j]`.
 */

/** C (r × c) = A (r × k) · B (k × c); all row-major. `out` is overwritten when given. */
export function matmul(
  a: Float64Array,
  b: Float64Array,
  r: number,
  k: number,
  c: number,
  out = new Float64Array(r * c),
): Float64Array {
  out.fill(0);
  for (let i = 0; i < r; i++) {
    const ro = i * c;
    const ra = i * k;
    for (let t = 0; t < k; t++) {
      const v = a[ra + t];
      if (v === 0) continue;
      const rb = t * c;
      for (let j = 0; j < c; j++) out[ro + j] += v * b[rb + j];
    }
  }
  return out;
}

/** C (k × c) = Aᵀ · B where A is r × k and B is r × c (row-major); a pass over the rows of both. */
export function matmulTN(
  a: Float64Array,
  b: Float64Array,
  r: number,
  k: number,
  c: number,
  out = new Float64Array(k * c),
): Float64Array {
  out.fill(0);
  for (let i = 0; i < r; i++) {
    const ra = i * k;
    const rb = i * c;
    for (let t = 0; t < k; t++) {
      const v = a[ra + t];
      if (v === 0) continue;
      const ro = t * c;
      for (let j = 0; j < c; j++) out[ro + j] += v * b[rb + j];
    }
  }
  return out;
}

/** The transpose of an r × c row-major matrix (c × r). */
export function transpose(a: Float64Array, r: number, c: number): Float64Array {
  const out = new Float64Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = a[i * c + j];
  return out;
}

/**
 * Orthonormalise the columns of a tall n × l matrix (n ≥ l) in place by Householder QR, leaving the
 * thin Q. Householder rather than Gram–Schmidt because randomized power iterations produce nearly
 * dependent columns, where Gram–Schmidt loses orthogonality. Returns the l × l upper-triangular R.
 */
export function qrThin(a: Float64Array, n: number, l: number): Float64Array {
  if (n < l) throw new Error(`qrThin: need rows ≥ cols, got ${n} × ${l}`);
  const vs: Float64Array[] = [];
  const betas = new Float64Array(l);
  const r = new Float64Array(l * l);
  const w = new Float64Array(l);
  for (let j = 0; j < l; j++) {
    // Householder vector for column j, rows j..n-1.
    let norm2 = 0;
    for (let i = j; i < n; i++) {
      const x = a[i * l + j];
      norm2 += x * x;
    }
    const norm = Math.sqrt(norm2);
    const x0 = a[j * l + j];
    const alpha = x0 >= 0 ? -norm : norm;
    const v = new Float64Array(n - j);
    for (let i = j; i < n; i++) v[i - j] = a[i * l + j];
    v[0] = x0 - alpha;
    let vnorm2 = norm2 - x0 * x0 + v[0] * v[0];
    if (norm === 0 || vnorm2 === 0) {
      vnorm2 = 0;
      betas[j] = 0;
    } else betas[j] = 2 / vnorm2;
    vs.push(v);
    // Apply H = I − β v vᵀ to the remaining columns j..l-1.
    const beta = betas[j];
    if (beta !== 0) {
      w.fill(0, j);
      for (let i = j; i < n; i++) {
        const vi = v[i - j];
        if (vi === 0) continue;
        const row = i * l;
        for (let c = j; c < l; c++) w[c] += vi * a[row + c];
      }
      for (let c = j; c < l; c++) w[c] *= beta;
      for (let i = j; i < n; i++) {
        const vi = v[i - j];
        if (vi === 0) continue;
        const row = i * l;
        for (let c = j; c < l; c++) a[row + c] -= vi * w[c];
      }
    }
    for (let c = j; c < l; c++) r[j * l + c] = a[j * l + c];
  }
  // Form the thin Q = H_0 H_1 … H_{l-1} [I; 0], applying reflectors backwards.
  a.fill(0);
  for (let j = 0; j < l; j++) a[j * l + j] = 1;
  for (let j = l - 1; j >= 0; j--) {
    const beta = betas[j];
    if (beta === 0) continue;
    const v = vs[j]!;
    w.fill(0, j);
    for (let i = j; i < n; i++) {
      const vi = v[i - j];
      if (vi === 0) continue;
      const row = i * l;
      for (let c = j; c < l; c++) w[c] += vi * a[row + c];
    }
    for (let c = j; c < l; c++) w[c] *= beta;
    for (let i = j; i < n; i++) {
      const vi = v[i - j];
      if (vi === 0) continue;
      const row = i * l;
      for (let c = j; c < l; c++) a[row + c] -= vi * w[c];
    }
  }
  return r;
}

/**
 * Eigen-decomposition of a symmetric tridiagonal matrix by the implicit QL method with Wilkinson-like
 * shifts. `diag` (length n) and `off` (length n − 1, the sub-diagonal) are not modified. Returns the
 * eigenvalues in descending order and the eigenvectors as the columns of an n × n row-major matrix.
 */
export function tridiagEigen(
  diag: ArrayLike<number>,
  off: ArrayLike<number>,
  lastRowOnly = false,
): { values: Float64Array; vectors: Float64Array } {
  const n = diag.length;
  const d = Float64Array.from(diag);
  const e = new Float64Array(n);
  for (let i = 0; i < n - 1; i++) e[i] = off[i];
  // With `lastRowOnly` only the last row of the eigenvector matrix is tracked (O(n²) instead of
  // O(n³)): all a Lanczos convergence check needs. `vectors` is then 1 × n.
  const rows = lastRowOnly ? 1 : n;
  const z = new Float64Array(rows * n);
  if (lastRowOnly) z[n - 1] = 1;
  else for (let i = 0; i < n; i++) z[i * n + i] = 1;
  for (let l = 0; l < n; l++) {
    let iter = 0;
    for (;;) {
      let m = l;
      for (; m < n - 1; m++) {
        const dd = Math.abs(d[m]) + Math.abs(d[m + 1]);
        if (Math.abs(e[m]) <= Number.EPSILON * dd) break;
      }
      if (m === l) break;
      if (++iter > 60) throw new Error("tridiagEigen: no convergence after 60 iterations");
      let g = (d[l + 1] - d[l]) / (2 * e[l]);
      let r = Math.hypot(g, 1);
      g = d[m] - d[l] + e[l] / (g + (g >= 0 ? r : -r));
      let s = 1;
      let c = 1;
      let p = 0;
      let i = m - 1;
      let deflated = false;
      for (; i >= l; i--) {
        const f = s * e[i];
        const b = c * e[i];
        r = Math.hypot(f, g);
        e[i + 1] = r;
        if (r === 0) {
          d[i + 1] -= p;
          e[m] = 0;
          deflated = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1] - p;
        r = (d[i] - g) * s + 2 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        for (let k = 0; k < rows; k++) {
          const row = k * n;
          const zf = z[row + i + 1];
          const zi = z[row + i];
          z[row + i + 1] = s * zi + c * zf;
          z[row + i] = c * zi - s * zf;
        }
      }
      if (deflated) continue;
      d[l] -= p;
      e[l] = g;
      e[m] = 0;
    }
  }
  return sortEigen(d, z, n);
}

/** Sort eigenpairs (values d, vectors as columns of z, n × n) by descending value. */
function sortEigen(
  d: Float64Array,
  z: Float64Array,
  n: number,
): { values: Float64Array; vectors: Float64Array } {
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => d[b] - d[a]);
  const values = new Float64Array(n);
  const vectors = new Float64Array(n * n);
  for (let c = 0; c < n; c++) {
    const src = order[c]!;
    values[c] = d[src];
    for (let k = 0; k < n; k++) vectors[k * n + c] = z[k * n + src];
  }
  return { values, vectors };
}

/**
 * Eigen-decomposition of a small dense symmetric matrix (n × n, row-major, not modified) by cyclic
 * Jacobi rotations: slow (O(n³) per sweep) but accurate to full precision, for n up to ~100.
 * Eigenvalues descending; eigenvectors as columns.
 */
export function symEigenJacobi(a: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const m = Float64Array.from(a);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let offNorm = 0;
    let total = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const x = m[i * n + j] * m[i * n + j];
        total += x;
        if (i !== j) offNorm += x;
      }
    }
    if (offNorm <= 1e-30 * total || offNorm === 0) break;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = m[p * n + q];
        if (apq === 0) continue;
        const app = m[p * n + p];
        const aqq = m[q * n + q];
        const theta = (aqq - app) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = m[k * n + p];
          const akq = m[k * n + q];
          m[k * n + p] = c * akp - s * akq;
          m[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = m[p * n + k];
          const aqk = m[q * n + k];
          m[p * n + k] = c * apk - s * aqk;
          m[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p];
          const vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = m[i * n + i];
  return sortEigen(d, v, n);
}

/**
 * Thin SVD of a small r × c matrix (r ≥ c, row-major, not modified) by one-sided Jacobi (Hestenes)
 * rotations, accurate for small singular values too. Returns U (r × c), s (descending, length c)
 * and V (c × c), with A = U diag(s) Vᵀ.
 */
export function svdJacobi(
  a: Float64Array,
  r: number,
  c: number,
): { u: Float64Array; s: Float64Array; v: Float64Array } {
  if (r < c) throw new Error(`svdJacobi: need rows ≥ cols, got ${r} × ${c}`);
  // Work on columns: store Aᵀ so that each column is contiguous.
  const at = transpose(a, r, c); // c × r
  const vt = new Float64Array(c * c); // rows are the columns of V
  for (let i = 0; i < c; i++) vt[i * c + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let rotated = false;
    for (let p = 0; p < c - 1; p++) {
      for (let q = p + 1; q < c; q++) {
        let alpha = 0;
        let beta = 0;
        let gamma = 0;
        const op = p * r;
        const oq = q * r;
        for (let k = 0; k < r; k++) {
          const x = at[op + k];
          const y = at[oq + k];
          alpha += x * x;
          beta += y * y;
          gamma += x * y;
        }
        if (gamma === 0 || Math.abs(gamma) <= 1e-15 * Math.sqrt(alpha * beta)) continue;
        rotated = true;
        const zeta = (beta - alpha) / (2 * gamma);
        const t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const cs = 1 / Math.sqrt(1 + t * t);
        const sn = cs * t;
        for (let k = 0; k < r; k++) {
          const x = at[op + k];
          const y = at[oq + k];
          at[op + k] = cs * x - sn * y;
          at[oq + k] = sn * x + cs * y;
        }
        const vp = p * c;
        const vq = q * c;
        for (let k = 0; k < c; k++) {
          const x = vt[vp + k];
          const y = vt[vq + k];
          vt[vp + k] = cs * x - sn * y;
          vt[vq + k] = sn * x + cs * y;
        }
      }
    }
    if (!rotated) break;
  }
  const norms = new Float64Array(c);
  for (let j = 0; j < c; j++) {
    let s2 = 0;
    for (let k = 0; k < r; k++) s2 += at[j * r + k] * at[j * r + k];
    norms[j] = Math.sqrt(s2);
  }
  const order = Array.from({ length: c }, (_, i) => i).sort((x, y) => norms[y] - norms[x]);
  const u = new Float64Array(r * c);
  const s = new Float64Array(c);
  const v = new Float64Array(c * c);
  for (let jj = 0; jj < c; jj++) {
    const j = order[jj]!;
    const sj = norms[j];
    s[jj] = sj;
    for (let k = 0; k < r; k++) u[k * c + jj] = sj > 0 ? at[j * r + k] / sj : 0;
    for (let k = 0; k < c; k++) v[k * c + jj] = vt[j * c + k];
  }
  return { u, s, v };
}

/**
 * The preprocessing steps Scrublet runs on its own copy of the counts (scanpy's
 * `preprocessing/_scrublet/pipeline.py` and `sparse_utils.py`): row subsets, per-cell normalisation, gene
 * means and variances, and the highly variable genes it embeds.
 */
import type { RowMatrix } from "../../../sdk/math/regression.js";

/** A CSR with float64 values in plain arrays: the working form of the scrublet pipeline. */
export interface Csr {
  readonly rows: number;
  readonly cols: number;
  readonly indptr: Float64Array;
  readonly indices: Int32Array;
  readonly data: Float64Array;
}

/** Rows `rows` and columns with `colKeep[j] >= 0` (renumbered to `colKeep[j]`) of a row matrix. */
export function subsetCsr(y: RowMatrix, rows: Int32Array, colKeep: Int32Array, nCols: number): Csr {
  let nnz = 0;
  const m = y.cols;
  if (y.kind === "csr") {
    for (const i of rows)
      for (let t = y.indptr[i]!; t < y.indptr[i + 1]!; t++) if (colKeep[y.indices[t]!]! >= 0) nnz++;
  } else {
    for (const i of rows) for (let j = 0; j < m; j++) if (colKeep[j]! >= 0 && y.data[i * m + j] !== 0) nnz++;
  }
  const indptr = new Float64Array(rows.length + 1);
  const indices = new Int32Array(nnz);
  const data = new Float64Array(nnz);
  let at = 0;
  for (let r = 0; r < rows.length; r++) {
    const i = rows[r]!;
    if (y.kind === "csr") {
      for (let t = y.indptr[i]!; t < y.indptr[i + 1]!; t++) {
        const c = colKeep[y.indices[t]!]!;
        if (c < 0) continue;
        indices[at] = c;
        data[at++] = y.data[t]!;
      }
    } else {
      for (let j = 0; j < m; j++) {
        const v = y.data[i * m + j]!;
        if (colKeep[j]! < 0 || v === 0) continue;
        indices[at] = colKeep[j]!;
        data[at++] = v;
      }
    }
    indptr[r + 1] = at;
  }
  return { rows: rows.length, cols: nCols, indptr, indices, data };
}

/** Row sums of a CSR. */
export function rowSums(x: Csr): Float64Array {
  const s = new Float64Array(x.rows);
  for (let i = 0; i < x.rows; i++) for (let t = x.indptr[i]!; t < x.indptr[i + 1]!; t++) s[i]! += x.data[t];
  return s;
}

/** Scale each row to sum `target` (rows summing to 0 stay 0), as `normalize_total(target_sum=…)`. */
export function normalizeRows(x: Csr, target: number): Csr {
  const sums = rowSums(x);
  const data = new Float64Array(x.data.length);
  for (let i = 0; i < x.rows; i++) {
    const f = sums[i]! > 0 ? target / sums[i]! : 1;
    for (let t = x.indptr[i]!; t < x.indptr[i + 1]!; t++) data[t] = x.data[t]! * f;
  }
  return { ...x, data };
}

/** Median of the positive values (numpy's median: mean of the two middle values for even counts). */
export function medianPositive(v: Float64Array): number {
  const pos = Float64Array.from(v.filter((x) => x > 0)).sort();
  if (pos.length === 0) return 0;
  const h = pos.length >> 1;
  return pos.length % 2 ? pos[h]! : (pos[h - 1]! + pos[h]!) / 2;
}

/** Per-column mean and variance (ddof 1) of a CSR (implicit zeros included). */
export function columnMeanVar(x: Csr): { mean: Float64Array; variance: Float64Array } {
  const n = x.rows;
  const s1 = new Float64Array(x.cols);
  const s2 = new Float64Array(x.cols);
  for (let t = 0; t < x.data.length; t++) {
    const v = x.data[t]!;
    s1[x.indices[t]!]! += v;
    s2[x.indices[t]!]! += v * v;
  }
  const mean = new Float64Array(x.cols);
  const variance = new Float64Array(x.cols);
  for (let j = 0; j < x.cols; j++) {
    mean[j] = s1[j]! / n;
    variance[j] = n > 1 ? Math.max(0, (s2[j]! - n * mean[j]! * mean[j]!) / (n - 1)) : Number.NaN;
  }
  return { mean, variance };
}

/**
 * scanpy's `highly_variable_genes(flavor="seurat")` with its defaults (min_mean 0.0125, max_mean 3,
 * min_disp 0.5, 20 bins) on normalised counts (the expm1 of the log1p layer it is given).
 */
export function seuratHvg(norm: Csr): Uint8Array {
  const { mean, variance } = columnMeanVar(norm);
  const m = norm.cols;
  const logMean = new Float64Array(m);
  const disp = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    const mu = mean[j] === 0 ? 1e-12 : mean[j]!;
    const d = variance[j]! / mu;
    disp[j] = d === 0 ? Number.NaN : Math.log(d);
    logMean[j] = Math.log1p(mu);
  }
  // pd.cut(means, 20): equal-width bins over [min, max], the lowest edge lowered by 0.1 % of the range.
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of logMean) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const nBins = 20;
  const bin = new Int32Array(m);
  const edges = new Float64Array(nBins + 1);
  for (let b = 0; b <= nBins; b++) edges[b] = lo + ((hi - lo) * b) / nBins;
  edges[0] = lo - (hi - lo) * 0.001;
  for (let j = 0; j < m; j++) {
    let b = 0;
    while (b < nBins - 1 && logMean[j]! > edges[b + 1]!) b++;
    bin[j] = hi === lo ? 0 : b;
  }
  const cnt = new Float64Array(nBins);
  const sum = new Float64Array(nBins);
  const sumSq = new Float64Array(nBins);
  for (let j = 0; j < m; j++) {
    if (Number.isNaN(disp[j]!)) continue;
    cnt[bin[j]!]!++;
    sum[bin[j]!]! += disp[j];
  }
  const avg = sum.map((s, b) => s / cnt[b]!);
  for (let j = 0; j < m; j++) if (!Number.isNaN(disp[j]!)) sumSq[bin[j]!]! += (disp[j]! - avg[bin[j]!]!) ** 2;
  const dev = sumSq.map((s, b) => (cnt[b]! > 1 ? Math.sqrt(s / (cnt[b]! - 1)) : Number.NaN));
  const hv = new Uint8Array(m);
  for (let j = 0; j < m; j++) {
    let a = avg[bin[j]!]!;
    let d = dev[bin[j]!]!;
    if (cnt[bin[j]!] === 1) {
      // A lone gene in its bin gets a normalised dispersion of 1 (scanpy's seurat post-processing).
      d = a;
      a = 0;
    }
    const norm = (disp[j]! - a) / d;
    hv[j] = logMean[j]! > 0.0125 && logMean[j]! < 3 && norm > 0.5 && norm < Infinity ? 1 : 0;
  }
  return hv;
}

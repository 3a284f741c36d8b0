/**
 * The computations behind `highly_variable_genes`, following scanpy 1.12: the dispersion flavours
 * (`seurat`: log of the variance/mean ratio of expm1 data, z-scored within 20 equal-width bins of
 * log mean; `cell_ranger`: variance/mean ratio of the data, robust z-score within percentile bins)
 * and the variance-stabilising flavours (`seurat_v3`, `seurat_v3_paper`: a LOESS of log variance on
 * log mean, then the variance of values standardised by the fitted standard deviation and clipped at
 * √n). Batches are handled as scanpy does: per batch, then merged.
 */
import type { SparseMatrix } from "../../../sdk/data/arrays.js";
import { csrColumnMeanVar, csrColumnNnz, type MeanVar, numberData } from "../../../sdk/math/csr.js";
import { loess } from "../../../sdk/math/loess.js";

/** Cutoffs of the dispersion flavours (ignored when `n_top_genes` is set). */
export interface HvgCutoffs {
  readonly minMean: number;
  readonly maxMean: number;
  readonly minDisp: number;
  readonly maxDisp: number;
}

/** Per-gene results of a dispersion flavour. */
export interface DispersionHvg {
  readonly means: Float64Array;
  readonly dispersions: Float64Array;
  readonly dispersionsNorm: Float64Array;
  readonly highlyVariable: Uint8Array;
}

/** Settings of the dispersion flavours. */
export interface DispersionSettings {
  readonly flavor: "seurat" | "cell_ranger";
  /** A number of top genes, or cutoffs. */
  readonly cutoff: number | HvgCutoffs;
  readonly nBins: number;
  /** `uns/log1p/base` of the data (seurat flavour undoes the log with it); null for the natural log. */
  readonly logBase: number | null;
  /** Compute on genes expressed in at least one (selected) cell; the others get zeros. */
  readonly filterUnexpressed: boolean;
  readonly log?: (text: string) => void;
}

/** pandas `cut(x, bins=n)` codes: n equal-width right-closed bins over [min, max], lowest edge widened by 0.1%. */
export function equalWidthBins(x: Float64Array, nBins: number): Int32Array {
  let mn = Infinity;
  let mx = -Infinity;
  for (const v of x) {
    if (Number.isNaN(v)) continue;
    mn = Math.min(mn, v);
    mx = Math.max(mx, v);
  }
  let edges: Float64Array;
  if (mn === mx) {
    const lo = mn !== 0 ? mn - 0.001 * Math.abs(mn) : mn - 0.001;
    const hi = mx !== 0 ? mx + 0.001 * Math.abs(mx) : mx + 0.001;
    edges = linspace(lo, hi, nBins + 1);
  } else {
    edges = linspace(mn, mx, nBins + 1);
    edges[0]! -= (mx - mn) * 0.001;
  }
  return cutCodes(x, edges);
}

/** numpy's `linspace` (start + i·step, last point exactly `stop`). */
function linspace(start: number, stop: number, num: number): Float64Array {
  const out = new Float64Array(num);
  const div = num - 1;
  const step = (stop - start) / div;
  for (let i = 0; i < num; i++) out[i] = i * step + start;
  if (num > 1) out[num - 1] = stop;
  return out;
}

/** Right-closed bin codes of x against sorted edges (-1 outside or NaN), as pandas `cut` assigns them. */
function cutCodes(x: Float64Array, edges: Float64Array): Int32Array {
  for (let i = 1; i < edges.length; i++) {
    if (Number.isNaN(edges[i]!))
      // NaN edges come from NaN means or dispersions: NaN in X, which log1p gives for values below
      // -1, i.e. it was run on data already scaled or centred (negative values).
      throw new Error(
        "highly_variable_genes: the genes' means or dispersions are NaN: X holds NaN or negative values (data already scaled or centred, then log1p?); run it on counts normalised and log-transformed once (sc.pp.normalize_total, sc.pp.log1p), or pick a layer of such data",
      );
    if (!(edges[i]! > edges[i - 1]!))
      throw new Error(`highly_variable_genes: bin edges must be unique (${edges[i]})`);
  }
  const out = new Int32Array(x.length);
  for (let g = 0; g < x.length; g++) {
    const v = x[g]!;
    if (Number.isNaN(v) || v <= edges[0]! || v > edges[edges.length - 1]!) {
      out[g] = -1;
      continue;
    }
    // First edge >= v (searchsorted side=left), minus one.
    let lo = 0;
    let hi = edges.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (edges[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    out[g] = lo - 1;
  }
  return out;
}

/** numpy's `percentile(a, q)` with linear interpolation, for a sorted array. */
export function percentileSorted(sorted: Float64Array, q: number): number {
  const n = sorted.length;
  const virt = (n - 1) * (q / 100);
  if (virt >= n - 1) return sorted[n - 1]!;
  if (virt < 0) return sorted[0]!;
  const prev = Math.floor(virt);
  const t = virt - prev;
  const a = sorted[prev]!;
  const b = sorted[prev + 1]!;
  const diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

/** Median of values (NaN skipped; NaN when none), as numpy/pandas compute it. */
function median(values: number[]): number {
  const v = values.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  const n = v.length;
  if (n === 0) return Number.NaN;
  return n % 2 ? v[(n - 1) / 2]! : (v[n / 2 - 1]! + v[n / 2]!) / 2;
}

const MAD_C = 0.6744897501960817; // Φ⁻¹(3/4), statsmodels' normalising constant

/** The n-th highest of the non-NaN values (scanpy's `_nth_highest`); n is capped at their count. */
function nthHighest(x: Float64Array, n: number, log?: (t: string) => void): number {
  const v = Array.from(x).filter((a) => !Number.isNaN(a));
  if (n > v.length) {
    log?.(
      `n_top_genes (=${n}) > number of normalized dispersions (=${v.length}), returning all genes with normalized dispersions.`,
    );
    n = v.length;
  }
  v.sort((a, b) => b - a);
  return v[n - 1]!;
}

/**
 * Dispersion-flavour HVG on the rows of `rowMask` (all rows when null) of a CSR matrix: means,
 * dispersions, normalised dispersions and the selection, as `_highly_variable_genes_single_batch`.
 * `meanVar`: the columns' means and variances (ddof 1, after the flavour's expm1) when the caller has
 * them already (computed on the job's threads); else they are computed here.
 */
export function dispersionHvg(
  x: SparseMatrix,
  rowMask: Uint8Array | null,
  s: DispersionSettings,
  meanVar?: MeanVar,
): DispersionHvg {
  const nGenes = x.shape[1];
  let filt: Uint8Array | null = null;
  if (s.filterUnexpressed) {
    const cells = csrColumnNnz(x, true, rowMask ? { rowMask } : {});
    filt = new Uint8Array(nGenes);
    for (let g = 0; g < nGenes; g++) filt[g] = cells[g]! >= 1 ? 1 : 0;
  }
  const f32 = x.dtype === "float32";
  let transform: ((v: number) => number) | undefined;
  if (s.flavor === "seurat") {
    const lb = s.logBase !== null ? Math.log(s.logBase) : null;
    transform = f32
      ? lb !== null
        ? (v) => Math.fround(Math.expm1(Math.fround(v * lb)))
        : (v) => Math.fround(Math.expm1(v))
      : lb !== null
        ? (v) => Math.expm1(v * lb)
        : Math.expm1;
  }
  const opts = {
    ddof: 1,
    float32Squares: f32,
    ...(rowMask ? { rowMask } : {}),
    ...(transform ? { transform } : {}),
  };
  const mv = meanVar ?? csrColumnMeanVar(x, opts);
  // Genes kept for the computation (all, or those expressed).
  const kept: number[] = [];
  for (let g = 0; g < nGenes; g++) if (!filt || filt[g]) kept.push(g);
  const k = kept.length;
  const mean = new Float64Array(k);
  const disp = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    const g = kept[i]!;
    let m = mv.mean[g]!;
    if (m === 0) m = 1e-12;
    let d = mv.var[g]! / m;
    if (s.flavor === "seurat") {
      if (d === 0) d = Number.NaN;
      d = Math.log(d);
      m = Math.log1p(m);
    }
    mean[i] = m;
    disp[i] = d;
  }
  // Bins of mean expression.
  let codes: Int32Array;
  if (s.flavor === "seurat") codes = equalWidthBins(mean, s.nBins);
  else {
    const sorted = Float64Array.from(mean).sort();
    const edges = [Number.NEGATIVE_INFINITY];
    for (let q = 10; q <= 100; q += 5) edges.push(percentileSorted(sorted, q));
    edges.push(Number.POSITIVE_INFINITY);
    codes = cutCodes(mean, Float64Array.from(edges));
  }
  // Per-bin centre and scale of the dispersions.
  const groups = new Map<number, number[]>();
  for (let i = 0; i < k; i++) {
    const c = codes[i]!;
    if (c < 0) continue;
    const arr = groups.get(c);
    if (arr) arr.push(disp[i]!);
    else groups.set(c, [disp[i]!]);
  }
  const avg = new Map<number, number>();
  const dev = new Map<number, number>();
  for (const [c, vals] of groups) {
    const v = vals.filter((a) => !Number.isNaN(a));
    if (s.flavor === "seurat") {
      let mu = Number.NaN;
      let sd = Number.NaN;
      if (v.length > 0) {
        mu = v.reduce((a, b) => a + b, 0) / v.length;
        if (v.length > 1) {
          let ss = 0;
          for (const a of v) ss += (a - mu) ** 2;
          sd = Math.sqrt(ss / (v.length - 1));
        }
      }
      // A bin with a single gene: its normalised dispersion is set to 1 (dev = avg, avg = 0).
      if (Number.isNaN(sd)) {
        sd = mu;
        mu = 0;
      }
      avg.set(c, mu);
      dev.set(c, sd);
    } else {
      const med = median(v);
      avg.set(c, med);
      dev.set(c, median(v.map((a) => Math.abs(a - med) / MAD_C)));
    }
  }
  const norm = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    const c = codes[i]!;
    norm[i] = c < 0 ? Number.NaN : (disp[i]! - avg.get(c)!) / dev.get(c)!;
  }
  // Selection.
  const hv = new Uint8Array(k);
  if (typeof s.cutoff === "number") {
    const nTop = Math.min(s.cutoff, k);
    const cut = nthHighest(norm, nTop, s.log);
    for (let i = 0; i < k; i++) hv[i] = (Number.isNaN(norm[i]!) ? -Infinity : norm[i]!) >= cut ? 1 : 0;
  } else {
    const c = s.cutoff;
    for (let i = 0; i < k; i++) {
      const dn = nanToNum(norm[i]!);
      const m = mean[i]!;
      hv[i] = m > c.minMean && m < c.maxMean && dn > c.minDisp && dn < c.maxDisp ? 1 : 0;
    }
  }
  if (k === nGenes) return { means: mean, dispersions: disp, dispersionsNorm: norm, highlyVariable: hv };
  // Genes left out of the computation get zeros, as scanpy fills them.
  const out = {
    means: new Float64Array(nGenes),
    dispersions: new Float64Array(nGenes),
    dispersionsNorm: new Float64Array(nGenes),
    highlyVariable: new Uint8Array(nGenes),
  };
  for (let i = 0; i < k; i++) {
    const g = kept[i]!;
    out.means[g] = mean[i]!;
    out.dispersions[g] = disp[i]!;
    out.dispersionsNorm[g] = norm[i]!;
    out.highlyVariable[g] = hv[i]!;
  }
  return out;
}

/** numpy's `nan_to_num`: NaN → 0, ±inf → ±max float. */
function nanToNum(v: number): number {
  if (Number.isNaN(v)) return 0;
  if (v === Infinity) return Number.MAX_VALUE;
  if (v === -Infinity) return -Number.MAX_VALUE;
  return v;
}

/** Merged results of the dispersion flavours over batches. */
export interface BatchedDispersionHvg extends DispersionHvg {
  readonly nBatches: Int32Array;
  readonly intersection: Uint8Array;
}

/**
 * Dispersion-flavour HVG per batch, merged as scanpy's `_highly_variable_genes_batched`: statistics
 * averaged over batches, genes ranked by the number of batches selecting them (ties: mean normalised
 * dispersion, then gene name) when `n_top_genes` is set, else cutoffs on the averages.
 */
export function batchedDispersionHvg(
  x: SparseMatrix,
  batches: Uint8Array[],
  geneNames: readonly (string | null)[],
  s: DispersionSettings,
  signal?: AbortSignal,
): BatchedDispersionHvg {
  const nGenes = x.shape[1];
  const sums = {
    means: new Float64Array(nGenes),
    disp: new Float64Array(nGenes),
    norm: new Float64Array(nGenes),
  };
  const counts = { disp: new Int32Array(nGenes), norm: new Int32Array(nGenes) };
  const nb = new Int32Array(nGenes);
  for (const mask of batches) {
    signal?.throwIfAborted();
    const r = dispersionHvg(x, mask, { ...s, filterUnexpressed: true });
    for (let g = 0; g < nGenes; g++) {
      sums.means[g]! += r.means[g];
      if (!Number.isNaN(r.dispersions[g]!)) {
        sums.disp[g]! += r.dispersions[g];
        counts.disp[g]!++;
      }
      if (!Number.isNaN(r.dispersionsNorm[g]!)) {
        sums.norm[g]! += r.dispersionsNorm[g];
        counts.norm[g]!++;
      }
      nb[g]! += r.highlyVariable[g];
    }
  }
  const B = batches.length;
  const means = new Float64Array(nGenes);
  const dispersions = new Float64Array(nGenes);
  const dispersionsNorm = new Float64Array(nGenes);
  const intersection = new Uint8Array(nGenes);
  for (let g = 0; g < nGenes; g++) {
    means[g] = sums.means[g]! / B;
    dispersions[g] = counts.disp[g] ? sums.disp[g]! / counts.disp[g]! : Number.NaN;
    dispersionsNorm[g] = counts.norm[g] ? sums.norm[g]! / counts.norm[g]! : Number.NaN;
    intersection[g] = nb[g] === B ? 1 : 0;
  }
  const hv = new Uint8Array(nGenes);
  if (typeof s.cutoff === "number") {
    // groupby sorts by gene name; the multi-key sort is stable on that order.
    const byName = Array.from({ length: nGenes }, (_, g) => g).sort((a, b) => {
      const na = geneNames[a] ?? "";
      const nbn = geneNames[b] ?? "";
      return na < nbn ? -1 : na > nbn ? 1 : 0;
    });
    const order = byName.slice().sort((a, b) => {
      if (nb[a] !== nb[b]) return nb[b]! - nb[a]!;
      const da = dispersionsNorm[a]!;
      const db = dispersionsNorm[b]!;
      const an = Number.isNaN(da);
      const bn = Number.isNaN(db);
      if (an || bn) return an === bn ? 0 : an ? 1 : -1;
      return db - da;
    });
    for (let r = 0; r < Math.min(s.cutoff, nGenes); r++) hv[order[r]!] = 1;
  } else {
    const c = s.cutoff;
    for (let g = 0; g < nGenes; g++) {
      const dn = Number.isNaN(dispersionsNorm[g]!) ? 0 : dispersionsNorm[g]!;
      const m = means[g]!;
      hv[g] = m > c.minMean && m < c.maxMean && dn > c.minDisp && dn < c.maxDisp ? 1 : 0;
    }
  }
  return { means, dispersions, dispersionsNorm, highlyVariable: hv, nBatches: nb, intersection };
}

/** Results of the seurat_v3 flavours. */
export interface SeuratV3Hvg {
  readonly means: Float64Array;
  readonly variances: Float64Array;
  readonly variancesNorm: Float64Array;
  /** Median rank over batches (NaN when never in a batch's top n). */
  readonly rank: Float64Array;
  readonly nBatches: Int32Array;
  readonly highlyVariable: Uint8Array;
}

/** Settings of the seurat_v3 flavours. */
export interface SeuratV3Settings {
  readonly flavor: "seurat_v3" | "seurat_v3_paper";
  readonly nTopGenes: number;
  readonly span: number;
}

/**
 * `seurat_v3`/`seurat_v3_paper` on raw counts (CSR), per batch (`batches`: one row mask each, or a
 * single null for no batches): gene means and variances, a LOESS of log10 variance on log10 mean
 * (degree 2, interpolated surface as skmisc computes it), the variance of the regularised z-scores
 * clipped at √n, ranks per batch and their median.
 */
export function seuratV3Hvg(
  x: SparseMatrix,
  batches: (Uint8Array | null)[],
  s: SeuratV3Settings,
  signal?: AbortSignal,
): SeuratV3Hvg {
  const nGenes = x.shape[1];
  const all = csrColumnMeanVar(x, { ddof: 1 });
  const data = numberData(x.data);
  const { indptr, indices } = x;
  const norms: Float64Array[] = [];
  for (const mask of batches) {
    signal?.throwIfAborted();
    const mv = mask ? csrColumnMeanVar(x, { ddof: 1, rowMask: mask }) : all;
    let nObs = 0;
    if (mask) for (let i = 0; i < mask.length; i++) nObs += mask[i]!;
    else nObs = x.shape[0];
    const notConst: number[] = [];
    for (let g = 0; g < nGenes; g++) if (mv.var[g]! > 0) notConst.push(g);
    const estimated = new Float64Array(nGenes);
    if (notConst.length) {
      const lx = notConst.map((g) => Math.log10(mv.mean[g]!));
      const ly = notConst.map((g) => Math.log10(mv.var[g]!));
      const fitted = loess(lx, ly, { span: s.span, degree: 2 });
      notConst.forEach((g, i) => {
        estimated[g] = fitted[i]!;
      });
    }
    const regStd = new Float64Array(nGenes);
    const clip = new Float64Array(nGenes);
    const sqrtN = Math.sqrt(nObs);
    for (let g = 0; g < nGenes; g++) {
      regStd[g] = Math.sqrt(10 ** estimated[g]!);
      clip[g] = regStd[g]! * sqrtN + mv.mean[g]!;
    }
    const sum = new Float64Array(nGenes);
    const sq = new Float64Array(nGenes);
    const rows = x.shape[0];
    for (let i = 0; i < rows; i++) {
      if (mask && !mask[i]) continue;
      const end = indptr[i + 1]!;
      for (let k = indptr[i]!; k < end; k++) {
        const g = indices[k]!;
        const v = Math.min(data[k]!, clip[g]!);
        sum[g]! += v;
        sq[g]! += v * v;
      }
    }
    const norm = new Float64Array(nGenes);
    for (let g = 0; g < nGenes; g++) {
      const m = mv.mean[g]!;
      norm[g] = (1 / ((nObs - 1) * regStd[g]! ** 2)) * (nObs * m * m + sq[g]! - 2 * sum[g]! * m);
    }
    norms.push(norm);
  }
  // Ranks per batch (0 = most variable); only ranks below n_top count.
  const nTop = s.nTopGenes;
  const ranks = norms.map((norm) => {
    const order = Array.from({ length: nGenes }, (_, g) => g).sort((a, b) => {
      const va = -norm[a]!;
      const vb = -norm[b]!;
      const an = Number.isNaN(va);
      const bn = Number.isNaN(vb);
      if (an || bn) return an === bn ? a - b : an ? 1 : -1;
      return va - vb || a - b;
    });
    const r = new Int32Array(nGenes);
    order.forEach((g, i) => {
      r[g] = i;
    });
    return r;
  });
  const nBatches = new Int32Array(nGenes);
  const rank = new Float64Array(nGenes);
  const variancesNorm = new Float64Array(nGenes);
  for (let g = 0; g < nGenes; g++) {
    const inTop: number[] = [];
    let vn = 0;
    for (let b = 0; b < norms.length; b++) {
      vn += norms[b]![g]!;
      const r = ranks[b]![g]!;
      if (r < nTop) inTop.push(Math.fround(r));
    }
    nBatches[g] = inTop.length;
    rank[g] = median(inTop);
    variancesNorm[g] = vn / norms.length;
  }
  const order = Array.from({ length: nGenes }, (_, g) => g).sort((a, b) => {
    const ra = rank[a]!;
    const rb = rank[b]!;
    const byRank = () => {
      const an = Number.isNaN(ra);
      const bn = Number.isNaN(rb);
      if (an || bn) return an === bn ? 0 : an ? 1 : -1;
      return ra - rb;
    };
    if (s.flavor === "seurat_v3") return byRank() || nBatches[b]! - nBatches[a]! || a - b;
    return nBatches[b]! - nBatches[a]! || byRank() || a - b;
  });
  const hv = new Uint8Array(nGenes);
  for (let r = 0; r < Math.min(nTop, nGenes); r++) hv[order[r]!] = 1;
  return { means: all.mean, variances: all.var, variancesNorm, rank, nBatches, highlyVariable: hv };
}

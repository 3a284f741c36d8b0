/**
 * `sc.pp.scale` (scanpy's `preprocessing/_scale.py`): centre each gene to mean 0 and scale it to unit
 * variance, optionally clipping at `max_value`, with scanpy's float32 rounding.
 */
import { allocArray, type DenseArray, type Matrix, type SparseMatrix } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { csrColumnMeanVar, numberData } from "../../../sdk/math/csr.js";
import { activeTable, asCsr, boolMask, f64Column, getMatrix } from "../helpers.js";

/** Params of `scale`. */
export interface ScaleParams {
  /**
   * Subtract each gene's mean (makes a sparse matrix dense); false keeps sparse data sparse.
   * @default true
   */
  zero_center?: boolean;
  /** Clip scaled values to this maximum (and to its negative when zero-centring); none by default. */
  max_value?: number;
  /** Layer to scale instead of X. */
  layer?: string;
  /** Boolean obs column: only these cells give the means and deviations and are scaled. */
  mask_obs?: string;
}

/**
 * Scale each gene to unit variance and (by default) zero mean, optionally clipping at `max_value`.
 * Writes the scaled matrix (dense when zero-centred) to X or the layer and var `mean` and `std`
 * (named `mean of <mask_obs>`/`std of <mask_obs>` with a mask).
 * @peakMemory dense_bytes * 2 + n_vars * 32
 */
export async function scale(sd: SpatialData, params: ScaleParams, ctx: OpContext): Promise<Change> {
  const op = "scale";
  const t = activeTable(sd, ctx, op);
  const x = await getMatrix(t, params.layer, op);
  const zeroCenter = params.zero_center ?? true;
  const maxValue = params.max_value ?? null;
  if (maxValue !== null && !zeroCenter)
    ctx.log("... be careful when using `max_value` without `zero_center`.");
  const mask = params.mask_obs ? boolMask(t.obs, params.mask_obs, "obs", op) : null;
  const [n, m] = x.shape as [number, number];
  ctx.progress(0.05);
  // scanpy: integer input becomes float64; float keeps its type, except that zero-centring a sparse
  // matrix subtracts a float64 mean from its dense form, which makes it float64.
  const densified = zeroCenter && x.kind !== "dense";
  const dtype = x.dtype === "float32" && !densified ? "float32" : "float64";
  const round = dtype === "float32" ? Math.fround : (v: number) => v;
  let meanVar: { mean: Float64Array; var: Float64Array };
  if (x.kind === "dense") meanVar = denseColumnMeanVar(x, mask);
  else
    meanVar = csrColumnMeanVar(asCsr(x), {
      ddof: 1,
      float32Squares: x.dtype === "float32",
      ...(mask ? { rowMask: mask } : {}),
    });
  if (x.kind === "dense") {
    // denseColumnMeanVar returns population variance; apply the n/(n−1) correction here.
    let used = n;
    if (mask) used = mask.reduce((a, b) => a + b, 0);
    if (used > 1) for (let j = 0; j < m; j++) meanVar.var[j]! *= used / (used - 1);
  }
  const mean = meanVar.mean;
  const std = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    const s = Math.sqrt(meanVar.var[j]!);
    std[j] = s === 0 ? 1 : s;
  }
  ctx.progress(0.3);
  ctx.signal.throwIfAborted();
  const hi = maxValue ?? Number.POSITIVE_INFINITY;
  const lo = maxValue !== null && zeroCenter ? -maxValue : Number.NEGATIVE_INFINITY;
  const clip = (v: number) => {
    if (maxValue === null) return v;
    if (v > maxValue) return maxValue;
    if (zeroCenter && v < -maxValue) return -maxValue;
    return v;
  };
  let out: Matrix;
  if (!zeroCenter && x.kind !== "dense") {
    // Sparse stays sparse: each stored value divided by its gene's deviation.
    const csr = asCsr(x);
    const src = numberData(csr.data);
    const data = allocArray(dtype, src.length) as Float32Array | Float64Array;
    const { indptr, indices } = csr;
    for (let i = 0; i < n; i++) {
      const end = indptr[i + 1]!;
      if (mask && !mask[i]) {
        for (let k = indptr[i]!; k < end; k++) data[k] = src[k]!;
        continue;
      }
      for (let k = indptr[i]!; k < end; k++) data[k] = clip(round(src[k]! / std[indices[k]!]!));
    }
    out = { ...csr, dtype, data } as SparseMatrix;
  } else {
    if (x.kind !== "dense" && zeroCenter) ctx.log("zero-centering a sparse array/matrix densifies it.");
    const data = allocArray(dtype, n * m) as Float32Array | Float64Array;
    if (x.kind === "dense") {
      const src = numberData(x.data);
      for (let i = 0; i < n; i++) {
        if ((i & 0xfff) === 0) ctx.signal.throwIfAborted();
        const base = i * m;
        if (mask && !mask[i]) {
          for (let j = 0; j < m; j++) data[base + j] = src[base + j]!;
          continue;
        }
        // Hot loop without closures: centre, divide (rounded as numpy rounds float32), clip.
        if (dtype === "float32") {
          for (let j = 0; j < m; j++) {
            const c = zeroCenter ? Math.fround(src[base + j]! - mean[j]!) : src[base + j]!;
            const v = Math.fround(c / std[j]!);
            data[base + j] = v > hi ? hi : v < lo ? lo : v;
          }
        } else {
          for (let j = 0; j < m; j++) {
            const c = zeroCenter ? src[base + j]! - mean[j]! : src[base + j]!;
            const v = c / std[j]!;
            data[base + j] = v > hi ? hi : v < lo ? lo : v;
          }
        }
      }
    } else {
      // Sparse input, zero-centred: the dense result starts at each gene's scaled zero.
      const csr = asCsr(x);
      const src = numberData(csr.data);
      const zeroRow = new Float64Array(m);
      for (let j = 0; j < m; j++) zeroRow[j] = clip(round(round(0 - mean[j]!) / std[j]!));
      const { indptr, indices } = csr;
      for (let i = 0; i < n; i++) {
        if ((i & 0xfff) === 0) ctx.signal.throwIfAborted();
        const base = i * m;
        const end = indptr[i + 1]!;
        if (mask && !mask[i]) {
          for (let k = indptr[i]!; k < end; k++) data[base + indices[k]!] = src[k]!;
          continue;
        }
        data.set(zeroRow, base);
        for (let k = indptr[i]!; k < end; k++) {
          const j = indices[k]!;
          data[base + j] = clip(round(round(src[k]! - mean[j]!) / std[j]!));
        }
      }
    }
    out = { kind: "dense", dtype, shape: [n, m], data } as DenseArray;
  }
  ctx.progress(0.95);
  const [meanKey, stdKey] = params.mask_obs
    ? [`mean of ${params.mask_obs}`, `std of ${params.mask_obs}`]
    : ["mean", "std"];
  ctx.progress(1);
  return {
    tables: {
      [ctx.table]: {
        ...(params.layer ? { layers: { [params.layer]: out } } : { X: out }),
        var: { [meanKey]: f64Column(mean), [stdKey]: f64Column(std) },
      },
    },
  };
}

/** Column means and population variances of a dense matrix (float32 squares rounded, as numpy's `power`). */
function denseColumnMeanVar(
  x: DenseArray,
  mask: Uint8Array | null,
): { mean: Float64Array; var: Float64Array } {
  const [n, m] = x.shape as [number, number];
  const src = numberData(x.data);
  const f32 = x.dtype === "float32";
  const sum = new Float64Array(m);
  const sq = new Float64Array(m);
  let used = 0;
  for (let i = 0; i < n; i++) {
    if (mask && !mask[i]) continue;
    used++;
    const base = i * m;
    for (let j = 0; j < m; j++) {
      const v = src[base + j]!;
      sum[j]! += v;
      sq[j]! += f32 ? Math.fround(v * v) : v * v;
    }
  }
  const mean = new Float64Array(m);
  const variance = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    mean[j] = sum[j]! / used;
    variance[j] = sq[j]! / used - mean[j]! ** 2;
  }
  return { mean, var: variance };
}

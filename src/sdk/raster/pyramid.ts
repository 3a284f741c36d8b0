/**
 * Image pyramids: levels made by 2×2 downsampling over the y and x axes, as NGFF multiscales hold
 * them. Sizes halve with floor (an odd last row or column is dropped, as xarray's `coarsen(...,
 * boundary="trim")` behind spatialdata's `to_multiscale` does: 250 → 125 → 62), so every pixel of
 * level k covers exactly 2^k × 2^k pixels of level 0 and the level transform is a plain scale by 2^k.
 *
 * Images average (dtype kept; integers rounded half up). Label images must never be averaged, since
 * the mean of two ids is a third, unrelated id: they take the top-left pixel (`nearest`, as
 * spatialdata's nearest-neighbour label downscaling) or the most frequent id of the 2×2 block (`mode`).
 *
 * Work goes output row by output row straight from the input, so building a level never needs a
 * temporary copy of a whole level; from a `RasterSource`, level 0 is read in bands.
 */
import { allocArray, type DenseArray, type DType, type TypedArray } from "../data/arrays.js";
import type { RasterLevel, RasterSource } from "../data/elements.js";
import type { Transformation } from "../data/transforms.js";
import { defaultChunks, memoryRasterSource } from "./memory-source.js";

/** How a 2×2 block becomes one pixel. */
export type DownsampleMethod = "mean" | "nearest" | "mode";

/** Options of pyramid building. */
export interface PyramidOptions {
  /** `mean` for images (default); `nearest` (top-left) or `mode` for label images. */
  readonly method?: DownsampleMethod;
  /** Stop once the longest spatial side is ≤ this many pixels (default 256). */
  readonly targetSize?: number;
  /** Most levels to make, level 0 included (default 16). */
  readonly maxLevels?: number;
  /** Chunk (tile) size along y and x recorded for each level (default 256). */
  readonly tileSize?: number;
  /** Rows of level 0 read at a time by `buildPyramidFromSource` (default 512; rounded up to even). */
  readonly bandRows?: number;
}

/** Positions of the y and x axes, which must be the last two, in that order (`y,x`, `c,y,x`, `c,z,y,x`). */
function spatialPositions(axes: readonly string[], ndim: number): { yi: number; xi: number } {
  if (axes.length !== ndim)
    throw new Error(`pyramid: ${axes.length} axis names (${axes.join(",")}) for a ${ndim}-d array`);
  const yi = ndim - 2;
  const xi = ndim - 1;
  if (ndim < 2 || axes[yi] !== "y" || axes[xi] !== "x") {
    throw new Error(`pyramid: axes must end with y,x (got ${axes.join(",")})`);
  }
  return { yi, xi };
}

/** Shapes of every level, finest first, under the stopping rules of `opts`. */
export function pyramidShapes(
  shape: readonly number[],
  axes: readonly string[],
  opts: PyramidOptions = {},
): number[][] {
  const { yi, xi } = spatialPositions(axes, shape.length);
  const target = opts.targetSize ?? 256;
  const maxLevels = opts.maxLevels ?? 16;
  if (!(maxLevels >= 1)) throw new Error(`pyramid: maxLevels must be ≥ 1, got ${maxLevels}`);
  const levels = [[...shape]];
  for (;;) {
    const cur = levels[levels.length - 1]!;
    const h = cur[yi]!;
    const w = cur[xi]!;
    if (levels.length >= maxLevels || Math.max(h, w) <= target || h < 2 || w < 2) break;
    const next = [...cur];
    next[yi] = Math.floor(h / 2);
    next[xi] = Math.floor(w / 2);
    levels.push(next);
  }
  return levels;
}

/** The NGFF level transform of level `k`: a scale of 2^k on y and x, 1 elsewhere. */
export function levelScaleTransform(axes: readonly string[], k: number): Transformation[] {
  const f = 2 ** k;
  return [{ type: "scale", scale: axes.map((a) => (a === "x" || a === "y" ? f : 1)) }];
}

const INTEGER_DTYPES = new Set<DType>(["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32"]);

/**
 * Reduce output rows `[oy0, oy1)` of every plane (exported for the served-store builder's worker). `src` holds input rows `[row0, row0 + srcH)` of each
 * of `planes` planes (plane stride `srcH·w`); `dst` is the whole output level (plane stride `outH·ow`).
 */
export function reduceRows(
  src: TypedArray,
  srcH: number,
  row0: number,
  w: number,
  dst: TypedArray,
  outH: number,
  ow: number,
  planes: number,
  oy0: number,
  oy1: number,
  method: DownsampleMethod,
  dtype: DType,
): void {
  if (dtype === "int64" || dtype === "uint64") {
    reduceRowsBig(
      src as BigInt64Array,
      srcH,
      row0,
      w,
      dst as BigInt64Array,
      outH,
      ow,
      planes,
      oy0,
      oy1,
      method,
    );
    return;
  }
  const s = src as Float64Array; // any number-valued typed array; indexing is the same
  const d = dst as Float64Array;
  const round = INTEGER_DTYPES.has(dtype);
  for (let p = 0; p < planes; p++) {
    const sp = p * srcH * w;
    const dp = p * outH * ow;
    for (let oy = oy0; oy < oy1; oy++) {
      const r0 = sp + (2 * oy - row0) * w;
      const r1 = r0 + w;
      let o = dp + oy * ow;
      if (method === "nearest") {
        for (let ox = 0; ox < ow; ox++) d[o++] = s[r0 + 2 * ox]!;
      } else if (method === "mean") {
        if (round) {
          for (let ox = 0; ox < ow; ox++) {
            const x = 2 * ox;
            d[o++] = Math.floor((s[r0 + x]! + s[r0 + x + 1]! + s[r1 + x]! + s[r1 + x + 1]! + 2) * 0.25);
          }
        } else {
          for (let ox = 0; ox < ow; ox++) {
            const x = 2 * ox;
            d[o++] = (s[r0 + x]! + s[r0 + x + 1]! + s[r1 + x]! + s[r1 + x + 1]!) * 0.25;
          }
        }
      } else {
        for (let ox = 0; ox < ow; ox++) {
          const x = 2 * ox;
          d[o++] = mode4(s[r0 + x]!, s[r0 + x + 1]!, s[r1 + x]!, s[r1 + x + 1]!);
        }
      }
    }
  }
}

/** The most frequent of four values; ties go to the earliest (top-left, top-right, bottom-left). */
function mode4<T>(a: T, b: T, c: T, d: T): T {
  if (a === b || a === c || a === d) return a;
  if (b === c || b === d) return b;
  if (c === d) return c;
  return a;
}

/** `reduceRows` for 64-bit integer arrays (BigInt arithmetic; mean rounds half up, like the others). */
function reduceRowsBig(
  s: BigInt64Array | BigUint64Array,
  srcH: number,
  row0: number,
  w: number,
  d: BigInt64Array | BigUint64Array,
  outH: number,
  ow: number,
  planes: number,
  oy0: number,
  oy1: number,
  method: DownsampleMethod,
): void {
  for (let p = 0; p < planes; p++) {
    const sp = p * srcH * w;
    const dp = p * outH * ow;
    for (let oy = oy0; oy < oy1; oy++) {
      const r0 = sp + (2 * oy - row0) * w;
      const r1 = r0 + w;
      let o = dp + oy * ow;
      for (let ox = 0; ox < ow; ox++) {
        const x = 2 * ox;
        const a = s[r0 + x]!;
        if (method === "nearest") d[o++] = a;
        else if (method === "mode") d[o++] = mode4(a, s[r0 + x + 1]!, s[r1 + x]!, s[r1 + x + 1]!);
        else {
          const sum = a + s[r0 + x + 1]! + s[r1 + x]! + s[r1 + x + 1]! + 2n;
          // BigInt division truncates toward zero; floor it for negative sums.
          let q = sum / 4n;
          if (sum < 0n && q * 4n !== sum) q -= 1n;
          d[o++] = q;
        }
      }
    }
  }
}

/** One level down: 2×2 downsampling of the last two (y, x) axes, floor sizes, dtype kept. */
export function downsample2x(
  array: DenseArray,
  axes: readonly string[],
  method: DownsampleMethod = "mean",
): DenseArray {
  const { yi, xi } = spatialPositions(axes, array.shape.length);
  const h = array.shape[yi]!;
  const w = array.shape[xi]!;
  const outH = Math.floor(h / 2);
  const ow = Math.floor(w / 2);
  const planes = array.shape.slice(0, yi).reduce((p, s) => p * s, 1);
  const outShape = [...array.shape.slice(0, yi), outH, ow];
  const dst = allocArray(array.dtype, planes * outH * ow);
  reduceRows(array.data, h, 0, w, dst, outH, ow, planes, 0, outH, method, array.dtype);
  return { kind: "dense", dtype: array.dtype, shape: outShape, data: dst };
}

function makeLevel(
  array: DenseArray,
  axes: readonly string[],
  k: number,
  tile: number,
  source?: RasterSource,
): RasterLevel {
  const chunks = source?.chunks ?? defaultChunks(array.shape, axes, tile);
  return {
    path: String(k),
    shape: array.shape,
    chunks,
    dtype: array.dtype,
    levelTransform: levelScaleTransform(axes, k),
    source: source ?? memoryRasterSource(array, chunks),
  };
}

/**
 * Every level of a pyramid over an in-memory array, finest first. Level 0 reads `base` itself (no
 * copy); each further level is made from the one before.
 */
export function buildPyramid(
  base: DenseArray,
  axes: readonly string[],
  opts: PyramidOptions = {},
): RasterLevel[] {
  const method = opts.method ?? "mean";
  const tile = opts.tileSize ?? 256;
  const n = pyramidShapes(base.shape, axes, opts).length;
  const levels = [makeLevel(base, axes, 0, tile)];
  let cur = base;
  for (let k = 1; k < n; k++) {
    cur = downsample2x(cur, axes, method);
    levels.push(makeLevel(cur, axes, k, tile));
  }
  return levels;
}

/**
 * Every level of a pyramid whose level 0 is a `RasterSource` (a zarr array, a TIFF, memory). Level 0
 * stays that source; level 1 is made from bands of `bandRows` rows read one at a time, so at most one
 * band of level 0 is in memory; the coarser levels follow from level 1 in memory.
 */
export async function buildPyramidFromSource(
  source: RasterSource,
  axes: readonly string[],
  opts: PyramidOptions = {},
  signal?: AbortSignal,
): Promise<RasterLevel[]> {
  const method = opts.method ?? "mean";
  const tile = opts.tileSize ?? 256;
  const shapes = pyramidShapes(source.shape, axes, opts);
  const { yi, xi } = spatialPositions(axes, source.shape.length);
  const level0: RasterLevel = {
    path: "0",
    shape: source.shape,
    chunks: source.chunks,
    dtype: source.dtype,
    levelTransform: levelScaleTransform(axes, 0),
    source,
  };
  if (shapes.length === 1) return [level0];

  const h = source.shape[yi]!;
  const w = source.shape[xi]!;
  const outH = Math.floor(h / 2);
  const ow = Math.floor(w / 2);
  const planes = source.shape.slice(0, yi).reduce((p, s) => p * s, 1);
  const dst = allocArray(source.dtype, planes * outH * ow);
  const band = Math.max(2, Math.ceil((opts.bandRows ?? 512) / 2) * 2);
  const lead = source.shape.slice(0, yi).map(() => null);
  for (let y0 = 0; y0 < 2 * outH; y0 += band) {
    signal?.throwIfAborted();
    const y1 = Math.min(y0 + band, 2 * outH);
    const part = await source.read([...lead, [y0, y1], null], signal);
    if (part.data.length !== planes * (y1 - y0) * w) {
      throw new Error(
        `pyramid: source returned ${part.data.length} values for rows [${y0}, ${y1}) of shape [${source.shape.join(", ")}]`,
      );
    }
    reduceRows(part.data, y1 - y0, y0, w, dst, outH, ow, planes, y0 / 2, y1 / 2, method, source.dtype);
  }
  let cur: DenseArray = {
    kind: "dense",
    dtype: source.dtype,
    shape: [...source.shape.slice(0, yi), outH, ow],
    data: dst,
  };
  const levels = [level0, makeLevel(cur, axes, 1, tile)];
  for (let k = 2; k < shapes.length; k++) {
    cur = downsample2x(cur, axes, method);
    levels.push(makeLevel(cur, axes, k, tile));
  }
  return levels;
}

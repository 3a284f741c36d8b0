/**
 * A `RasterSource` over an in-memory dense array: what a generated or freshly computed image level
 * (a pyramid level, the demo's morphology image) is read through, with the same selection semantics
 * as the zarr and TIFF sources.
 */
import { allocArray, type DenseArray, type DType, sizeOfShape } from "../data/arrays.js";
import type { AxisSelection, RasterSource } from "../data/elements.js";

/** A normalised selection of one axis: `index` drops the axis; otherwise `[start, start+length)`. */
interface AxisRange {
  readonly start: number;
  readonly length: number;
  /** True for an integer index (the axis is dropped from the result, as numpy and zarrita do). */
  readonly index: boolean;
}

/**
 * Normalise one axis selection against its size. Integers may be negative (counted from the end) and
 * must be in range; ranges follow Python slice rules (negative ends count from the end, ends are
 * clamped, an inverted range is empty).
 */
function normaliseAxis(sel: AxisSelection | undefined, size: number, axis: number): AxisRange {
  if (sel === null || sel === undefined) return { start: 0, length: size, index: false };
  if (typeof sel === "number") {
    if (!Number.isInteger(sel))
      throw new Error(`raster selection: axis ${axis} index ${sel} is not an integer`);
    const i = sel < 0 ? sel + size : sel;
    if (i < 0 || i >= size)
      throw new Error(`raster selection: axis ${axis} index ${sel} is out of range for size ${size}`);
    return { start: i, length: 1, index: true };
  }
  if (!Array.isArray(sel) || sel.length !== 2)
    throw new Error(`raster selection: axis ${axis} must be an index, [start, stop) or null`);
  const clamp = (v: number) => {
    if (!Number.isInteger(v)) throw new Error(`raster selection: axis ${axis} bound ${v} is not an integer`);
    const w = v < 0 ? v + size : v;
    return Math.min(Math.max(w, 0), size);
  };
  const start = clamp(sel[0]);
  const stop = clamp(sel[1]);
  return { start, length: Math.max(0, stop - start), index: false };
}

/**
 * The region of `array` that `selection` names, as a new C-order dense array (integer-indexed axes
 * are dropped). Selecting everything returns `array` itself: arrays of the model are never written
 * after they are made, so sharing is safe and saves a copy of a whole level.
 */
export function selectRegion(array: DenseArray, selection?: readonly AxisSelection[]): DenseArray {
  const shape = array.shape;
  const nd = shape.length;
  const sel = selection ?? [];
  if (sel.length > nd) throw new Error(`raster selection: ${sel.length} axis selections for a ${nd}-d array`);
  const ranges = shape.map((size, a) => normaliseAxis(sel[a], size, a));
  if (ranges.every((r, a) => !r.index && r.start === 0 && r.length === shape[a])) return array;

  const outShape = ranges.filter((r) => !r.index).map((r) => r.length);
  const total = sizeOfShape(ranges.map((r) => r.length));
  const src = array.data;
  const out = allocArray(array.dtype, total);
  if (total === 0) return { kind: "dense", dtype: array.dtype, shape: outShape, data: out };

  // Strides of the source, in elements.
  const strides = new Array<number>(nd);
  let acc = 1;
  for (let a = nd - 1; a >= 0; a--) {
    strides[a] = acc;
    acc *= shape[a]!;
  }
  // Trailing axes taken whole merge into one contiguous run together with the axis before them.
  let k = nd - 1;
  while (k > 0 && ranges[k]!.start === 0 && ranges[k]!.length === shape[k]) k--;
  const run = ranges[k]!.length * strides[k]!;
  const runStart = ranges[k]!.start * strides[k]!;

  // Odometer over the axes before k.
  const idx = new Array<number>(k).fill(0);
  const copy = out as unknown as { set(a: ArrayLike<number | bigint>, offset: number): void };
  const view = src as unknown as { subarray(a: number, b: number): ArrayLike<number | bigint> };
  let pos = 0;
  for (;;) {
    let off = runStart;
    for (let a = 0; a < k; a++) off += (ranges[a]!.start + idx[a]!) * strides[a]!;
    copy.set(view.subarray(off, off + run), pos);
    pos += run;
    let a = k - 1;
    while (a >= 0) {
      idx[a]!++;
      if (idx[a]! < ranges[a]!.length) break;
      idx[a] = 0;
      a--;
    }
    if (a < 0) break;
  }
  return { kind: "dense", dtype: array.dtype, shape: outShape, data: out };
}

/**
 * Default chunk shape for an array with the given axes: `tile` (256) along y and x, clamped to the
 * array, and 1 along every other axis (one channel or plane per chunk), the layout tiled viewers read.
 */
export function defaultChunks(shape: readonly number[], axes: readonly string[], tile = 256): number[] {
  return shape.map((s, a) => (axes[a] === "x" || axes[a] === "y" ? Math.max(1, Math.min(tile, s)) : 1));
}

/** A `RasterSource` reading from an in-memory array; `chunks` is metadata only (default: the whole array). */
export class MemoryRasterSource implements RasterSource {
  /** Shape of the array, C order. */
  readonly shape: readonly number[];
  /** Element type of the array. */
  readonly dtype: DType;
  /** Chunk (tile) shape reported to readers; the data itself is one contiguous buffer. */
  readonly chunks: readonly number[];

  constructor(
    /** The pixels, C order. */
    readonly array: DenseArray,
    chunks?: readonly number[],
  ) {
    if (sizeOfShape(array.shape) !== array.data.length) {
      throw new Error(
        `memory raster: shape [${array.shape.join(", ")}] does not match ${array.data.length} values`,
      );
    }
    if (chunks && chunks.length !== array.shape.length) {
      throw new Error(
        `memory raster: chunks [${chunks.join(", ")}] do not match shape [${array.shape.join(", ")}]`,
      );
    }
    this.shape = array.shape;
    this.dtype = array.dtype;
    this.chunks = chunks ?? array.shape.map((s) => Math.max(1, s));
  }

  /** Read a region (see `selectRegion`); rejects with the signal's reason if it is already aborted. */
  async read(selection?: readonly AxisSelection[], signal?: AbortSignal): Promise<DenseArray> {
    signal?.throwIfAborted();
    return selectRegion(this.array, selection);
  }
}

/** Make a `RasterSource` over an in-memory array. */
export function memoryRasterSource(array: DenseArray, chunks?: readonly number[]): MemoryRasterSource {
  return new MemoryRasterSource(array, chunks);
}

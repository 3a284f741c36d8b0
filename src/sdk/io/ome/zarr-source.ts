/**
 * A {@link RasterSource} over one zarr array (one pyramid level), read through zarrita. Only the chunks a
 * selection touches are fetched and decoded, straight into a SharedArrayBuffer.
 */

import type { Readable } from "@zarrita/storage";
import * as zarr from "zarrita";
import {
  allocArray,
  BYTES_PER_ELEMENT,
  type DenseArray,
  type DType,
  sizeOfShape,
  type TypedArray,
  toShared,
} from "../../data/arrays.js";
import type { AxisSelection, RasterSource } from "../../data/elements.js";
import { type AxisMapping, exposedShape, fileSelection, selectionShape } from "./axes.js";
import type { ChunkCheck, KeyTrackingStore } from "./store.js";

/** The data-model dtype of a zarrita dtype, or `undefined` for types a raster cannot hold. */
export function modelDtype(d: string): DType | undefined {
  switch (d) {
    case "bool":
    case "int8":
    case "uint8":
    case "int16":
    case "uint16":
    case "int32":
    case "uint32":
    case "int64":
    case "uint64":
    case "float32":
    case "float64":
      return d;
    default:
      return undefined;
  }
}

type ZArray = zarr.Array<zarr.DataType, Readable>;

/** Options of {@link zarrRasterSource}. */
export interface ZarrSourceOptions {
  /** Key of the array in error messages (`/images/x/s0`). */
  readonly where: string;
  /** The store wrapper the array was opened on, so that a failing chunk can be named. */
  readonly tracker?: KeyTrackingStore;
}

/** Wrap an opened zarrita array as a raster source exposing the axes `mapping` chooses. */
export function zarrRasterSource(arr: ZArray, mapping: AxisMapping, opts: ZarrSourceOptions): RasterSource {
  const dtype = modelDtype(arr.dtype);
  if (!dtype) throw new Error(`${opts.where}: data type "${arr.dtype}" is not supported for images`);
  const fileShape = arr.shape;
  const shape = exposedShape(mapping, fileShape);
  const chunks = exposedShape(mapping, arr.chunks);
  return {
    shape,
    dtype,
    chunks,
    async read(selection?: readonly AxisSelection[], signal?: AbortSignal): Promise<DenseArray> {
      const fsel = fileSelection(mapping, fileShape, selection, opts.where);
      const outShape = selectionShape(shape, selection);
      const zsel = fsel.map((s) => (s === null || typeof s === "number" ? s : zarr.slice(s[0], s[1])));
      let chunk: zarr.Chunk<zarr.DataType>;
      try {
        chunk = await zarr.get(arr, zsel, { useSharedArrayBuffer: true, ...(signal ? { signal } : {}) });
      } catch (err) {
        if (signal?.aborted) throw err;
        throw await explainFailure(arr, fsel, opts, err as Error);
      }
      const data = toCOrder(chunk, dtype);
      if (data.length !== sizeOfShape(outShape)) {
        throw new Error(
          `${opts.where}: read ${data.length} values for a selection of shape [${outShape.join(",")}]`,
        );
      }
      return { kind: "dense", dtype, shape: outShape, data };
    },
  };
}

/** The chunk's values as a C-ordered typed array on a SharedArrayBuffer. */
function toCOrder(chunk: zarr.Chunk<zarr.DataType>, dtype: DType): TypedArray {
  const { shape, stride } = chunk;
  let src: TypedArray;
  if (chunk.data instanceof zarr.BoolArray) {
    const b = chunk.data;
    src = new Uint8Array(b.buffer, b.byteOffset, b.length);
  } else {
    src = chunk.data as TypedArray;
  }
  let expect = 1;
  let contiguous = true;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i]! > 1 && stride[i] !== expect) contiguous = false;
    expect *= shape[i]!;
  }
  if (contiguous) return toShared(src.length === expect ? src : (src.subarray(0, expect) as TypedArray));
  // A non-C order (zarr v2 `order: "F"`, or a transpose codec): gather into C order.
  const out = allocArray(dtype, expect);
  const n = shape.length;
  const idx = new Array<number>(n).fill(0);
  const o = out as unknown as { [i: number]: number | bigint };
  const s = src as unknown as { [i: number]: number | bigint };
  for (let k = 0; k < expect; k++) {
    let off = 0;
    for (let d = 0; d < n; d++) off += idx[d]! * stride[d]!;
    o[k] = s[off]!;
    for (let d = n - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
  return out;
}

/**
 * After a failed read, find which chunk fails by decoding the selection's chunks one at a time, and
 * build an error naming its store key.
 */
async function explainFailure(
  arr: ZArray,
  fsel: readonly AxisSelection[],
  opts: ZarrSourceOptions,
  err: Error,
): Promise<Error> {
  const ranges = fsel.map((s, i): [number, number] => {
    const c = arr.chunks[i]!;
    if (s === null) return [0, Math.ceil(arr.shape[i]! / c)];
    if (typeof s === "number") return [Math.floor(s / c), Math.floor(s / c) + 1];
    return [Math.floor(s[0] / c), Math.ceil(s[1] / c)];
  });
  const coords = ranges.map((r) => r[0]);
  let guard = 0;
  while (guard++ < 100_000) {
    try {
      await arr.getChunk([...coords]);
    } catch (inner) {
      const key = opts.tracker?.lastKey;
      return new Error(
        `${opts.where}: cannot decode chunk ${key ? `"${key}"` : `(${coords.join(",")})`}: ${(inner as Error).message}`,
        { cause: inner },
      );
    }
    let d = coords.length - 1;
    for (; d >= 0; d--) {
      if (++coords[d]! < ranges[d]![1]) break;
      coords[d] = ranges[d]![0];
    }
    if (d < 0) break;
  }
  return new Error(`${opts.where}: cannot read pixels: ${err.message}`, { cause: err });
}

/**
 * A check of blosc chunk headers for an array whose only byte codec is blosc: numcodecs' blosc decodes
 * a truncated or garbled chunk into garbage (or nothing) without an error, so the header's compressed
 * size must match the chunk's length and its uncompressed size the chunk shape.
 */
export function bloscHeaderCheck(expectedBytes: number): ChunkCheck {
  return (key, b) => {
    if (b.length < 16)
      throw new Error(`${key}: corrupt blosc chunk (${b.length} bytes, shorter than the 16-byte header)`);
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const nbytes = dv.getUint32(4, true);
    const cbytes = dv.getUint32(12, true);
    if (cbytes !== b.length) {
      throw new Error(
        `${key}: corrupt blosc chunk (its header says ${cbytes} compressed bytes, the chunk has ${b.length})`,
      );
    }
    if (nbytes !== expectedBytes) {
      throw new Error(
        `${key}: corrupt blosc chunk (it decompresses to ${nbytes} bytes, the chunk shape needs ${expectedBytes})`,
      );
    }
  };
}

/**
 * The chunk check for an array from its raw metadata (`.zarray` or `zarr.json`), when one applies:
 * blosc as the only compressor with no filters (v2), or `bytes` then `blosc` (v3).
 */
export function chunkCheckFor(
  meta: Readonly<Record<string, unknown>>,
  chunkShape: readonly number[],
  dtype: DType,
): ChunkCheck | undefined {
  const expected = sizeOfShape(chunkShape) * BYTES_PER_ELEMENT[dtype];
  if (meta.zarr_format === 2) {
    const comp = meta.compressor as { id?: unknown } | null | undefined;
    const filters = meta.filters as unknown[] | null | undefined;
    if (comp?.id === "blosc" && (!filters || filters.length === 0)) return bloscHeaderCheck(expected);
    return undefined;
  }
  const codecs = meta.codecs as { name?: unknown }[] | undefined;
  if (
    Array.isArray(codecs) &&
    codecs.length === 2 &&
    codecs[0]?.name === "bytes" &&
    codecs[1]?.name === "blosc"
  ) {
    return bloscHeaderCheck(expected);
  }
  return undefined;
}

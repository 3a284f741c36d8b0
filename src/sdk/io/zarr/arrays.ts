/**
 * Reading whole zarr arrays into the model's typed arrays, and writing zarr v3 arrays the way
 * anndata 0.12 / zarr-python 3 write them (`bytes` + `zstd`, strings as `vlen-utf8` + `zstd`).
 *
 * Reads decode straight into SharedArrayBuffer where zarrita can; writes go chunk by chunk through a
 * bounded queue so that at most a few encoded chunks exist beside the source array.
 */
import type { Mutable, Readable } from "@zarrita/storage";
import * as zarr from "zarrita";
import {
  allocArray,
  BYTES_PER_ELEMENT,
  type DType,
  type IndexArray,
  sizeOfShape,
  type TypedArray,
  toShared,
} from "../../data/arrays.js";
import { checkReadSize } from "../memory-budget.js";
import { checkArrayGeometry, registerCodecs } from "./codecs.js";

/** A zarrita array on any readable store. */
export type ZarrArray = zarr.Array<zarr.DataType, Readable>;

/** A decoded numeric (or bool) array. */
export interface NumericRead {
  readonly kind: "numeric";
  readonly dtype: DType;
  readonly shape: number[];
  readonly data: TypedArray;
}

/** A decoded string array (v3 `string`, v2 `|O` + vlen-utf8, or fixed-width `<U`/`|S`). */
export interface StringRead {
  readonly kind: "string";
  readonly shape: number[];
  readonly values: string[];
}

/** What `readZarrArray` returns. */
export type ArrayRead = NumericRead | StringRead;

const NUMERIC: Record<string, DType> = {
  bool: "bool",
  int8: "int8",
  uint8: "uint8",
  int16: "int16",
  uint16: "uint16",
  int32: "int32",
  uint32: "uint32",
  int64: "int64",
  uint64: "uint64",
  float32: "float32",
  float64: "float64",
  // float16 has no model dtype; it is widened to float32 on read.
  float16: "float32",
};

/** Classify a zarrita data type: a model dtype, `"string"`, or null when Tessera cannot read it. */
export function classifyZarrDtype(dataType: unknown): DType | "string" | null {
  if (typeof dataType !== "string") return null;
  if (dataType in NUMERIC) return NUMERIC[dataType] ?? null;
  if (dataType === "string" || dataType === "v2:object" || /^v2:[US]\d+$/.test(dataType)) return "string";
  return null;
}

/** zarrita 1-d slice selection for rows `[start, stop)` of an array of rank `rank`. */
function rowSelection(rank: number, start: number, stop: number): (zarr.Slice | null)[] {
  return [zarr.slice(start, stop), ...new Array<null>(Math.max(0, rank - 1)).fill(null)];
}

/** Copy a zarrita chunk's data into a model typed array (on SAB). */
function toModelArray(data: unknown, dataType: string, length: number): TypedArray {
  if (data instanceof zarr.BoolArray) {
    return toShared(new Uint8Array(data.buffer, data.byteOffset, data.length));
  }
  if (dataType === "float16") {
    const out = allocArray("float32", length) as Float32Array;
    const src = data as ArrayLike<number>;
    for (let i = 0; i < length; i++) out[i] = src[i] ?? 0;
    return out;
  }
  return toShared(data as TypedArray);
}

/** String values out of any zarrita string-like chunk. */
function toStrings(data: unknown): string[] {
  if (data instanceof zarr.UnicodeStringArray || data instanceof zarr.ByteStringArray) {
    const out = new Array<string>(data.length);
    for (let i = 0; i < data.length; i++) out[i] = data.get(i);
    return out;
  }
  const arr = data as ArrayLike<unknown>;
  const out = new Array<string>(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    out[i] = v === null || v === undefined ? "" : typeof v === "string" ? v : String(v);
  }
  return out;
}

/**
 * Read an array (or rows `[start, stop)` of its first axis) into a model value. Numeric data lands on a
 * SharedArrayBuffer; fixed-width and variable-length strings become JS strings.
 */
export async function readZarrArray(
  arr: ZarrArray,
  rows?: { start: number; stop: number },
): Promise<ArrayRead> {
  registerCodecs();
  const kind = classifyZarrDtype(arr.dtype);
  if (kind === null) throw new Error(`unsupported zarr data type ${JSON.stringify(arr.dtype)}`);
  // A shape or chunk shape of zeros, negatives or fractions would stall zarrita's indexer.
  checkArrayGeometry(arr as unknown as Parameters<typeof checkArrayGeometry>[0]);
  if (arr.shape.length === 0) {
    // zarrita returns a 0-d array's value as a bare scalar.
    const v = (await zarr.get(arr, null)) as unknown;
    if (kind === "string")
      return { kind: "string", shape: [], values: [v === null || v === undefined ? "" : String(v)] };
    const data = allocArray(kind, 1);
    (data as unknown as unknown[])[0] = kind === "bool" ? (v ? 1 : 0) : v;
    return { kind: "numeric", dtype: kind, shape: [], data };
  }
  const sel = rows ? rowSelection(arr.shape.length, rows.start, rows.stop) : null;
  if (arr.shape.some((s) => s === 0) || (rows && rows.stop <= rows.start)) {
    // zarrita's indexer cannot iterate an empty selection.
    const shape = rows ? [Math.max(0, rows.stop - rows.start), ...arr.shape.slice(1)] : [...arr.shape];
    if (kind === "string") return { kind: "string", shape, values: [] };
    return { kind: "numeric", dtype: kind, shape, data: allocArray(kind, 0) };
  }
  if (kind === "string") {
    const res = await zarr.get(arr, sel);
    return { kind: "string", shape: [...res.shape], values: toStrings(res.data) };
  }
  const rowsRead = rows
    ? Math.max(0, Math.min(rows.stop, arr.shape[0] ?? 0) - rows.start)
    : (arr.shape[0] ?? 0);
  // What the array declares, against memory, before zarrita allocates it.
  checkReadSize(
    rowsRead * sizeOfShape(arr.shape.slice(1)) * BYTES_PER_ELEMENT[kind],
    `zarr array ${(arr as { path?: string }).path ?? ""}`,
  );
  const res = await zarr.get(arr, sel, { useSharedArrayBuffer: typeof SharedArrayBuffer !== "undefined" });
  const shape = [...res.shape];
  return { kind: "numeric", dtype: kind, shape, data: toModelArray(res.data, arr.dtype, sizeOfShape(shape)) };
}

/** Read a 0-d (or one-element) array as a JS scalar. */
export async function readZarrScalar(arr: ZarrArray): Promise<number | bigint | string | boolean> {
  const r = await readZarrArray(arr);
  if (r.kind === "string") return r.values[0] ?? "";
  return scalarOf(r.data, r.dtype);
}

/** Element 0 of a typed array as a JS scalar: bool as boolean, int64 as number when exact, else bigint. */
export function scalarOf(data: TypedArray, dtype: DType): number | bigint | boolean {
  const v = data[0] ?? 0;
  if (dtype === "bool") return v !== 0;
  if (typeof v === "bigint") {
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
  }
  return v;
}

/** Read a string array's values. */
export async function readZarrStrings(arr: ZarrArray): Promise<string[]> {
  const r = await readZarrArray(arr);
  if (r.kind !== "string") throw new Error(`expected a string array, found ${arr.dtype}`);
  return r.values;
}

/**
 * Convert an index array (indptr/indices of any integer dtype) to the model's `IndexArray`: Int32 when
 * every value fits, else Float64 (exact to 2^53). Int32 input is returned as is.
 */
export function toIndexArray(a: TypedArray): IndexArray {
  if (a instanceof Int32Array) return toShared(a);
  let fits = true;
  for (let i = 0; i < a.length; i++) {
    const v = Number(a[i]);
    if (v > 2147483647 || v < -2147483648) {
      fits = false;
      break;
    }
  }
  const out = allocArray(fits ? "int32" : "float64", a.length) as IndexArray;
  for (let i = 0; i < a.length; i++) out[i] = Number(a[i]);
  return out;
}

/** Target bytes of one written chunk (zarr-python's guidance is 1-10 MB; small keeps zip CDs small too). */
export const TARGET_CHUNK_BYTES = 2 * 1024 * 1024;

/**
 * Chunk shape for an array: whole trailing axes while they fit in `target` bytes, splitting the first
 * axis (then the next) as needed. A chunk never has a zero extent, even for empty arrays.
 */
export function chooseChunkShape(
  shape: readonly number[],
  bytesPerElement: number,
  target = TARGET_CHUNK_BYTES,
): number[] {
  const chunk = shape.map((s) => Math.max(1, s));
  const budget = Math.max(1, Math.floor(target / Math.max(1, bytesPerElement)));
  for (let d = 0; d < chunk.length; d++) {
    const inner = chunk.slice(d + 1).reduce((p, s) => p * s, 1);
    if (inner <= budget) {
      chunk[d] = Math.max(1, Math.min(chunk[d] ?? 1, Math.floor(budget / inner)));
      break;
    }
    chunk[d] = 1;
  }
  return chunk;
}

/** Codec list anndata 0.12 writes for a numeric dtype (1-byte types carry no endian). */
export function numericCodecs(dtype: DType, compressor?: zarr.CodecMetadata): zarr.CodecMetadata[] {
  const single = dtype === "bool" || dtype === "int8" || dtype === "uint8";
  return [
    single
      ? ({ name: "bytes" } as unknown as zarr.CodecMetadata)
      : { name: "bytes", configuration: { endian: "little" } },
    compressor ?? { name: "zstd", configuration: { level: 0, checksum: false } },
  ];
}

/** Codec list for variable-length strings. */
export const STRING_CODECS: zarr.CodecMetadata[] = [
  { name: "vlen-utf8", configuration: {} },
  { name: "zstd", configuration: { level: 0, checksum: false } },
];

/** A queue that runs at most `limit` tasks at once (zarrita's default starts every chunk together). */
function boundedQueue(limit: number): { add(fn: () => Promise<void>): void; onIdle(): Promise<Array<void>> } {
  const waiting: (() => Promise<void>)[] = [];
  let running = 0;
  let failure: unknown;
  let settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;
  const pump = () => {
    while (running < limit && waiting.length > 0 && failure === undefined) {
      const fn = waiting.shift() as () => Promise<void>;
      running++;
      fn().then(
        () => {
          running--;
          pump();
        },
        (err) => {
          running--;
          failure ??= err;
          pump();
        },
      );
    }
    if (settle && running === 0 && (waiting.length === 0 || failure !== undefined)) {
      if (failure !== undefined) settle.reject(failure);
      else settle.resolve();
    }
  };
  return {
    add(fn) {
      waiting.push(fn);
      pump();
    },
    onIdle() {
      return new Promise<Array<void>>((resolve, reject) => {
        settle = { resolve: () => resolve([]), reject };
        pump();
      });
    },
  };
}

/** Fill value anndata uses per dtype (a JSON number even for int64: zarrita writes it verbatim). */
function fillFor(dtype: DType): number | boolean {
  if (dtype === "bool") return false;
  return dtype.startsWith("float") ? 0.0 : 0;
}

/** Options of `writeZarrArray`. */
export interface WriteArrayOptions {
  /** Node attributes (anndata `encoding-type` etc.). */
  attributes?: Record<string, unknown>;
  /** Override the chunk shape. */
  chunkShape?: number[];
  /** Chunks encoded at once (default 2). */
  concurrency?: number;
  /** Bytes-to-bytes compressor after the `bytes` codec (default zstd; numeric arrays only). */
  compressor?: zarr.CodecMetadata;
}

/** Numeric source of `writeZarrArray`. */
export interface NumericSource {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly data: TypedArray;
}

/** String source of `writeZarrArray` (`null` is written as an empty string). */
export interface StringSource {
  readonly dtype: "string";
  readonly shape: readonly number[];
  readonly values: readonly (string | null)[];
}

/** Write a numeric/bool or string array as a zarr v3 array at `location`. */
export async function writeZarrArray(
  location: zarr.Location<Mutable>,
  src: NumericSource | StringSource,
  opts: WriteArrayOptions = {},
): Promise<void> {
  registerCodecs();
  const shape = [...src.shape];
  const isString = src.dtype === "string";
  const length = sizeOfShape(shape);
  const have = isString ? (src as StringSource).values.length : (src as NumericSource).data.length;
  if (have !== length) {
    throw new Error(`${location.path}: ${have} values do not fill shape [${shape.join(", ")}]`);
  }
  const bpe = isString ? 16 : ((src as NumericSource).data.BYTES_PER_ELEMENT ?? 1);
  const chunkShape = opts.chunkShape ?? chooseChunkShape(shape, bpe);
  const arr = await zarr.create(location, {
    shape,
    chunkShape,
    dtype: (isString ? "string" : src.dtype) as zarr.DataType,
    codecs: isString ? STRING_CODECS : numericCodecs(src.dtype as DType, opts.compressor),
    fillValue: (isString ? "" : fillFor(src.dtype as DType)) as never,
    attributes: opts.attributes ?? {},
  });
  if (shape.length === 0) {
    const v = isString ? ((src as StringSource).values[0] ?? "") : (src as NumericSource).data[0];
    await zarr.set(arr, null, (src.dtype === "bool" ? v !== 0 : v) as never);
    return;
  }
  if (length === 0) return;
  const data = isString ? [...(src as StringSource).values].map((v) => v ?? "") : (src as NumericSource).data;
  const stride = shape.map((_, i) => shape.slice(i + 1).reduce((p, s) => p * s, 1));
  await zarr.set(arr, null, { data, shape, stride } as never, {
    createQueue: () => boundedQueue(opts.concurrency ?? 2),
  });
}

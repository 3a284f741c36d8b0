/**
 * Typed arrays and the array values of the data model.
 *
 * Every value here is a plain, tagged object (a `kind` field) so that it survives structured cloning
 * into a worker thread unchanged. Large buffers live on `SharedArrayBuffer`, so a worker reads them
 * without a copy. Nothing ever writes into an array that a committed object holds: a change makes a
 * new array.
 */
import { type StringBacking, stringBytes } from "./lazy-strings.js";

/** Element types of numeric arrays, named as numpy names them. `bool` is stored one byte per value. */
export type DType =
  | "bool"
  | "int8"
  | "uint8"
  | "int16"
  | "uint16"
  | "int32"
  | "uint32"
  | "int64"
  | "uint64"
  | "float32"
  | "float64";

/** Any JS typed array the model uses for numeric data. */
export type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/** Index arrays of sparse matrices: Int32 while offsets fit, Float64 (exact to 2^53) beyond. */
export type IndexArray = Int32Array | Float64Array;

/** An n-dimensional numeric array in C (row-major) order. */
export interface DenseArray<T extends TypedArray = TypedArray> {
  readonly kind: "dense";
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly data: T;
}

/** A compressed sparse matrix (CSR: rows compressed; CSC: columns compressed). */
export interface SparseMatrix {
  readonly kind: "csr" | "csc";
  readonly dtype: DType;
  readonly shape: readonly [number, number];
  readonly data: TypedArray;
  readonly indices: IndexArray;
  readonly indptr: IndexArray;
}

/**
 * A 1-d or n-d array of strings; `null` marks a missing value (nullable-string-array).
 *
 * With a `backing` (a range, or UTF-8 bytes: `lazy-strings.ts`) the array holds no JS string per value
 * and `values` is materialised on first access; code that handles large arrays reads them through
 * `stringCount` / `stringAt` / `stringLookup` / `takeStrings` instead, which never materialise.
 */
export interface StringArray {
  readonly kind: "string";
  readonly shape: readonly number[];
  readonly values: readonly (string | null)[];
  /** Where the values really are, for an array built without JS strings. */
  readonly backing?: StringBacking;
}

/** Integer or boolean values with a missing-value mask (`mask[i] = 1` means missing), as anndata stores them. */
export interface NullableArray {
  readonly kind: "nullable";
  readonly dtype: DType;
  readonly data: TypedArray;
  readonly mask: Uint8Array;
}

/** A categorical: Int32 codes (-1 = missing) into a list of categories. */
export interface Categorical {
  readonly kind: "categorical";
  readonly codes: Int32Array;
  readonly categories: DenseArray | StringArray;
  readonly ordered: boolean;
}

/** A matrix as a table's X, layers, obsp or varp hold it. */
export type Matrix = DenseArray | SparseMatrix;

/** Constructor of the typed array that holds each dtype. */
export const TYPED_ARRAY_OF: Record<
  DType,
  new (
    buffer: ArrayBufferLike,
    offset?: number,
    length?: number,
  ) => TypedArray
> = {
  bool: Uint8Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  float32: Float32Array,
  float64: Float64Array,
};

/** Bytes per element of each dtype. */
export const BYTES_PER_ELEMENT: Record<DType, number> = {
  bool: 1,
  int8: 1,
  uint8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  uint32: 4,
  int64: 8,
  uint64: 8,
  float32: 4,
  float64: 8,
};

/** Whether SharedArrayBuffer exists here (browsers without cross-origin isolation lack it). */
const HAS_SAB = typeof SharedArrayBuffer !== "undefined";

/**
 * Allocate a zero-filled typed array of `length` elements for `dtype`, on a SharedArrayBuffer where
 * the platform has one so that worker threads can read it without a copy.
 */
export function allocArray(dtype: DType, length: number): TypedArray {
  const Ctor = TYPED_ARRAY_OF[dtype];
  const bytes = length * BYTES_PER_ELEMENT[dtype];
  const buffer = HAS_SAB ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  return new Ctor(buffer, 0, length);
}

/** Copy `src` into a new shared array of the same type (used when a reader got a private buffer). */
export function toShared<T extends TypedArray>(src: T): T {
  if (!HAS_SAB || src.buffer instanceof SharedArrayBuffer) return src;
  const Ctor = src.constructor as new (buffer: ArrayBufferLike, offset?: number, length?: number) => T;
  const out = new Ctor(new SharedArrayBuffer(src.byteLength), 0, src.length);
  (out as unknown as { set(a: ArrayLike<unknown>): void }).set(src as unknown as ArrayLike<unknown>);
  return out;
}

/** The dtype that a typed array holds (`Uint8Array` reads as `uint8`; pass `bool` yourself where meant). */
export function dtypeOf(a: TypedArray): DType {
  if (a instanceof Float64Array) return "float64";
  if (a instanceof Float32Array) return "float32";
  if (a instanceof Int32Array) return "int32";
  if (a instanceof Uint32Array) return "uint32";
  if (a instanceof Int16Array) return "int16";
  if (a instanceof Uint16Array) return "uint16";
  if (a instanceof Int8Array) return "int8";
  if (a instanceof BigInt64Array) return "int64";
  if (a instanceof BigUint64Array) return "uint64";
  return "uint8";
}

/** Make a dense array value; `shape` defaults to 1-d. */
export function dense<T extends TypedArray>(
  data: T,
  shape?: readonly number[],
  dtype?: DType,
): DenseArray<T> {
  return { kind: "dense", dtype: dtype ?? dtypeOf(data), shape: shape ?? [data.length], data };
}

/** Make a 1-d string array value. */
export function strings(values: readonly (string | null)[]): StringArray {
  return { kind: "string", shape: [values.length], values };
}

/** Product of a shape (1 for a 0-d array). */
export function sizeOfShape(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

/**
 * The shortest decimal that reads back as the same float32, as a JS number: float32 data printed
 * as float64 would show noise digits (0.6039999723434448 for 0.604).
 */
export function shortFloat32(v: number): number {
  if (!Number.isFinite(v) || v === 0) return v;
  for (let p = 1; p < 9; p++) {
    const d = Number(v.toPrecision(p));
    if (Math.fround(d) === v) return d;
  }
  return v;
}

/** Read element `i` of a typed array as a JS number (int64 converted; exact below 2^53). */
export function numberAt(a: TypedArray, i: number): number {
  const v = a[i];
  return typeof v === "bigint" ? Number(v) : (v as number);
}

/** Whether a value is a DenseArray, SparseMatrix, StringArray, NullableArray or Categorical. */
export function isArrayValue(
  v: unknown,
): v is DenseArray | SparseMatrix | StringArray | NullableArray | Categorical {
  if (v === null || typeof v !== "object") return false;
  const k = (v as { kind?: unknown }).kind;
  return (
    k === "dense" || k === "csr" || k === "csc" || k === "string" || k === "nullable" || k === "categorical"
  );
}

/** In-memory bytes a value's buffers take (strings counted at 2 bytes per char plus overhead). */
export function memoryBytes(
  v: DenseArray | SparseMatrix | StringArray | NullableArray | Categorical,
): number {
  switch (v.kind) {
    case "dense":
      return v.data.byteLength;
    case "csr":
    case "csc":
      return v.data.byteLength + v.indices.byteLength + v.indptr.byteLength;
    case "string":
      return stringBytes(v);
    case "nullable":
      return v.data.byteLength + v.mask.byteLength;
    case "categorical":
      return v.codes.byteLength + memoryBytes(v.categories);
  }
}

/**
 * Moving data between the main thread and the workers without copying large arrays.
 *
 * Main → worker (`prepareForWorker`): the committed SpatialData is structured-cloned into the task.
 * Typed arrays on SharedArrayBuffer cross for free (the worker sees the same memory); a large array
 * on a private buffer is copied once onto shared memory (memoised per array, so the next job shares
 * it too); lazy matrices are read; raster sources (which hold functions and store handles) become a
 * plain `DetachedRasterSource` marker, and the worker turns it back into a source with
 * `restoreInWorker`: in-memory pixels stay readable, and a file-backed source carries its reader's
 * reopen descriptor (`io/reopen.ts`), so the worker opens the same file or store again on the first
 * read and reads only the windows asked for. A source with neither says its pixels are not available.
 * The committed object is never modified: changed branches are new objects, the rest is shared.
 *
 * Worker → main (`packResult` / `unpackResult`): the result's private buffers go back in the
 * transfer list (moved, not copied); shared ones are shared anyway.
 *
 * Big string arrays (obs names of a million cells) cross packed in one buffer (`strings.ts`).
 */
import { availableParallelism } from "node:os";
import type { DenseArray, DType, StringArray, TypedArray } from "../data/arrays.js";
import {
  type DeferredMarker,
  type DeferredMatrix,
  deferredChain,
  isDeferredMarker,
} from "../data/deferred.js";
import type { AxisSelection, RasterSource } from "../data/elements.js";
import type { MatrixSlot } from "../data/lazy.js";
import type { SpatialData } from "../data/spatialdata.js";
import { portableReopen, type RasterReopen, reopenRaster } from "../io/reopen.js";
import { deferredValues } from "../math/deferred-values.js";
import { MemoryRasterSource } from "../raster/memory-source.js";
import {
  isPackedStrings,
  isStringArray,
  lazyStrings,
  type PackedStrings,
  packForMain,
  packForWorker,
  unpackOnMain,
} from "./strings.js";

/**
 * Arrays smaller than this are structured-cloned (a copy is cheaper than a shared buffer's setup),
 * and buffers smaller than this are not transferred back (Node's 8 KiB Buffer pool slabs cannot be).
 */
export const SHARE_THRESHOLD_BYTES = 64 * 1024;

/** What a raster source becomes when it crosses a thread boundary. */
export interface DetachedRasterSource {
  readonly kind: "detached-raster";
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly chunks: readonly number[];
  /** Pixels, when the source held them in memory (shared: no copy); absent for store-backed sources. */
  readonly array?: DenseArray;
  /** How to open a file- or store-backed source again on the other side. */
  readonly reopen?: RasterReopen;
}

/** Whether a value is a `DetachedRasterSource` marker. */
export function isDetachedRaster(v: unknown): v is DetachedRasterSource {
  return typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "detached-raster";
}

/**
 * A source over a detached marker: in-memory pixels are readable; a reopenable source opens its file
 * or store on the first read (once; a failed open is retried by the next read); others reject with a
 * clear error.
 */
export function attachRaster(marker: DetachedRasterSource, where: string): RasterSource {
  if (marker.array) return new MemoryRasterSource(marker.array, marker.chunks);
  const how = marker.reopen;
  if (how) {
    let opened: Promise<RasterSource> | null = null;
    const open = (): Promise<RasterSource> => {
      opened ??= reopenRaster(how).then(
        (src) => {
          if (src.shape.join(",") !== marker.shape.join(",") || src.dtype !== marker.dtype)
            throw new Error(
              `${where}: the raster reopened as [${src.shape.join(",")}] ${src.dtype}, not [${marker.shape.join(",")}] ${marker.dtype} (the file changed?)`,
            );
          return src;
        },
        (err: unknown) => {
          opened = null;
          throw new Error(`${where}: cannot reopen the raster in a worker: ${(err as Error).message}`, {
            cause: err,
          });
        },
      );
      return opened;
    };
    return {
      shape: marker.shape,
      dtype: marker.dtype,
      chunks: marker.chunks,
      async read(selection?: readonly AxisSelection[], signal?: AbortSignal): Promise<DenseArray> {
        return (await open()).read(selection, signal);
      },
    };
  }
  return {
    shape: marker.shape,
    dtype: marker.dtype,
    chunks: marker.chunks,
    read(_selection?: readonly AxisSelection[], _signal?: AbortSignal): Promise<DenseArray> {
      return Promise.reject(
        new Error(
          `${where}: pixels are not available in a worker (the raster is read from a store on the main thread)`,
        ),
      );
    },
  };
}

const HAS_SAB = typeof SharedArrayBuffer !== "undefined";

function isTypedArray(v: object): v is TypedArray {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

function isShared(a: ArrayBufferView): boolean {
  return HAS_SAB && a.buffer instanceof SharedArrayBuffer;
}

function isRasterSource(v: object): v is RasterSource {
  const o = v as Partial<RasterSource>;
  return typeof o.read === "function" && Array.isArray(o.shape) && typeof o.dtype === "string";
}

function isLazyMatrix(v: object): v is { kind: "lazy"; load(): Promise<unknown> } {
  return (v as { kind?: unknown }).kind === "lazy" && typeof (v as { load?: unknown }).load === "function";
}

function isPlainContainer(v: object): boolean {
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Shared copies of private arrays, per original array (weak: they go when the original goes). */
const sharedCopies = new WeakMap<TypedArray, TypedArray>();

/** `a` itself if shared or small, else its shared copy (made once). */
function shareArray(a: TypedArray): TypedArray {
  if (!HAS_SAB || isShared(a) || a.byteLength < SHARE_THRESHOLD_BYTES) return a;
  let copy = sharedCopies.get(a);
  if (!copy) {
    // Node Buffers are Uint8Arrays; copy them as such (the Buffer constructor is deprecated).
    const Ctor = (Buffer.isBuffer(a) ? Uint8Array : a.constructor) as new (
      b: ArrayBufferLike,
      o: number,
      n: number,
    ) => TypedArray;
    copy = new Ctor(new SharedArrayBuffer(a.byteLength), 0, a.length);
    (copy as unknown as { set(x: ArrayLike<unknown>): void }).set(a as unknown as ArrayLike<unknown>);
    sharedCopies.set(a, copy);
  }
  return copy;
}

/** How `mapValue` treats the leaves it meets. */
interface Mapper {
  /** Describes the direction in errors ("prepareForWorker", "result of <op>"). */
  readonly context: string;
  typedArray(a: TypedArray): TypedArray;
  /** Lazy values already read, by lazy value. */
  readonly loaded: ReadonlyMap<object, unknown>;
  raster(src: RasterSource, path: string): unknown;
  /** A string array's crossing form (the array itself, or a packed marker). */
  strings(sa: StringArray): StringArray | PackedStrings;
}

function pathOf(path: string, key: string | number): string {
  return path ? `${path}.${key}` : String(key);
}

/** Whether the walk may look inside `v` (plain objects and arrays only). */
function walkable(v: object): boolean {
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || (HAS_SAB && v instanceof SharedArrayBuffer))
    return false;
  // A string array's values are strings or null: nothing to map, and possibly millions of them (and
  // `values` may be a getter that would materialise a backed array: not touched here).
  if ((v as { kind?: unknown }).kind === "string" && "values" in v) return false;
  return isPlainContainer(v) && !isLazyMatrix(v) && !isRasterSource(v);
}

/** Every lazy matrix in a tree (read before the synchronous mapping). */
function collectLazy(v: unknown, out: Set<{ load(): Promise<unknown> }>, depth: number): void {
  if (v === null || typeof v !== "object" || depth > 64) return;
  if (isLazyMatrix(v)) {
    // A deferred chain not written out crosses as its marker (the next step may extend it).
    if (!deferredChain(v as MatrixSlot)) out.add(v);
    return;
  }
  if (!walkable(v)) return;
  for (const x of Array.isArray(v) ? v : Object.values(v)) {
    if (x !== null && typeof x === "object") collectLazy(x, out, depth + 1);
  }
}

/** Read every lazy matrix of a tree, at once. */
async function loadLazy(v: unknown): Promise<Map<object, unknown>> {
  const lazies = new Set<{ load(): Promise<unknown> }>();
  collectLazy(v, lazies, 0);
  const list = [...lazies];
  const values = await Promise.all(list.map((l) => l.load()));
  return new Map(list.map((l, i) => [l, values[i]]));
}

/**
 * Map a value tree, returning the same object where nothing changed (structural sharing) and new
 * objects along changed paths. Throws, naming the path, on values a worker boundary cannot carry.
 */
function mapValue(v: unknown, path: string, m: Mapper, depth: number): unknown {
  if (typeof v === "function" || typeof v === "symbol") {
    throw new Error(
      `${m.context}: ${path || "the value"} is a ${typeof v}, which cannot cross a worker boundary`,
    );
  }
  if (v === null || typeof v !== "object") return v;
  if (depth > 64) throw new Error(`${m.context}: ${path} is nested too deeply (a cycle?)`);
  if (isTypedArray(v)) return m.typedArray(v);
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || (HAS_SAB && v instanceof SharedArrayBuffer))
    return v;
  if (isLazyMatrix(v)) {
    const chain = deferredChain(v as MatrixSlot);
    if (chain) return mapValue(chain, path, m, depth + 1);
    if (!m.loaded.has(v)) throw new Error(`${m.context}: ${path} is a lazy matrix that was not read`);
    return mapValue(m.loaded.get(v), path, m, depth + 1);
  }
  if (isRasterSource(v)) return m.raster(v, path);
  if (isStringArray(v)) {
    const packed = m.strings(v);
    // A marker's buffers go through the typed-array rule (shared, or moved back).
    return packed === v ? v : mapValue(packed, path, m, depth + 1);
  }
  if (!walkable(v)) {
    if (
      v instanceof Map ||
      v instanceof Set ||
      v instanceof Date ||
      v instanceof RegExp ||
      v instanceof Error
    )
      return v;
    // A class instance would arrive as a plain object without its methods; say so instead.
    const name = (v as object).constructor?.name ?? "object";
    throw new Error(`${m.context}: ${path} is a ${name} instance, which cannot cross a worker boundary`);
  }
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x === null || (typeof x !== "object" && typeof x !== "function" && typeof x !== "symbol")) continue;
      const y = mapValue(x, pathOf(path, i), m, depth + 1);
      if (y !== x) {
        out ??= v.slice();
        out[i] = y;
      }
    }
    return out ?? v;
  }
  let out: Record<string, unknown> | null = null;
  for (const [k, x] of Object.entries(v)) {
    const y = mapValue(x, pathOf(path, k), m, depth + 1);
    if (y !== x) {
      out ??= { ...(v as Record<string, unknown>) };
      out[k] = y;
    }
  }
  return out ?? v;
}

function detachRaster(src: RasterSource, shareArrays: boolean): DetachedRasterSource {
  const base = {
    kind: "detached-raster" as const,
    shape: [...src.shape],
    dtype: src.dtype,
    chunks: [...src.chunks],
  };
  if (src instanceof MemoryRasterSource) {
    const arr = src.array;
    return { ...base, array: shareArrays ? { ...arr, data: shareArray(arr.data) } : arr };
  }
  const reopen = portableReopen(src);
  return reopen ? { ...base, reopen } : base;
}

/**
 * A structured-cloneable copy of `sd` for a worker task (see the module comment). Resolves to `sd`
 * itself when nothing needs changing. Throws, naming the path, if the object holds something a
 * worker cannot receive (a function, a class instance).
 *
 * The result is a wire form, meant for `WorkerTask.sdata` only: big string arrays in it are
 * `PackedStrings` markers and rasters are `DetachedRasterSource` markers until `restoreInWorker`
 * (which the worker calls) turns them back. Keep computing on the committed object.
 */
export async function prepareForWorker(sd: SpatialData): Promise<SpatialData> {
  const loaded = await loadLazy(sd);
  const mapper: Mapper = {
    context: "prepareForWorker",
    typedArray: shareArray,
    loaded,
    raster: (src) => detachRaster(src, true),
    strings: packForWorker,
  };
  return mapValue(sd, "", mapper, 0) as SpatialData;
}

/**
 * Walk a tree and replace markers: detached rasters by sources, packed strings by `strings(marker)`
 * (worker side: lazily decoded arrays; main side: the originals, or decoded copies).
 */
function attachAll(
  v: unknown,
  path: string,
  depth: number,
  strings: (p: PackedStrings) => StringArray,
  deferred: (d: DeferredMarker) => DeferredMatrix,
): unknown {
  if (v === null || typeof v !== "object" || depth > 64 || ArrayBuffer.isView(v)) return v;
  if (isDetachedRaster(v)) return attachRaster(v, path);
  if (isPackedStrings(v)) return strings(v);
  if (isDeferredMarker(v)) return deferred(v);
  if (isStringArray(v)) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x === null || typeof x !== "object") continue;
      const y = attachAll(x, pathOf(path, i), depth + 1, strings, deferred);
      if (y !== x) {
        out ??= v.slice();
        out[i] = y;
      }
    }
    return out ?? v;
  }
  if (!isPlainContainer(v)) return v;
  let out: Record<string, unknown> | null = null;
  for (const [k, x] of Object.entries(v)) {
    const y = attachAll(x, pathOf(path, k), depth + 1, strings, deferred);
    if (y !== x) {
      out ??= { ...(v as Record<string, unknown>) };
      out[k] = y;
    }
  }
  return out ?? v;
}

/**
 * Worker side: the SpatialData a task carried, with markers turned back: rasters into sources, packed
 * strings into lazily decoded arrays, deferred chains into deferred matrices written out (when read)
 * with the job's `threads`. Each deferred matrix is also pushed on `deferred`, so the worker can hand
 * the values it wrote out back to the main thread.
 */
export function restoreInWorker(
  sd: SpatialData,
  opts: { threads: number; deferred?: DeferredMatrix[] } = { threads: 1 },
): SpatialData {
  const rebuild = (d: DeferredMarker) => {
    const m = deferredValues(d.base, d, { threads: opts.threads, offThread: false }, d.id);
    opts.deferred?.push(m);
    return m;
  };
  return attachAll(sd, "", 0, lazyStrings, rebuild) as SpatialData;
}

/** A result ready to post back: the value and the buffers to move. */
export interface PackedResult {
  readonly value: unknown;
  readonly transfer: ArrayBuffer[];
}

/**
 * Worker side: make an operation's result postable. Lazy matrices are read, raster sources become
 * markers, and every private buffer of at least `SHARE_THRESHOLD_BYTES` goes in the transfer list
 * (moved; the worker must not touch it afterwards). Throws, naming the path, on a function or a class
 * instance in the result.
 */
export async function packResult(value: unknown, context: string): Promise<PackedResult> {
  const transfer = new Set<ArrayBuffer>();
  const loaded = await loadLazy(value);
  const mapper: Mapper = {
    context,
    typedArray: (a) => {
      if (!isShared(a) && a.buffer.byteLength >= SHARE_THRESHOLD_BYTES) transfer.add(a.buffer as ArrayBuffer);
      return a;
    },
    loaded,
    raster: (src) => detachRaster(src, false),
    strings: packForMain,
  };
  return { value: mapValue(value, "", mapper, 0), transfer: [...transfer] };
}

/**
 * Main side: a result as it arrived, with markers turned back: rasters into sources, strings into
 * arrays, deferred chains into deferred matrices of this thread (written out off the event loop,
 * on kernel threads, when something here reads them first).
 */
export function unpackResult(value: unknown): unknown {
  const threads = Math.max(2, availableParallelism());
  return attachAll(value, "", 0, unpackOnMain, (d) =>
    deferredValues(d.base, d, { threads, offThread: true }),
  );
}

/**
 * Large string arrays across threads. Strings cannot live in shared memory, and structured-cloning a
 * million cell names costs the main thread tens of milliseconds per job (and the worker several times
 * that to rebuild them). So a big `StringArray` crosses as `PackedStrings`: its values UTF-8 encoded,
 * `\0`-separated, in one buffer (shared when going to a worker, so it is packed once per array and
 * then shared by every later job).
 *
 * - In the worker, the array is rebuilt lazily: `values` decodes on first access, so an operation that
 *   never reads the obs names never pays for them.
 * - Coming back, an array the worker did not replace returns as its marker, and the main thread maps
 *   the marker's id back to the original object: no decode, and structural sharing is kept.
 */
import type { StringArray } from "../data/arrays.js";

/** Arrays with at least this many values are packed; smaller ones are simply cloned. */
export const STRING_PACK_MIN = 10_000;

/** Above this many UTF-8 bytes a packed array would exceed V8's string length limit when decoded. */
const MAX_PACKED_BYTES = 256 * 2 ** 20;

/** A packed string array (see the module comment). */
export interface PackedStrings {
  readonly kind: "packed-strings";
  readonly shape: readonly number[];
  readonly count: number;
  /** UTF-8 of the values joined by `\0` (null values are empty strings here). */
  readonly bytes: Uint8Array;
  /** `1` where the value is null; absent when there are none. */
  readonly nulls?: Uint8Array;
  /** Main-thread id of the original array (0 when packed by a worker). */
  readonly id: number;
}

/** Whether a value is a `PackedStrings` marker. */
export function isPackedStrings(v: unknown): v is PackedStrings {
  return typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "packed-strings";
}

/** Whether a value is a StringArray (without touching `values`, which may be a lazy getter). */
export function isStringArray(v: object): v is StringArray {
  return (v as { kind?: unknown }).kind === "string" && "values" in v;
}

/**
 * Encode values into one buffer (shared or not), or null when they cannot be packed losslessly
 * (a value contains `\0`) or would be too large to decode in one string.
 */
function encode(
  values: readonly (string | null)[],
  shared: boolean,
): { bytes: Uint8Array; nulls?: Uint8Array } | null {
  // `join` writes null as "" (the mask restores it).
  const joined = values.join("\0");
  let separators = 0;
  for (let i = joined.indexOf("\0"); i >= 0; i = joined.indexOf("\0", i + 1)) separators++;
  if (separators !== values.length - 1) return null;
  const n = Buffer.byteLength(joined, "utf8");
  if (n > MAX_PACKED_BYTES) return null;
  const buffer = shared ? new SharedArrayBuffer(n) : new ArrayBuffer(n);
  Buffer.from(buffer, 0, n).write(joined, "utf8");
  let nulls: Uint8Array | undefined;
  for (let i = 0; i < values.length; i++) {
    if (values[i] === null) {
      nulls ??= new Uint8Array(
        shared ? new SharedArrayBuffer(values.length) : new ArrayBuffer(values.length),
      );
      nulls[i] = 1;
    }
  }
  return { bytes: new Uint8Array(buffer, 0, n), ...(nulls ? { nulls } : {}) };
}

/** Decode a packed array's values. */
export function decodePacked(p: PackedStrings): (string | null)[] {
  if (p.count === 0) return [];
  const out: (string | null)[] = Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength)
    .toString("utf8")
    .split("\0");
  if (out.length !== p.count)
    throw new Error(`packed strings: expected ${p.count} values, decoded ${out.length}`);
  if (p.nulls) for (let i = 0; i < out.length; i++) if (p.nulls[i]) out[i] = null;
  return out;
}

// ---- main thread ----------------------------------------------------------------------------------

/** Packed form per original array (packed once). */
const packedOf = new WeakMap<StringArray, PackedStrings | null>();
/** Originals by id, held weakly; entries go when the original is collected. */
const originals = new Map<number, WeakRef<StringArray>>();
const forget = new FinalizationRegistry<number>((id) => originals.delete(id));
let nextId = 1;

/** Main → worker: the shared packed form of a big array (memoised), or the array itself. */
export function packForWorker(sa: StringArray): StringArray | PackedStrings {
  if (sa.values.length < STRING_PACK_MIN) return sa;
  let p = packedOf.get(sa);
  if (p === undefined) {
    const enc = encode(sa.values, true);
    if (enc) {
      const id = nextId++;
      p = { kind: "packed-strings", shape: [...sa.shape], count: sa.values.length, ...enc, id };
      originals.set(id, new WeakRef(sa));
      forget.register(sa, id);
    } else p = null;
    packedOf.set(sa, p);
  }
  return p ?? sa;
}

/** Main side of a result: the original array when the marker names one still alive, else a decoded copy. */
export function unpackOnMain(p: PackedStrings): StringArray {
  const original = p.id ? originals.get(p.id)?.deref() : undefined;
  if (original) return original;
  return { kind: "string", shape: p.shape, values: decodePacked(p) };
}

// ---- worker thread --------------------------------------------------------------------------------

/** Marker of each lazily rebuilt array, to send it back as it came. */
const markerOf = new WeakMap<StringArray, PackedStrings>();

/** Worker side: a StringArray whose `values` decode on first access. */
export function lazyStrings(p: PackedStrings): StringArray {
  const sa = { kind: "string", shape: p.shape } as {
    kind: "string";
    shape: readonly number[];
    values: (string | null)[];
  };
  Object.defineProperty(sa, "values", {
    enumerable: true,
    configurable: true,
    get() {
      const values = decodePacked(p);
      Object.defineProperty(sa, "values", {
        value: values,
        enumerable: true,
        writable: false,
        configurable: false,
      });
      return values;
    },
  });
  markerOf.set(sa, p);
  return sa;
}

/**
 * Worker → main: an array that came in packed goes back as its marker (the main thread maps it to the
 * original); another big array is packed into a private buffer (to transfer); small ones stay as they are.
 */
export function packForMain(sa: StringArray): StringArray | PackedStrings {
  const marker = markerOf.get(sa);
  if (marker) return marker;
  if (sa.values.length < STRING_PACK_MIN) return sa;
  const enc = encode(sa.values, false);
  return enc ? { kind: "packed-strings", shape: [...sa.shape], count: sa.values.length, ...enc, id: 0 } : sa;
}

/**
 * String arrays that hold no JS string per value.
 *
 * A million obs names or fifty million point ids as JS strings cost tens of bytes each on the heap,
 * and every full garbage collection walks them (the event loop stalls while it does). Two backings
 * avoid that, behind the same `StringArray` value:
 *
 * - **range**: the values are `String(start + i·step)` — pandas' `RangeIndex`, which spatialdata writes
 *   for a points element's index and which readers synthesise for rows without ids. Nothing is stored.
 * - **packed**: the values' UTF-8 joined by `\0` in one byte buffer (on a SharedArrayBuffer where there is
 *   one, so worker threads read it without a copy), with a mask of nulls.
 *
 * `values` stays available for code that truly needs the strings: it is a getter that materialises the
 * whole array on use and keeps it only while something holds it (a weak reference: after a save or an
 * export the strings go again). Code that can do without goes through `stringCount`,
 * `stringAt`, `stringLookup` and `takeStrings`, which never materialise a backed array. The getter is
 * enumerable, so a spread or a structured clone of a backed array still carries correct values (at the
 * cost of materialising them): the job layer sends backed arrays as their backing instead
 * (`jobs/strings.ts`).
 */
import type { StringArray } from "./arrays.js";

/** Values `String(start + i·step)`, i = 0 … n−1. */
export interface RangeBacking {
  readonly kind: "range";
  readonly start: number;
  readonly step: number;
}

/** Values as UTF-8 joined by `\0` (a null value is the empty string there, and `1` in `nulls`). */
export interface PackedBacking {
  readonly kind: "packed";
  readonly bytes: Uint8Array;
  /** `1` where the value is null; absent when none is. */
  readonly nulls?: Uint8Array;
}

/** How a backed string array holds its values (see the module comment). */
export type StringBacking = RangeBacking | PackedBacking;

/** Above this many UTF-8 bytes a packed array would exceed V8's string length limit when materialised. */
export const MAX_PACKED_BYTES = 256 * 2 ** 20;

const HAS_SAB = typeof SharedArrayBuffer !== "undefined";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function product(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

/**
 * A string array over a backing, `count` values in `shape` (1-d by default). `values` materialises on
 * first access (see the module comment).
 */
export function backedStrings(backing: StringBacking, count: number, shape?: readonly number[]): StringArray {
  const sa = { kind: "string", shape: shape ?? [count], backing } as {
    kind: "string";
    shape: readonly number[];
    backing: StringBacking;
    values: readonly (string | null)[];
  };
  Object.defineProperty(sa, "values", {
    enumerable: true,
    configurable: false,
    get() {
      let values = materialisedOf.get(backing)?.deref();
      if (!values) {
        values = materialise(backing, count);
        materialisedOf.set(backing, new WeakRef(values));
      }
      return values;
    },
  });
  return sa;
}

/**
 * The materialised values of each backing, held weakly: they stay while some code holds them (and for
 * at least the current task, so a loop over `sa.values[i]` decodes once), then the collector may take
 * them back and the array is bytes only again.
 */
const materialisedOf = new WeakMap<StringBacking, WeakRef<(string | null)[]>>();

/** `"start"`, `"start+step"`, … n values (pandas' RangeIndex as labels). */
export function rangeStrings(n: number, start = 0, step = 1): StringArray {
  return backedStrings({ kind: "range", start, step }, n);
}

/**
 * Pack values into one UTF-8 buffer (shared when `shared` and the platform has SharedArrayBuffer), or
 * null when they cannot be packed losslessly (a value holds `\0`) or would be too large to materialise.
 */
export function encodePacked(values: readonly (string | null)[], shared = true): PackedBacking | null {
  // `join` writes null as "" (the mask restores it).
  const joined = values.join("\0");
  let separators = 0;
  for (let i = joined.indexOf("\0"); i >= 0; i = joined.indexOf("\0", i + 1)) separators++;
  if (separators !== Math.max(0, values.length - 1)) return null;
  const utf8 = encoder.encode(joined);
  if (utf8.byteLength > MAX_PACKED_BYTES) return null;
  let bytes: Uint8Array = utf8;
  if (shared && HAS_SAB) {
    bytes = new Uint8Array(new SharedArrayBuffer(utf8.byteLength));
    bytes.set(utf8);
  }
  let nulls: Uint8Array | undefined;
  for (let i = 0; i < values.length; i++) {
    if (values[i] === null) {
      nulls ??= new Uint8Array(
        shared && HAS_SAB ? new SharedArrayBuffer(values.length) : new ArrayBuffer(values.length),
      );
      nulls[i] = 1;
    }
  }
  return { kind: "packed", bytes, ...(nulls ? { nulls } : {}) };
}

/** A packed (backed) copy of `values`, or a plain array where they cannot be packed. */
export function packStrings(values: readonly (string | null)[], shared = true): StringArray {
  const p = encodePacked(values, shared);
  return p ? backedStrings(p, values.length) : { kind: "string", shape: [values.length], values };
}

/** Every value of a backing as JS strings. */
function materialise(b: StringBacking, count: number): (string | null)[] {
  if (b.kind === "range") {
    const out = new Array<string>(count);
    for (let i = 0; i < count; i++) out[i] = String(b.start + i * b.step);
    return out;
  }
  if (count === 0) return [];
  const out: (string | null)[] = decoder.decode(b.bytes).split("\0");
  if (out.length !== count)
    throw new Error(`packed strings: expected ${count} values, decoded ${out.length}`);
  if (b.nulls) for (let i = 0; i < count; i++) if (b.nulls[i]) out[i] = null;
  return out;
}

/** Whether a backed array's values are materialised right now (reading `values` then costs nothing). */
export function isMaterialised(sa: StringArray): boolean {
  return !sa.backing || materialisedOf.get(sa.backing)?.deref() !== undefined;
}

/** Number of values of a string array, without materialising it. */
export function stringCount(sa: StringArray): number {
  return sa.backing ? product(sa.shape) : sa.values.length;
}

/** Start offset of each packed value, plus one past the end (memoised per backing). */
const offsetsOf = new WeakMap<PackedBacking, Uint32Array>();

function offsets(b: PackedBacking, count: number): Uint32Array {
  let o = offsetsOf.get(b);
  if (!o) {
    o = new Uint32Array(count + 1);
    const bytes = b.bytes;
    let k = 1;
    for (let j = 0; j < bytes.length && k < count; j++) if (bytes[j] === 0) o[k++] = j + 1;
    if (k !== count && count > 0)
      throw new Error(`packed strings: expected ${count} values, found ${k} in the bytes`);
    o[count] = bytes.length + 1;
    offsetsOf.set(b, o);
  }
  return o;
}

/** Value `i` of a string array (null when missing), decoding only that value of a backed array. */
export function stringAt(sa: StringArray, i: number): string | null {
  const b = sa.backing;
  if (!b || isMaterialised(sa)) return sa.values[i] ?? null;
  const n = product(sa.shape);
  if (i < 0 || i >= n || !Number.isInteger(i)) return null;
  if (b.kind === "range") return String(b.start + i * b.step);
  if (b.nulls?.[i]) return null;
  const o = offsets(b, n);
  return decoder.decode(b.bytes.subarray(o[i]!, o[i + 1]! - 1));
}

/**
 * The `start` and `step` when a string array's values are a decimal range (a range backing, or plain
 * values that read `"0"`, `"1"`, … — checked until the first that does not), else null.
 */
export function rangeOf(sa: StringArray): { start: number; step: number } | null {
  const b = sa.backing;
  if (b?.kind === "range") return { start: b.start, step: b.step };
  if (b?.kind === "packed" && !isMaterialised(sa)) {
    const n = product(sa.shape);
    for (let i = 0; i < n; i++) if (stringAt(sa, i) !== String(i)) return null;
    return { start: 0, step: 1 };
  }
  const v = sa.values;
  for (let i = 0; i < v.length; i++) if (v[i] !== String(i)) return null;
  return { start: 0, step: 1 };
}

/** FNV-1a over `bytes[from, to)`. */
function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let j = from; j < to; j++) {
    h ^= bytes[j]!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Name → row lookups per array (memoised: built once per array). */
const lookups = new WeakMap<object, (name: string) => number>();

/**
 * A function from a value to its row (the first row holding it; −1 when none does; null values are
 * never found). Over a packed array it is an open-addressing hash table over the bytes (two Int32
 * per value, no string per row); over a range it is arithmetic; over plain values a Map.
 */
export function stringLookup(sa: StringArray): (name: string) => number {
  const key = sa.backing ?? sa;
  let f = lookups.get(key);
  if (f) return f;
  const b = sa.backing;
  const n = stringCount(sa);
  if (b?.kind === "range") {
    f = (name) => {
      if (!/^-?(0|[1-9][0-9]{0,15})$/.test(name)) return -1;
      const r = (Number(name) - b.start) / b.step;
      return Number.isInteger(r) && r >= 0 && r < n ? r : -1;
    };
  } else if (b?.kind === "packed") {
    const o = offsets(b, n);
    const bytes = b.bytes;
    let size = 8;
    while (size < n * 2) size *= 2;
    const mask = size - 1;
    const table = new Int32Array(size).fill(-1);
    const same = (r: number, q: Uint8Array, from: number, to: number): boolean => {
      const s = o[r]!;
      const len = o[r + 1]! - 1 - s;
      if (len !== to - from) return false;
      for (let j = 0; j < len; j++) if (bytes[s + j] !== q[from + j]) return false;
      return true;
    };
    for (let r = 0; r < n; r++) {
      if (b.nulls?.[r]) continue;
      const s = o[r]!;
      const e = o[r + 1]! - 1;
      let h = hashBytes(bytes, s, e) & mask;
      for (;;) {
        const at = table[h]!;
        if (at < 0) {
          table[h] = r;
          break;
        }
        if (same(at, bytes, s, e)) break; // keep the first row holding it
        h = (h + 1) & mask;
      }
    }
    f = (name) => {
      const q = encoder.encode(name);
      let h = hashBytes(q, 0, q.length) & mask;
      for (;;) {
        const at = table[h]!;
        if (at < 0) return -1;
        if (same(at, q, 0, q.length)) return at;
        h = (h + 1) & mask;
      }
    };
  } else {
    const m = new Map<string, number>();
    const v = sa.values;
    for (let r = v.length - 1; r >= 0; r--) {
      const s = v[r];
      if (s !== null && s !== undefined) m.set(s, r);
    }
    f = (name) => m.get(name) ?? -1;
  }
  lookups.set(key, f);
  return f;
}

/**
 * The values at `rows`, in that order, without materialising a backed array: a range stays a range
 * when the rows are evenly spaced, a packed array gives a packed array (its bytes gathered), a plain
 * one a plain one.
 */
export function takeStrings(sa: StringArray, rows: ArrayLike<number>): StringArray {
  const b = sa.backing;
  const m = rows.length;
  if (!b || isMaterialised(sa)) {
    const v = sa.values;
    const out = new Array<string | null>(m);
    for (let k = 0; k < m; k++) out[k] = v[rows[k]!] ?? null;
    return { kind: "string", shape: [m], values: out };
  }
  const n = product(sa.shape);
  for (let k = 0; k < m; k++) {
    const r = rows[k]!;
    if (!(r >= 0 && r < n)) throw new Error(`takeStrings: row ${r} is outside 0…${n - 1}`);
  }
  if (b.kind === "range") {
    const d = m > 1 ? rows[1]! - rows[0]! : 1;
    let even = true;
    for (let k = 1; k < m && even; k++) even = rows[k]! - rows[k - 1]! === d;
    if (even) return rangeStrings(m, m ? b.start + rows[0]! * b.step : 0, d * b.step);
    const out = new Array<string>(m);
    for (let k = 0; k < m; k++) out[k] = String(b.start + rows[k]! * b.step);
    return packStrings(out);
  }
  const o = offsets(b, n);
  let total = 0;
  for (let k = 0; k < m; k++) total += o[rows[k]! + 1]! - o[rows[k]!]!;
  const len = Math.max(0, total - 1);
  const bytes = new Uint8Array(HAS_SAB ? new SharedArrayBuffer(len) : new ArrayBuffer(len));
  let nulls: Uint8Array | undefined;
  let at = 0;
  for (let k = 0; k < m; k++) {
    const r = rows[k]!;
    const s = o[r]!;
    const e = o[r + 1]! - 1;
    if (k > 0) bytes[at++] = 0;
    bytes.set(b.bytes.subarray(s, e), at);
    at += e - s;
    if (b.nulls?.[r]) {
      nulls ??= new Uint8Array(HAS_SAB ? new SharedArrayBuffer(m) : new ArrayBuffer(m));
      nulls[k] = 1;
    }
  }
  return backedStrings({ kind: "packed", bytes, ...(nulls ? { nulls } : {}) }, m);
}

/** Plain arrays at least this long are worth compacting (`compactStrings`). */
export const COMPACT_MIN = 10_000;

/**
 * A big plain array as a range (values `"0"`, `"1"`, …) or packed bytes, so that the JS strings a reader
 * made can be collected; small, already backed or unpackable arrays are returned as they are.
 */
export function compactStrings(sa: StringArray, min = COMPACT_MIN): StringArray {
  if (sa.backing || sa.shape.length !== 1 || sa.values.length < min) return sa;
  const v = sa.values;
  let range = true;
  for (let i = 0; i < v.length && range; i++) range = v[i] === String(i);
  if (range) return rangeStrings(v.length);
  return packStrings(v);
}

/** Heap and buffer bytes a string array takes (a backing's buffers; JS strings at 2 bytes per char). */
export function stringBytes(sa: StringArray): number {
  let n = 0;
  const b = sa.backing;
  if (b?.kind === "packed") n += b.bytes.byteLength + (b.nulls?.byteLength ?? 0);
  if (!b || isMaterialised(sa)) for (const s of sa.values) n += 16 + (s ? s.length * 2 : 0);
  return n;
}

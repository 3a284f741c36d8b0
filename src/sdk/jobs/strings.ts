/**
 * Large string arrays across threads. Strings cannot live in shared memory, and structured-cloning a
 * million cell names costs the main thread tens of milliseconds per job (and the worker several times
 * that to rebuild them). So a big `StringArray` crosses as a `PackedStrings` marker carrying its backing
 * (`data/lazy-strings.ts`): a range as two numbers, packed UTF-8 bytes as one buffer (shared when going
 * to a worker, so it is packed once per array and then shared by every later job). An array that is
 * backed already crosses as its backing, without ever being materialised.
 *
 * - On either side the marker becomes a backed `StringArray`: nothing is decoded until a value is read,
 *   and `values` only if something asks for all of them.
 * - Coming back, an array the worker did not replace returns as its marker, and the main thread maps
 *   the marker's id back to the original object: structural sharing is kept.
 */
import type { StringArray } from "../data/arrays.js";
import { backedStrings, encodePacked, type StringBacking, stringCount } from "../data/lazy-strings.js";

/** Plain arrays with at least this many values are packed; smaller ones are simply cloned. */
export const STRING_PACK_MIN = 10_000;

/** A string array's crossing form (see the module comment). */
export interface PackedStrings {
  readonly kind: "packed-strings";
  readonly shape: readonly number[];
  readonly count: number;
  readonly backing: StringBacking;
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

/** The backing to send for `sa`: its own, or its values packed (null when they cannot be). */
function backingOf(sa: StringArray, shared: boolean): StringBacking | null {
  return sa.backing ?? encodePacked(sa.values, shared);
}

/** A marker's array: backed, nothing decoded. */
function fromMarker(p: PackedStrings): StringArray {
  return backedStrings(p.backing, p.count, p.shape);
}

// ---- main thread ----------------------------------------------------------------------------------

/** Packed form per original array (packed once). */
const packedOf = new WeakMap<StringArray, PackedStrings | null>();
/** Originals by id, held weakly; entries go when the original is collected. */
const originals = new Map<number, WeakRef<StringArray>>();
const forget = new FinalizationRegistry<number>((id) => originals.delete(id));
let nextId = 1;

/** Main → worker: the marker of a backed or big array (memoised, shared buffers), or the array itself. */
export function packForWorker(sa: StringArray): StringArray | PackedStrings {
  if (!sa.backing && sa.values.length < STRING_PACK_MIN) return sa;
  let p = packedOf.get(sa);
  if (p === undefined) {
    const backing = backingOf(sa, true);
    if (backing) {
      const id = nextId++;
      p = { kind: "packed-strings", shape: [...sa.shape], count: stringCount(sa), backing, id };
      originals.set(id, new WeakRef(sa));
      forget.register(sa, id);
    } else p = null;
    packedOf.set(sa, p);
  }
  return p ?? sa;
}

/** Main side of a result: the original array when the marker names one still alive, else a backed array. */
export function unpackOnMain(p: PackedStrings): StringArray {
  const original = p.id ? originals.get(p.id)?.deref() : undefined;
  return original ?? fromMarker(p);
}

// ---- worker thread --------------------------------------------------------------------------------

/** Marker of each array rebuilt from one, to send it back as it came. */
const markerOf = new WeakMap<StringArray, PackedStrings>();

/** Worker side: a backed StringArray over the marker (`values` decode on first access, if ever). */
export function lazyStrings(p: PackedStrings): StringArray {
  const sa = fromMarker(p);
  markerOf.set(sa, p);
  return sa;
}

/**
 * Worker → main: an array that came in as a marker goes back as it; a backed array as its backing;
 * another big array is packed into a private buffer (to transfer); small ones stay as they are.
 */
export function packForMain(sa: StringArray): StringArray | PackedStrings {
  const marker = markerOf.get(sa);
  if (marker) return marker;
  if (!sa.backing && sa.values.length < STRING_PACK_MIN) return sa;
  const backing = backingOf(sa, false);
  return backing
    ? { kind: "packed-strings", shape: [...sa.shape], count: stringCount(sa), backing, id: 0 }
    : sa;
}

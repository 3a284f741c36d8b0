/**
 * An in-memory writable store: writers build a SpatialData here (or in an FsStore) before it is zipped.
 * @module
 */
import { normalizePrefix, relativeKey, resolveRange } from "./keys.js";
import type { AbsolutePath, RangeQuery, StoreEntry, WritableStore } from "./types.js";

/**
 * A `Map` of relative key → bytes. Values are stored by reference (no copy), so a caller must not mutate an array
 * after `set` — zarrita hands over freshly encoded chunks, which is the intended use.
 */
export class MemoryStore implements WritableStore {
  /** A label for error messages (`"memory"` unless given). */
  readonly location: string;
  /** The backing map, keyed without a leading slash. */
  readonly map: Map<string, Uint8Array>;

  /** @param location label used in error messages. @param entries initial contents. */
  constructor(location = "memory", entries?: Iterable<[string, Uint8Array]>) {
    this.location = location;
    this.map = new Map();
    if (entries) for (const [k, v] of entries) this.map.set(relativeKey(k), v);
  }

  /** The stored bytes, or `undefined`. */
  async get(key: AbsolutePath): Promise<Uint8Array | undefined> {
    return this.map.get(relativeKey(key));
  }

  /** A view on a byte range of the stored value (no copy). */
  async getRange(key: AbsolutePath, range: RangeQuery): Promise<Uint8Array | undefined> {
    const v = this.map.get(relativeKey(key));
    if (!v) return undefined;
    const [start, end] = resolveRange(range, v.length);
    return v.subarray(start, end);
  }

  /** Store `value` under `key`. */
  async set(key: AbsolutePath, value: Uint8Array): Promise<void> {
    const rel = relativeKey(key);
    if (rel === "") throw new Error(`${this.location}: empty store key`);
    this.map.set(rel, value);
  }

  /** Remove a key (returns whether it existed). */
  async delete(key: AbsolutePath): Promise<boolean> {
    return this.map.delete(relativeKey(key));
  }

  /** Keys under `prefix` with their byte sizes, sorted. */
  async list(prefix?: string): Promise<StoreEntry[]> {
    const want = normalizePrefix(prefix);
    const out: StoreEntry[] = [];
    for (const [key, v] of this.map) if (key.startsWith(want)) out.push({ key, size: v.byteLength });
    out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return out;
  }
}

/**
 * Store interfaces shared by every byte store in Tessera.
 *
 * They are structurally compatible with zarrita's `AsyncReadable` / `AsyncMutable`, so any store here can be
 * passed straight to `zarr.open(...)`, and add what Tessera needs on top: a `location` for error messages and an
 * optional `list()` for size accounting and group discovery.
 * @module
 */
import type { AbsolutePath, GetOptions, RangeQuery } from "@zarrita/storage";

export type { AbsolutePath, GetOptions, RangeQuery };

/** One stored key with its size in bytes as stored (compressed size for zip entries). */
export interface StoreEntry {
  /** Key relative to the store root, without a leading slash (`"obs/zarr.json"`). */
  key: string;
  /** Bytes this key occupies in the backing storage: the real on-disk (compressed) size. */
  size: number;
}

/** A readable, zarrita-compatible byte store. */
export interface ReadableStore {
  /** File path or URL of the store; every error message names it. */
  readonly location: string;
  /** Whole value of `key` (`"/a/b"`), or `undefined` when the key does not exist. */
  get(key: AbsolutePath, opts?: GetOptions): Promise<Uint8Array | undefined>;
  /** A byte range of `key`, or `undefined` when the key does not exist. Ranges past the end are clipped. */
  getRange?(key: AbsolutePath, range: RangeQuery, opts?: GetOptions): Promise<Uint8Array | undefined>;
  /**
   * Every key under `prefix` (relative to the root, no leading slash; `""` or omitted = all) with its stored size.
   * Absent on stores that cannot enumerate (plain HTTP directories).
   */
  list?(prefix?: string): Promise<StoreEntry[]>;
}

/** A store that can also be written (zarrita `AsyncMutable`). */
export interface WritableStore extends ReadableStore {
  /** Write (create or replace) the value of `key`. */
  set(key: AbsolutePath, value: Uint8Array): Promise<void>;
}

/** A store that can both be written and enumerated (what consolidation and the zip writer need). */
export type ListableWritableStore = WritableStore & Required<Pick<ReadableStore, "list">>;

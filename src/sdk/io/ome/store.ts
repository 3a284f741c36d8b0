/**
 * Small helpers over a zarrita-compatible store: key paths, group metadata of either zarr version, and
 * a wrapper that remembers the last key read (so a chunk that fails to decode can be named).
 */
import type { AbsolutePath, AsyncReadable, GetOptions, RangeQuery, Readable } from "@zarrita/storage";

/** Normalise a group path (`"images/x"`, `"/images/x/"`, `""`) to `"images/x"` or `""` for the root. */
export function normPath(path: string): string {
  return path
    .split("/")
    .filter((p) => p !== "" && p !== ".")
    .join("/");
}

/** The absolute store key of `name` inside group `path`. */
export function keyOf(path: string, name: string): AbsolutePath {
  const p = normPath(path);
  return `/${p ? `${p}/` : ""}${name}` as AbsolutePath;
}

/** Join two group paths. */
export function joinPath(a: string, b: string): string {
  return normPath(`${a}/${b}`);
}

/** What a group's metadata says: zarr format and attributes. */
export interface GroupMeta {
  readonly zarrFormat: 2 | 3;
  readonly attrs: Readonly<Record<string, unknown>>;
}

const decoder = new TextDecoder();

/** Read and parse a JSON document from the store, or `undefined` when the key is absent. */
export async function readJson(
  store: Readable,
  key: AbsolutePath,
  signal?: AbortSignal,
): Promise<Record<string, unknown> | undefined> {
  const bytes = await store.get(key, signal ? { signal } : undefined);
  if (!bytes) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(bytes));
  } catch (err) {
    throw new Error(`${key}: invalid JSON (${(err as Error).message})`);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json))
    throw new Error(`${key}: expected a JSON object`);
  return json as Record<string, unknown>;
}

/**
 * Read a group's metadata: zarr v3 `zarr.json` (attributes) or zarr v2 `.zgroup` + `.zattrs`.
 * Throws naming the path when no group (or only an array) is there.
 */
export async function readGroupMeta(store: Readable, path: string): Promise<GroupMeta> {
  const v3 = await readJson(store, keyOf(path, "zarr.json"));
  if (v3) {
    if (v3.node_type !== "group")
      throw new Error(
        `${keyOf(path, "zarr.json")}: expected a zarr group, found node_type ${JSON.stringify(v3.node_type)}`,
      );
    const attrs = v3.attributes;
    return {
      zarrFormat: 3,
      attrs: attrs && typeof attrs === "object" ? (attrs as Record<string, unknown>) : {},
    };
  }
  const zgroup = await readJson(store, keyOf(path, ".zgroup"));
  const zattrs = await readJson(store, keyOf(path, ".zattrs"));
  if (!zgroup && !zattrs)
    throw new Error(`no zarr group at "/${normPath(path)}" (neither zarr.json nor .zgroup/.zattrs found)`);
  return { zarrFormat: 2, attrs: zattrs ?? {} };
}

/** Checks the raw bytes of a chunk before a codec sees them; throws naming the key when they are corrupt. */
export type ChunkCheck = (key: string, bytes: Uint8Array) => void;

/**
 * A store wrapper that remembers the last key it was asked for, and runs per-array checks on chunk
 * bytes (some codecs, notably numcodecs' blosc, decode corrupt input into garbage instead of failing).
 */
export class KeyTrackingStore implements AsyncReadable {
  /** The last key passed to `get` or `getRange`. */
  lastKey: string | undefined;
  /** Checks by array key prefix (`/images/x/s0/`). */
  private readonly checks = new Map<string, ChunkCheck>();
  readonly getRange?: (
    key: AbsolutePath,
    range: RangeQuery,
    opts?: GetOptions,
  ) => Promise<Uint8Array | undefined>;

  constructor(private readonly inner: Readable) {
    const range = inner.getRange?.bind(inner);
    if (range) {
      this.getRange = async (key, r, opts) => {
        this.lastKey = key;
        return range(key, r, opts);
      };
    }
  }

  /** Check every chunk read under `arrayPath` with `check` (metadata documents are not checked). */
  addCheck(arrayPath: string, check: ChunkCheck): void {
    this.checks.set(keyOf(arrayPath, ""), check);
  }

  /** Forward to the wrapped store, recording the key and checking chunk bytes. */
  async get(key: AbsolutePath, opts?: GetOptions): Promise<Uint8Array | undefined> {
    this.lastKey = key;
    const bytes = await this.inner.get(key, opts);
    if (bytes && this.checks.size > 0 && !/(^|\/)(\.zarray|\.zattrs|\.zgroup|zarr\.json)$/.test(key)) {
      for (const [prefix, check] of this.checks) {
        if (key.startsWith(prefix) && !key.slice(prefix.length).includes("/.")) {
          check(key, bytes);
          break;
        }
      }
    }
    return bytes;
  }
}

/**
 * Helpers for store keys: zarrita speaks absolute keys (`"/a/b"`), stores keep relative ones (`"a/b"`).
 * @module
 */
import type { AbsolutePath, RangeQuery } from "./types.js";

/** `"/a/b"` → `"a/b"`; also accepts a key that already lacks the slash. */
export function relativeKey(key: string): string {
  let start = 0;
  while (start < key.length && key[start] === "/") start++;
  return key.slice(start);
}

/** `"a/b"` → `"/a/b"`. */
export function absoluteKey(key: string): AbsolutePath {
  return `/${relativeKey(key)}`;
}

/**
 * Normalise a `list()` prefix: strip leading slashes; `""` means everything.
 * A prefix is matched textually, so `"obs"` also matches `"obsm/..."`; pass `"obs/"` for one folder.
 */
export function normalizePrefix(prefix: string | undefined): string {
  return prefix ? relativeKey(prefix) : "";
}

/**
 * Check that a key cannot escape the store root or address something odd.
 * Returns the relative key's segments. Throws for `..`, `.`, empty segments in the middle, NUL bytes.
 */
export function keySegments(location: string, key: string): string[] {
  const rel = relativeKey(key);
  if (rel === "") throw new Error(`${location}: empty store key`);
  if (rel.includes("\0"))
    throw new Error(`${location}: store key contains a NUL byte: ${JSON.stringify(key)}`);
  const parts = rel.split("/");
  for (const p of parts) {
    if (p === ".." || p === "." || p === "") {
      throw new Error(
        `${location}: invalid store key ${JSON.stringify(key)} (segments "", "." and ".." are not allowed)`,
      );
    }
  }
  return parts;
}

/** Resolve a {@link RangeQuery} against a value of `size` bytes into a clipped `[start, end)` pair. */
export function resolveRange(range: RangeQuery, size: number): [start: number, end: number] {
  if ("suffixLength" in range) {
    const n = Math.max(0, Math.min(size, range.suffixLength));
    return [size - n, size];
  }
  const start = Math.max(0, Math.min(size, range.offset));
  const end = Math.max(start, Math.min(size, range.offset + range.length));
  return [start, end];
}

/** Basenames that hold zarr v2/v3 node metadata. */
export const METADATA_BASENAMES: ReadonlySet<string> = new Set([
  ".zgroup",
  ".zattrs",
  ".zarray",
  "zarr.json",
]);

/** Split `"a/b/zarr.json"` into `["a/b", "zarr.json"]` (`""` is the root). */
export function splitKey(key: string): [dir: string, base: string] {
  const rel = relativeKey(key);
  const i = rel.lastIndexOf("/");
  return i < 0 ? ["", rel] : [rel.slice(0, i), rel.slice(i + 1)];
}

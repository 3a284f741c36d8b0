/**
 * Parsing zarr metadata documents: JSON objects read from a store key, and node paths. Browser-safe.
 * @module
 */

/** A JSON object as parsed from metadata. */
export type JsonObject = Record<string, unknown>;

/** True for a plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const utf8 = new TextDecoder();

/** Normalise a node path: no leading/trailing slashes (`"/a/b/"` → `"a/b"`, `"/"` → `""`). */
export function normalizePath(path: string): string {
  return path.replace(/^\/+|\/+$/g, "");
}

/** Parse a JSON document read from `key`, with an Error naming store and key when it is not a JSON object. */
export function parseJsonObject(location: string, key: string, bytes: Uint8Array): JsonObject {
  let v: unknown;
  try {
    v = JSON.parse(utf8.decode(bytes));
  } catch (err) {
    throw new Error(`${location}: ${key} is not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (!isObject(v)) throw new Error(`${location}: ${key} is not a JSON object`);
  return v;
}

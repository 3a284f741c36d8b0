/**
 * Looking a name up in a plain record as an own property only. Names that come from outside (a URL
 * path, a request body, a file's attributes) are looked up with `own`, so `__proto__`, `constructor`
 * or `toString` find nothing instead of `Object.prototype`'s members.
 */

/** `rec[key]` when `key` is an own property of `rec`, else undefined. */
export function own<T>(rec: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(rec, key) ? rec[key] : undefined;
}

/** Whether `key` is an own property of `rec` (what `key in rec` should have meant). */
export function hasOwn(rec: Readonly<Record<string, unknown>>, key: string): boolean {
  return Object.hasOwn(rec, key);
}

/**
 * The field cache (client.md 5.7): field data keyed by (source, field path, data version), at most 24
 * entries, least recently used out first. A commit that bumps a field's version makes its next read
 * a miss, so after a job only the changed fields are fetched again.
 */
import type { DataSource, FieldData } from "./data-source.js";

/** Entries kept. */
export const FIELD_CACHE_ENTRIES = 24;

/** An LRU of field reads (the promises, so concurrent readers share one request). */
export class FieldCache {
  private readonly map = new Map<string, Promise<FieldData>>();
  /** Requests made (misses), for tests and the bench. */
  fetches = 0;

  constructor(readonly capacity = FIELD_CACHE_ENTRIES) {}

  get(source: DataSource, path: string, version: number): Promise<FieldData> {
    const key = `${source.id}\u0000${path}\u0000${version}`;
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    this.fetches++;
    const p = source.getFieldData(path);
    p.catch(() => this.map.delete(key));
    this.map.set(key, p);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as string);
    return p;
  }

  clear(): void {
    this.map.clear();
  }
}

/** The process-wide cache the canvases share. */
export const fieldCache = new FieldCache();

/**
 * The version of field `path` (API form, `obs:x`) in a session's `data_versions` (canonical paths,
 * `tables:<t>:obs:x`): the sum of the counters of every recorded path that contains it or that it
 * contains, so a bump of the whole table or of the one column both count.
 */
export function fieldVersion(
  versions: Readonly<Record<string, number>> | null | undefined,
  path: string,
  activeTable: string | null,
): number {
  if (!versions) return 0;
  const canon = !path.startsWith("tables:") && activeTable ? `tables:${activeTable}:${path}` : path;
  let v = 0;
  for (const [k, n] of Object.entries(versions)) {
    if (k === canon || canon.startsWith(`${k}:`) || k.startsWith(`${canon}:`)) v += n;
  }
  return v;
}

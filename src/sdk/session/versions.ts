/**
 * Data versions and plot staleness. Every commit bumps a counter per touched field path; a plot is
 * stale when a field it was drawn from was touched. Plot references name fields the way the API does
 * (`obs:leiden`, resolved against the active table) while commits report canonical paths
 * (`tables:table:obs:leiden`), so both are normalised to the canonical form before comparing.
 */
import { formatFieldPath, parseFieldPath } from "../data/fieldpath.js";

/** Field path → number of commits that touched it (the spec's `data_versions`). */
export type DataVersions = Record<string, number>;

/**
 * The canonical form of a field path: table fields qualified with their table
 * (`obs:leiden` → `tables:<active>:obs:leiden`); element paths unchanged. An unparsable path is
 * returned as is, so it can still match itself.
 */
export function canonicalFieldPath(path: string, activeTable: string | null): string {
  try {
    const fp = parseFieldPath(path);
    if (fp.kind === "table" && fp.table === undefined && activeTable)
      return formatFieldPath({ ...fp, table: activeTable });
    return formatFieldPath(fp);
  } catch {
    return path;
  }
}

/**
 * Whether two canonical field paths overlap: equal, or one contains the other (`tables:t` contains
 * `tables:t:obs:leiden`; `tables:t:X` contains `tables:t:X:CD3E`).
 */
export function fieldPathsOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return long.startsWith(`${short}:`);
}

/** Whether any of `references` (API form) overlaps any of `touched` (canonical form). */
export function referencesTouched(
  references: readonly string[],
  touched: readonly string[],
  activeTable: string | null,
): boolean {
  const refs = references.map((r) => canonicalFieldPath(r, activeTable));
  return refs.some((r) => touched.some((t) => fieldPathsOverlap(r, canonicalFieldPath(t, activeTable))));
}

/** `versions` with every touched path's counter incremented (a new object). */
export function bumpVersions(versions: Readonly<DataVersions>, touched: readonly string[]): DataVersions {
  const out: DataVersions = { ...versions };
  for (const t of new Set(touched)) out[t] = (out[t] ?? 0) + 1;
  return out;
}

/**
 * Gene (var name) search for pickers (`GET /var-names?q=&limit=`): case-insensitive; names starting
 * with the query come first, then names containing it elsewhere, each group in the table's own var
 * order (so the answer is stable and a gene panel's order is kept). An empty query gives the first
 * names. Missing (null) names are never listed.
 */
import type { StringArray } from "./arrays.js";

/** Default number of names returned. */
export const VAR_SEARCH_DEFAULT_LIMIT = 50;
/** Largest accepted limit. */
export const VAR_SEARCH_MAX_LIMIT = 1000;

/** Up to `limit` names of `names` matching `q` (see the module comment). */
export function searchVarNames(names: StringArray, q: string, limit = VAR_SEARCH_DEFAULT_LIMIT): string[] {
  const needle = q.trim().toLowerCase();
  const prefix: string[] = [];
  const other: string[] = [];
  for (const name of names.values) {
    if (name === null) continue;
    if (needle === "") {
      if (prefix.length >= limit) break;
      prefix.push(name);
      continue;
    }
    const at = name.toLowerCase().indexOf(needle);
    if (at === 0) {
      prefix.push(name);
      // Enough prefix matches: no substring match can come before them.
      if (prefix.length >= limit) break;
    } else if (at > 0 && other.length < limit) other.push(name);
  }
  return [...prefix, ...other].slice(0, limit);
}

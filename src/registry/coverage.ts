/**
 * The coverage report (`GET /api/functions/coverage`): the param names that no widget rule or tag
 * matched, so they fell back to a generic widget by type, ranked by how many functions use them. The
 * top of the list is where a new rule (or a tag) helps most.
 */
import type { FunctionEntry } from "./registry.js";
import { deref, isGeneric, type SchemaNode } from "./ui-rules.js";

/** One unmatched param term. */
export interface CoverageTerm {
  term: string;
  /** Number of functions with a param of this name that no rule matched. */
  functions: number;
  /** Keys of up to three of those functions. */
  examples: string[];
}

/** The report. */
export interface CoverageReport {
  terms: CoverageTerm[];
}

/** Compute the report over `entries`: most-used terms first, ties by name. */
export function coverageOf(entries: readonly FunctionEntry[]): CoverageReport {
  const byTerm = new Map<string, string[]>();
  for (const e of entries) {
    const root = e.json_schema as SchemaNode;
    const props = (root.properties ?? {}) as Record<string, SchemaNode>;
    const names = Object.keys(props);
    for (const name of names) {
      const ui = e.ui_schema[name] ?? { widget: null, bound_to: null, path_kind: null };
      if (!isGeneric(name, deref(props[name]!, root), ui, names)) continue;
      const list = byTerm.get(name) ?? [];
      list.push(e.key);
      byTerm.set(name, list);
    }
  }
  const terms = [...byTerm].map(([term, keys]) => ({
    term,
    functions: keys.length,
    examples: keys.slice(0, 3),
  }));
  terms.sort((a, b) => b.functions - a.functions || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
  return { terms };
}

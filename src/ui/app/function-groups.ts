/** The function picker's list: the registry's functions filtered by a query and grouped by namespace. */
import type { FunctionEntry } from "./form-model.js";

/** Functions grouped by namespace: custom namespaces first, then the libraries, each sorted. */
export function groupFunctions(
  functions: readonly FunctionEntry[],
  query: string,
  kinds: readonly string[],
): [string, FunctionEntry[]][] {
  const q = query.trim().toLowerCase();
  const groups = new Map<string, FunctionEntry[]>();
  for (const f of functions) {
    if (!kinds.includes(f.effect_class)) continue;
    if (q && !f.key.toLowerCase().includes(q) && !f.summary.toLowerCase().includes(q)) continue;
    const g = groups.get(f.namespace) ?? [];
    g.push(f);
    groups.set(f.namespace, g);
  }
  const custom = (ns: string) => ns === "custom" || ns.startsWith("custom.");
  return [...groups.entries()]
    .sort(([a], [b]) => (custom(a) === custom(b) ? a.localeCompare(b) : custom(a) ? -1 : 1))
    .map(([ns, fs]) => [ns, fs.sort((x, y) => x.function.localeCompare(y.function))]);
}

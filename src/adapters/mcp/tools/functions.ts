/** Tools 12–13: search the function registry and describe one function. */
import { NotFoundError } from "../../../sdk/errors.js";
import { functionsEnvelope } from "../../../sdk/session/functions-envelope.js";
import { S, tool } from "../tool.js";

/** `search_functions`: registry entries whose key or summary contain every word of the query. */
export const searchFunctions = tool<{ query?: string; namespace?: string; limit: number }>({
  name: "search_functions",
  description:
    "Searches the function registry (keys such as sc.pp.normalize_total, sq.gr.spatial_neighbors) by words in the key or summary, optionally within one namespace. Returns matches (key, effect_class, summary) and the library versions.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      query: S.str("Words to look for (all must match; case-insensitive). Empty lists everything.", {
        maxLength: 200,
      }),
      namespace: S.str(
        "Only this namespace and those under it (sc covers sc.pp, sc.tl …; also sq, custom, io, read, pl).",
        { maxLength: 64 },
      ),
      limit: S.int("Most entries returned.", 25, 1, 500),
    },
  },
  async run(a, { service }) {
    const env = functionsEnvelope(service.registry, service.functions);
    const words = (a.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    const hits = env.functions.filter((f) => {
      if (a.namespace && f.namespace !== a.namespace && !f.namespace.startsWith(`${a.namespace}.`))
        return false;
      const text = `${f.key} ${f.summary}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
    // Keys matching a word come before summary-only matches.
    const keyHit = (k: string) => words.some((w) => k.toLowerCase().includes(w));
    hits.sort((x, y) => Number(keyHit(y.key)) - Number(keyHit(x.key)) || x.key.localeCompare(y.key));
    return {
      structured: {
        total: hits.length,
        functions: hits
          .slice(0, a.limit)
          .map((f) => ({ key: f.key, effect_class: f.effect_class, summary: f.summary })),
        library_versions: env.library_versions,
      },
    };
  },
});

/** `describe_function`: the full registry entry of one function. */
export const describeFunction = tool<{ key: string }>({
  name: "describe_function",
  description:
    "Returns one function's full registry entry: its params' JSON Schema (pass params to run_function in exactly this shape), UI hints, effect class, and the params locked to their defaults (unsupported_params).",
  inputSchema: {
    type: "object",
    required: ["key"],
    additionalProperties: false,
    properties: {
      key: S.str("The function key, <namespace>.<function> (e.g. sc.pp.pca).", {
        minLength: 1,
        maxLength: 200,
      }),
    },
  },
  async run(a, { service }) {
    const env = functionsEnvelope(service.registry, service.functions);
    const f = env.functions.find((e) => e.key === a.key);
    if (!f) throw new NotFoundError(`no function "${a.key}" (search_functions lists them)`);
    const props = (f.json_schema as { properties?: Record<string, { default?: unknown }> }).properties ?? {};
    const library = service.registry.get(a.key)?.library;
    return {
      structured: {
        ...f,
        locked_params: Object.fromEntries(f.unsupported_params.map((p) => [p, props[p]?.default ?? null])),
        library: library ?? null,
        library_version: library ? (env.library_versions[library] ?? null) : null,
      },
    };
  },
});

/**
 * A session's analysis as a recipe: its completed compute steps, in the order they ran, with the
 * params they ran with. Readers (the session's bootstrap) are left out, so the recipe applies to any
 * dataset opened another way.
 */
import type { AppState } from "../io/checkpoint/app-state.js";
import { TESSERA_VERSION } from "../version.js";
import type { Recipe } from "./model.js";

/** Namespaces whose steps load data rather than analyse it. */
const READER_NAMESPACES = new Set(["read", "io"]);

/** Options of `exportRecipe`. */
export interface ExportRecipeOptions {
  /** Recipe name (default: `<session name> analysis`). */
  name?: string;
  description?: string;
  /** Where the session's data came from, recorded in the provenance. */
  source?: string | null;
}

/** The completed compute steps of `state` as a recipe. */
export function exportRecipe(state: AppState, sessionName: string, opts: ExportRecipeOptions = {}): Recipe {
  const done = state.compute_history.filter(
    (e) => e.status === "completed" && !READER_NAMESPACES.has(e.namespace),
  );
  const libraries: Record<string, string> = {};
  for (const e of done) Object.assign(libraries, e.library_versions);
  return {
    schema_version: 1,
    meta: {
      name: opts.name ?? `${sessionName} analysis`,
      description:
        opts.description ?? `The ${done.length} completed analysis step(s) of session "${sessionName}".`,
      provenance: {
        exported_from: sessionName,
        source: opts.source ?? null,
        exported_at: new Date().toISOString(),
        tessera_version: TESSERA_VERSION,
        library_versions: libraries,
      },
    },
    readme: `Exported from the Tessera session "${sessionName}". Steps run in the order listed.`,
    params: [],
    steps: done.map((e) => ({
      namespace: e.namespace,
      function: e.function,
      params: structuredClone(e.params),
    })),
  };
}

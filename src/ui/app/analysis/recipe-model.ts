/**
 * The recipe gallery's model (client.md 4), pure: a catalog recipe as `GET /api/recipes` lists it, the
 * server's preflight answer, and the recipe's params as a function entry so that the generated
 * function form renders them (the same form renderer as functions and readers).
 */
import type { FunctionEntry, ParamSchema } from "../form-model.js";

/** A recipe as the catalog lists it. */
export interface CatalogRecipe {
  name: string;
  description?: string;
  provenance?: unknown;
  readme?: string;
  params?: {
    name: string;
    schema?: ParamSchema;
    widget?: string;
    bound_to?: string | null;
    required?: boolean;
    tooltip?: string;
  }[];
  steps: { namespace: string; function: string; params?: Record<string, unknown> }[];
}

/** The server's preflight answer (`POST …/recipe/preflight`). */
export interface Preflight {
  produced: string[];
  unresolved: string[];
  unknown_functions: string[];
}

/** A recipe's params as a function entry, so the generated form renders them like a function's. */
export function recipeFormEntry(r: CatalogRecipe): FunctionEntry {
  const properties: Record<string, ParamSchema> = {};
  const ui: FunctionEntry["ui_schema"] = {};
  const required: string[] = [];
  for (const p of r.params ?? []) {
    properties[p.name] = { ...(p.schema ?? {}), ...(p.tooltip ? { description: p.tooltip } : {}) };
    ui[p.name] = {
      ...(p.widget ? { widget: p.widget } : {}),
      bound_to: p.bound_to ?? null,
      ...(p.tooltip ? { tooltip: p.tooltip } : {}),
    };
    if (p.required) required.push(p.name);
  }
  return {
    key: `recipe.${r.name}`,
    namespace: "recipe",
    function: r.name,
    effect_class: "recipe",
    summary: r.description ?? "",
    json_schema: { properties, required },
    ui_schema: ui,
  };
}

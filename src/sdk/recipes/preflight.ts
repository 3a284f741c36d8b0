/**
 * Preflight: what running a recipe would do, before anything runs. `produced` lists the field paths
 * its steps will create, `unresolved` the required params still without a value, and
 * `unknown_functions` the steps naming no registered operation.
 */

import type { FunctionLookup } from "./lookup.js";
import { type Recipe, stepKey } from "./model.js";
import { producedBy } from "./produces.js";
import { type RecipeValues, substituteSteps, unresolvedParams } from "./substitute.js";

/** The answer of `POST /recipe/preflight`. */
export interface PreflightResult {
  /** Field paths (API form, active table) the steps will write, in step order, without repeats. */
  produced: string[];
  /** Required recipe params that have no value and no default. */
  unresolved: string[];
  /** `<namespace>.<function>` of steps the registry does not know, without repeats. */
  unknown_functions: string[];
}

/** Preflight `recipe` with `values` against the functions `lookup` knows. */
export function preflight(
  recipe: Recipe,
  lookup: FunctionLookup,
  values: RecipeValues = {},
): PreflightResult {
  const produced: string[] = [];
  const unknown: string[] = [];
  for (const step of substituteSteps(recipe, values)) {
    const key = stepKey(step);
    const info = lookup.get(key);
    if (!info) {
      if (!unknown.includes(key)) unknown.push(key);
      continue;
    }
    for (const f of producedBy(step, info.effect_class)) if (!produced.includes(f)) produced.push(f);
  }
  return { produced, unresolved: unresolvedParams(recipe, values), unknown_functions: unknown };
}

/**
 * A recipe checked before anything is loaded: values for params it does not declare, required params
 * without a value, steps naming no registered operation, and each step's params (after `$param`
 * substitution) against its operation's JSON Schema. What needs the data (a column that must exist)
 * is left to the run; everything here is known from the recipe and the registry alone, so `tessera
 * run` and a script fail in a second instead of after loading a large dataset.
 */
import { BadRequestError } from "../errors.js";
import { type Recipe, stepKey } from "./model.js";
import { type RecipeValues, substituteSteps, unknownValues, unresolvedParams } from "./substitute.js";

/** What the check needs of the registry. */
export interface RecipeValidator {
  /** Whether an operation `key` is registered. */
  get(key: string): unknown;
  /** The params with defaults filled, or throws naming the field and the rule. */
  validate(key: string, params: unknown): Record<string, unknown>;
}

/** The recipe's problems, one line each (empty when it can run). */
export function recipeProblems(
  recipe: Recipe,
  registry: RecipeValidator,
  values: RecipeValues = {},
): string[] {
  const problems: string[] = [];
  const stray = unknownValues(recipe, values);
  if (stray.length)
    problems.push(
      `no such param(s): ${stray.join(", ")} (params: ${(recipe.params ?? []).map((p) => p.name).join(", ") || "none"})`,
    );
  const missing = unresolvedParams(recipe, values);
  if (missing.length) problems.push(`required param(s) without a value: ${missing.join(", ")}`);
  substituteSteps(recipe, values).forEach((step, i) => {
    const key = stepKey(step);
    if (!registry.get(key)) {
      problems.push(`step ${i + 1}: unknown function ${key}`);
      return;
    }
    // Params built from unresolved values are reported above, not once more per step.
    if (missing.length) return;
    try {
      registry.validate(key, step.params);
    } catch (err) {
      problems.push(`step ${i + 1}: ${(err as Error).message}`);
    }
  });
  return problems;
}

/**
 * Throw a `BadRequestError` (400) listing every problem of {@link recipeProblems}, as
 * `recipe <name>: <problem>; <problem>…`. `Tessera.checkRecipe` (before loading) and
 * `Session.runRecipe` (before any step is queued or staged) both call it, so every face refuses a bad
 * recipe with the same message.
 */
export function checkRecipe(recipe: Recipe, registry: RecipeValidator, values: RecipeValues = {}): void {
  const problems = recipeProblems(recipe, registry, values);
  if (problems.length) throw new BadRequestError(`recipe ${recipe.meta.name}: ${problems.join("; ")}`);
}

/**
 * Recipe discovery: every `NN_short_name.json` in the recipes folder, in file-name order, parsed and
 * checked at startup. A broken file (bad JSON, wrong format, a duplicate name, a step naming an
 * unregistered function) is reported with its file name and left out; it never stops the service.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { FunctionLookup } from "./lookup.js";
import { catalogEntry, parseRecipe, type Recipe, type RecipeCatalogEntry, stepKey } from "./model.js";

/** Recipe file names: a two-digit order prefix, a short name, `.json`. */
export const RECIPE_FILE_RE = /^\d\d_[A-Za-z0-9_.-]+\.json$/;

/** A recipe found on disk. */
export interface DiscoveredRecipe {
  file: string;
  recipe: Recipe;
}

/** A recipe file that could not be used, and why. */
export interface RecipeProblem {
  file: string;
  message: string;
}

/** The recipes of a folder, by name. */
export class RecipeCatalog {
  /** Usable recipes, in file order. */
  readonly recipes: readonly DiscoveredRecipe[];
  /** Files left out, with the reason. */
  readonly problems: readonly RecipeProblem[];

  constructor(recipes: DiscoveredRecipe[], problems: RecipeProblem[]) {
    this.recipes = recipes;
    this.problems = problems;
  }

  /** The recipe named `name`, or undefined. */
  get(name: string): Recipe | undefined {
    return this.recipes.find((r) => r.recipe.meta.name === name)?.recipe;
  }

  /** The catalog as `GET /api/recipes` lists it. */
  list(): RecipeCatalogEntry[] {
    return this.recipes.map((r) => catalogEntry(r.recipe));
  }
}

/**
 * Read every recipe file of `dir`. A missing folder gives an empty catalog. With `lookup`, a recipe
 * whose steps name unregistered functions is reported and left out.
 */
export async function discoverRecipes(dir: string, lookup?: FunctionLookup): Promise<RecipeCatalog> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => RECIPE_FILE_RE.test(n)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return new RecipeCatalog([], []);
    throw err;
  }
  const recipes: DiscoveredRecipe[] = [];
  const problems: RecipeProblem[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      let json: unknown;
      try {
        json = JSON.parse(await readFile(file, "utf8"));
      } catch (err) {
        throw new Error(`${file}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
      }
      const recipe = parseRecipe(json, file);
      const clash = recipes.find((r) => r.recipe.meta.name === recipe.meta.name);
      if (clash)
        throw new Error(`${file}: recipe name "${recipe.meta.name}" is already used by ${clash.file}`);
      if (lookup) {
        const unknown = [...new Set(recipe.steps.map(stepKey).filter((k) => !lookup.get(k)))];
        if (unknown.length)
          throw new Error(`${file}: steps name unregistered functions: ${unknown.join(", ")}`);
      }
      recipes.push({ file, recipe });
    } catch (err) {
      problems.push({ file, message: err instanceof Error ? err.message : String(err) });
    }
  }
  return new RecipeCatalog(recipes, problems);
}

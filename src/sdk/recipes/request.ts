/**
 * A recipe posted by a client (`POST /recipe/preflight`, `POST /recipe/run`, the MCP tools): the
 * recipe JSON itself, plus two request fields beside it, `mode` (`run` or `stage`) and `values` (the
 * chosen recipe param values, by name). Everything wrong with it is a `BadRequestError` naming the
 * field, so an adapter answers 400 and nothing runs.
 *
 * Leniency, so a client can post back what the API gave it: `schema_version` may be omitted (it is
 * 1), and a catalog entry's flat `{name, description, provenance, steps, params}` stands for `meta`.
 */
import { BadRequestError } from "../errors.js";
import { MAX_JSON_DEPTH, MAX_RECIPE_STEPS, tooDeepMessage, valueDepthOver } from "../input-limits.js";
import { parseRecipe, type Recipe } from "./model.js";
import type { RecipeValues } from "./substitute.js";

/** A parsed recipe request. */
export interface RecipeRequest {
  recipe: Recipe;
  /** `run` queues every step (default), `stage` adds them as pending steps. */
  mode: "run" | "stage";
  /** Values of the recipe's params, by name. */
  values: RecipeValues;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Parse a posted recipe request (see the module comment); throws `BadRequestError`. */
export function parseRecipeRequest(body: unknown): RecipeRequest {
  if (!isObject(body)) throw new BadRequestError("body: a recipe is a JSON object");
  if (valueDepthOver(body, MAX_JSON_DEPTH)) throw new BadRequestError(tooDeepMessage("body"));
  const { mode = "run", values = {}, name, description, provenance, ...rest } = body;
  // Bounded before any step is validated: staging thousands of steps at once would hold the event loop.
  if (Array.isArray(rest.steps) && rest.steps.length > MAX_RECIPE_STEPS)
    throw new BadRequestError(
      `body.steps has ${rest.steps.length} steps; a request may run or stage at most ${MAX_RECIPE_STEPS}`,
    );
  if (mode !== "run" && mode !== "stage")
    throw new BadRequestError(`body.mode must be "run" or "stage", got ${JSON.stringify(mode)}`);
  if (!isObject(values)) throw new BadRequestError("body.values must be an object {<param name>: value}");
  const shaped: Record<string, unknown> = { schema_version: 1, ...rest };
  if (shaped.meta === undefined && name !== undefined)
    shaped.meta = {
      name,
      ...(description !== undefined ? { description } : {}),
      ...(provenance !== undefined && provenance !== null ? { provenance } : {}),
    };
  else if (name !== undefined || description !== undefined || provenance !== undefined)
    throw new BadRequestError(
      "body: give the recipe's name, description and provenance in meta, not beside it",
    );
  const known = new Set(["schema_version", "meta", "readme", "params", "steps"]);
  const unknown = Object.keys(shaped).filter((k) => !known.has(k));
  if (unknown.length) throw new BadRequestError(`body: unknown field "${unknown[0]}"`);
  try {
    return { recipe: parseRecipe(shaped, "body"), mode, values };
  } catch (err) {
    throw new BadRequestError(err instanceof Error ? err.message : String(err));
  }
}

/**
 * `$param` substitution: turning a recipe and the values a user chose into plain descriptors. A
 * step param `{"$param": name}` takes the param's resolved value (the user's, else the schema
 * default); a value that resolves to null drops the step param, so the function's own default
 * applies. One param may feed several steps; any other value passes through unchanged.
 */
import type { Descriptor } from "../session/app-state-machine.js";
import { isParamRef, type Recipe, type RecipeParam } from "./model.js";

/** Values chosen for a recipe's params, by name. */
export type RecipeValues = Readonly<Record<string, unknown>>;

/** The value of each declared param: the given one, else the schema default, else null. */
export function resolveValues(recipe: Recipe, values: RecipeValues = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of recipe.params ?? []) {
    const given = Object.hasOwn(values, p.name) ? values[p.name] : undefined;
    out[p.name] = given !== undefined ? given : p.schema.default !== undefined ? p.schema.default : null;
  }
  return out;
}

/** Required params that resolve to null (no value given, no default). */
export function unresolvedParams(recipe: Recipe, values: RecipeValues = {}): string[] {
  const resolved = resolveValues(recipe, values);
  return (recipe.params ?? []).filter((p) => p.required && resolved[p.name] == null).map((p) => p.name);
}

/** Values naming no declared param (a typo in `--param` should not pass silently). */
export function unknownValues(recipe: Recipe, values: RecipeValues = {}): string[] {
  const names = new Set((recipe.params ?? []).map((p) => p.name));
  return Object.keys(values).filter((k) => !names.has(k));
}

const DROP = Symbol("drop");

function substituteValue(v: unknown, resolved: Record<string, unknown>): unknown {
  if (isParamRef(v)) {
    const r = Object.hasOwn(resolved, v.$param) ? resolved[v.$param] : undefined;
    return r === null || r === undefined ? DROP : r;
  }
  if (Array.isArray(v)) return v.map((x) => substituteValue(x, resolved)).filter((x) => x !== DROP);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const s = substituteValue(x, resolved);
      if (s !== DROP) out[k] = s;
    }
    return out;
  }
  return v;
}

/** The recipe's steps with every `$param` replaced (null-valued params dropped). */
export function substituteSteps(recipe: Recipe, values: RecipeValues = {}): Descriptor[] {
  const resolved = resolveValues(recipe, values);
  return recipe.steps.map((s) => ({
    namespace: s.namespace,
    function: s.function,
    params: substituteValue(s.params, resolved) as Record<string, unknown>,
  }));
}

/**
 * Turn a command-line value (`--param k=v`) into the param's type: numbers, integers and booleans are
 * parsed, arrays and objects read as JSON (arrays also as comma lists), `null` clears the value.
 * Throws an error naming the param when the text does not fit its type.
 */
export function coerceParamValue(param: RecipeParam, text: string): unknown {
  if (text === "null") return null;
  const types = ([] as string[]).concat(param.schema.type ?? []);
  const bad = (what: string): never => {
    throw new Error(`param ${param.name}: ${JSON.stringify(text)} is not ${what}`);
  };
  if (types.includes("integer")) {
    const n = Number(text);
    return Number.isInteger(n) && text.trim() !== "" ? n : bad("an integer");
  }
  if (types.includes("number")) {
    const n = Number(text);
    return Number.isFinite(n) && text.trim() !== "" ? n : bad("a number");
  }
  if (types.includes("boolean")) {
    if (/^(true|1|yes)$/i.test(text)) return true;
    if (/^(false|0|no)$/i.test(text)) return false;
    return bad("a boolean (true/false)");
  }
  if (types.includes("array")) {
    if (text.trim().startsWith("[")) {
      try {
        const v = JSON.parse(text) as unknown;
        if (Array.isArray(v)) return v;
      } catch {
        // fall through to the message below
      }
      return bad("a JSON array");
    }
    return text === "" ? [] : text.split(",").map((s) => s.trim());
  }
  if (types.includes("object")) {
    try {
      const v = JSON.parse(text) as unknown;
      if (v && typeof v === "object" && !Array.isArray(v)) return v;
    } catch {
      // fall through
    }
    return bad("a JSON object");
  }
  return text;
}

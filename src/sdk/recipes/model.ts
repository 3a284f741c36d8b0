/**
 * The recipe file format (spec "Recipe"): `schema_version` 1, `meta {name, description, provenance}`,
 * `readme`, `params` (the knobs a user may set) and `steps` (descriptors whose param values may be
 * `{"$param": name}` references). `parseRecipe` checks a parsed JSON value field by field and says
 * exactly what is wrong, naming the file.
 */
import type { Descriptor } from "../session/app-state-machine.js";

/** A recipe parameter's value schema: a JSON Schema fragment with a default (enum optional, inherited). */
export interface RecipeParamSchema {
  type?: string | string[];
  default?: unknown;
  enum?: unknown[];
  [keyword: string]: unknown;
}

/** A recipe parameter. */
export interface RecipeParam {
  name: string;
  schema: RecipeParamSchema;
  widget?: string | null;
  bound_to?: string | null;
  required?: boolean;
  tooltip?: string | null;
}

/** Who made a recipe and from what. */
export interface RecipeMeta {
  /** Unique; the recipe's key. */
  name: string;
  description: string;
  /** Free-form origin (author, source session, library versions …). */
  provenance?: unknown;
}

/** A recipe file. */
export interface Recipe {
  schema_version: 1;
  meta: RecipeMeta;
  readme?: string;
  params?: RecipeParam[];
  /** Steps; param values may be `{"$param": name}` references. */
  steps: Descriptor[];
}

/** A recipe as the catalog lists it. */
export interface RecipeCatalogEntry {
  name: string;
  description: string;
  steps: Descriptor[];
}

/** A recipe param reference in a step. */
export interface ParamRef {
  $param: string;
}

/** Whether `v` is a `{"$param": name}` reference. */
export function isParamRef(v: unknown): v is ParamRef {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    Object.keys(v).length === 1 &&
    typeof (v as ParamRef).$param === "string"
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every `$param` name a value refers to (searching nested objects and arrays). */
export function paramRefsIn(v: unknown, out: Set<string> = new Set()): Set<string> {
  if (isParamRef(v)) out.add(v.$param);
  else if (Array.isArray(v)) for (const x of v) paramRefsIn(x, out);
  else if (isObject(v)) for (const x of Object.values(v)) paramRefsIn(x, out);
  return out;
}

/**
 * Check a parsed JSON value against the recipe format and return it typed. `where` (a file name)
 * prefixes every message. Checks: required fields and their types, unique param names, steps with a
 * namespace and function, and every `$param` reference naming a declared param.
 */
export function parseRecipe(value: unknown, where = "recipe"): Recipe {
  const fail = (msg: string): never => {
    throw new Error(`${where}: ${msg}`);
  };
  if (!isObject(value)) fail("a recipe is a JSON object");
  const r = value as Record<string, unknown>;
  if (r.schema_version !== 1) fail(`schema_version must be 1, got ${JSON.stringify(r.schema_version)}`);
  if (!isObject(r.meta)) fail("meta must be an object {name, description, provenance}");
  const meta = r.meta as Record<string, unknown>;
  if (typeof meta.name !== "string" || !meta.name.trim()) fail("meta.name must be a non-empty string");
  if (meta.description !== undefined && typeof meta.description !== "string")
    fail("meta.description must be a string");
  if (r.readme !== undefined && typeof r.readme !== "string") fail("readme must be a string");
  const params: RecipeParam[] = [];
  if (r.params !== undefined) {
    if (!Array.isArray(r.params)) fail("params must be an array");
    (r.params as unknown[]).forEach((p, i) => {
      const at = `params[${i}]`;
      if (!isObject(p)) fail(`${at} must be an object`);
      const q = p as Record<string, unknown>;
      if (typeof q.name !== "string" || !q.name) fail(`${at}.name must be a non-empty string`);
      if (params.some((x) => x.name === q.name)) fail(`${at}: duplicate param name "${String(q.name)}"`);
      if (q.schema !== undefined && !isObject(q.schema))
        fail(`${at}.schema must be an object {type, default}`);
      if (q.required !== undefined && typeof q.required !== "boolean")
        fail(`${at}.required must be true or false`);
      for (const k of ["widget", "bound_to", "tooltip"] as const) {
        if (q[k] !== undefined && q[k] !== null && typeof q[k] !== "string")
          fail(`${at}.${k} must be a string or null`);
      }
      params.push({
        ...(q as unknown as RecipeParam),
        schema: (q.schema as RecipeParamSchema | undefined) ?? {},
      });
    });
  }
  if (!Array.isArray(r.steps)) fail("steps must be an array of {namespace, function, params}");
  const steps: Descriptor[] = (r.steps as unknown[]).map((s, i) => {
    const at = `steps[${i}]`;
    if (!isObject(s)) fail(`${at} must be an object {namespace, function, params}`);
    const d = s as Record<string, unknown>;
    if (typeof d.namespace !== "string" || !d.namespace) fail(`${at}.namespace must be a non-empty string`);
    if (typeof d.function !== "string" || !d.function) fail(`${at}.function must be a non-empty string`);
    if (d.params !== undefined && !isObject(d.params)) fail(`${at}.params must be an object`);
    const stepParams = (d.params as Record<string, unknown> | undefined) ?? {};
    for (const ref of paramRefsIn(stepParams)) {
      if (!params.some((p) => p.name === ref))
        fail(`${at} (${d.namespace}.${d.function}) refers to undeclared param "${ref}"`);
    }
    return { namespace: d.namespace as string, function: d.function as string, params: stepParams };
  });
  const meta2: RecipeMeta = {
    name: (meta.name as string).trim(),
    description: typeof meta.description === "string" ? meta.description : "",
    ...(meta.provenance !== undefined ? { provenance: meta.provenance } : {}),
  };
  return {
    schema_version: 1,
    meta: meta2,
    ...(typeof r.readme === "string" ? { readme: r.readme } : {}),
    ...(r.params !== undefined ? { params } : {}),
    steps,
  };
}

/** The catalog entry of a recipe. */
export function catalogEntry(recipe: Recipe): RecipeCatalogEntry {
  return { name: recipe.meta.name, description: recipe.meta.description, steps: recipe.steps };
}

/** The key of a step's function (`<namespace>.<function>`). */
export function stepKey(d: Pick<Descriptor, "namespace" | "function">): string {
  return `${d.namespace}.${d.function}`;
}

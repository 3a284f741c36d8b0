/**
 * Inheriting param details from the functions a recipe param feeds: a recipe may omit `enum` (and
 * `type`, `tooltip`, `widget`) from a param, and the values the function accepts are shown instead.
 * When one param feeds several functions, the inherited enum is the intersection of theirs.
 */

import { type FunctionLookup, paramSchema, type SchemaNode } from "./lookup.js";
import { isParamRef, type Recipe, type RecipeParam, stepKey } from "./model.js";

/** The enum a schema node allows (directly, or across `anyOf`/`oneOf` members), without null. */
function enumOf(node: SchemaNode | undefined): unknown[] | undefined {
  if (!node) return undefined;
  if (Array.isArray(node.enum)) return (node.enum as unknown[]).filter((v) => v !== null);
  for (const k of ["anyOf", "oneOf"] as const) {
    const members = node[k];
    if (Array.isArray(members)) {
      const vals = (members as SchemaNode[]).flatMap(
        (m) => enumOf(m) ?? (m.const !== undefined && m.const !== null ? [m.const] : []),
      );
      if (vals.length) return vals;
    }
  }
  return undefined;
}

/** The `{function param, schema, ui}` a recipe param feeds, step by step (top-level references only). */
function feeds(recipe: Recipe, name: string, lookup: FunctionLookup) {
  const out: {
    node: SchemaNode | undefined;
    ui: { widget?: string | null; tooltip?: string | null } | undefined;
  }[] = [];
  for (const step of recipe.steps) {
    const info = lookup.get(stepKey(step));
    if (!info) continue;
    for (const [p, v] of Object.entries(step.params)) {
      if (isParamRef(v) && v.$param === name)
        out.push({ node: paramSchema(info, p), ui: info.ui_schema?.[p] });
    }
  }
  return out;
}

/**
 * The recipe's params with what they inherit from the functions they feed: `enum` when the recipe
 * omits it, `type` when absent, and `widget`/`tooltip` when unset. The recipe's own values win.
 */
export function inheritParamSchemas(recipe: Recipe, lookup: FunctionLookup): RecipeParam[] {
  return (recipe.params ?? []).map((p) => {
    const sources = feeds(recipe, p.name, lookup);
    const schema = { ...p.schema };
    if (schema.enum === undefined) {
      let common: unknown[] | undefined;
      for (const s of sources) {
        const e = enumOf(s.node);
        if (!e) continue;
        common = common ? common.filter((v) => e.some((x) => JSON.stringify(x) === JSON.stringify(v))) : e;
      }
      if (common) schema.enum = common;
    }
    if (schema.type === undefined) {
      const t = sources.map((s) => s.node?.type).find((x) => x !== undefined);
      if (typeof t === "string" || Array.isArray(t)) schema.type = t as string | string[];
    }
    const ui = sources.find((s) => s.ui)?.ui;
    return {
      ...p,
      schema,
      widget: p.widget ?? ui?.widget ?? null,
      tooltip:
        p.tooltip ??
        ui?.tooltip ??
        (typeof sources[0]?.node?.description === "string" ? (sources[0].node.description as string) : null),
    };
  });
}

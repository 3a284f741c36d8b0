/**
 * What the recipe code needs from the registry: looking a function up by key. Kept structural, so
 * the registry's `Registry` (and a test's plain map) both fit.
 */
import type { EffectClass } from "../jobs/operation.js";

/** The registry entry fields recipes read. */
export interface FunctionInfo {
  readonly key: string;
  readonly namespace: string;
  readonly function: string;
  readonly effect_class: EffectClass;
  /** JSON Schema (draft-07) of the params. */
  readonly json_schema: object;
  readonly ui_schema?: Readonly<
    Record<string, { widget?: string | null; bound_to?: string | null; tooltip?: string | null }>
  >;
}

/** Something that finds functions by key (`Registry`). */
export interface FunctionLookup {
  /** The function of `key` (`sc.pp.pca`), or undefined when no configured plugin has it. */
  get(key: string): FunctionInfo | undefined;
}

/** A JSON Schema node, loosely typed for reading. */
export type SchemaNode = Record<string, unknown>;

/** The schema of one param of a function, or undefined. */
export function paramSchema(info: FunctionInfo, param: string): SchemaNode | undefined {
  const props = (info.json_schema as SchemaNode).properties as Record<string, SchemaNode> | undefined;
  return props?.[param];
}

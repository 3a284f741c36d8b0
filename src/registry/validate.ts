/**
 * Params validation with ajv (draft-07): defaults filled in (`useDefaults`), every problem reported
 * (`allErrors`), nothing coerced, unknown fields rejected (the manifests' `additionalProperties: false`).
 * Messages name the field and the rule: `params.n_neighbors: must be >= 1`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { MAX_JSON_DEPTH, tooDeepMessage, valueDepthOver } from "../sdk/input-limits.js";
import { ParamsError } from "./errors.js";

/** Compiles and caches one validator per function key. */
export class ParamsValidator {
  private readonly ajv = new Ajv({ useDefaults: true, allErrors: true, coerceTypes: false, strict: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  /**
   * Validate `params` against `schema` (compiled once per `key`); returns a new object with defaults
   * filled (the input is not modified) or throws a `ParamsError`. `locked` names params that cannot
   * be set (unsupported in JSON, locked to their default).
   */
  validate(
    key: string,
    schema: object,
    params: unknown,
    locked: readonly string[] = [],
  ): Record<string, unknown> {
    if (params === undefined || params === null) params = {};
    if (typeof params !== "object" || Array.isArray(params)) {
      throw new ParamsError(
        "params",
        [`params: must be an object, got ${Array.isArray(params) ? "an array" : typeof params}`],
        key,
      );
    }
    // Before anything recursive (cloning, validation, messages) sees it.
    if (valueDepthOver(params, MAX_JSON_DEPTH))
      throw new ParamsError("params", [tooDeepMessage("params", MAX_JSON_DEPTH)], key);
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(schema);
      this.compiled.set(key, fn);
    }
    const copy = structuredClone(params) as Record<string, unknown>;
    if (fn(copy)) return copy;
    const errors = fn.errors ?? [];
    const problems = errors.map((e) => describe(e, locked));
    throw new ParamsError(fieldOf(errors[0]), [...new Set(problems)], key);
  }
}

/** `params.a.b[3]` from an ajv instance path (`/a/b/3`), plus the property an error is about. */
function fieldOf(e: ErrorObject | undefined): string {
  if (!e) return "params";
  let path = "params";
  for (const part of e.instancePath.split("/").slice(1)) {
    const p = part.replace(/~1/g, "/").replace(/~0/g, "~");
    path += /^\d+$/.test(p) ? `[${p}]` : `.${p}`;
  }
  if (e.keyword === "required") path += `.${(e.params as { missingProperty: string }).missingProperty}`;
  if (e.keyword === "additionalProperties")
    path += `.${(e.params as { additionalProperty: string }).additionalProperty}`;
  return path;
}

function describe(e: ErrorObject, locked: readonly string[]): string {
  const field = fieldOf(e);
  switch (e.keyword) {
    case "required":
      return `${field}: is required`;
    case "additionalProperties": {
      const name = (e.params as { additionalProperty: string }).additionalProperty;
      if (e.instancePath === "" && locked.includes(name)) {
        return `${field}: cannot be set (not expressible in JSON; locked to its default)`;
      }
      return `${field}: unknown parameter (must NOT have additional properties)`;
    }
    case "enum":
      return `${field}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return `${field}: ${e.message ?? e.keyword}`;
  }
}

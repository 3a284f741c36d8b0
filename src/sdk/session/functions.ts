/**
 * The functions a session can run: the registry's, plus the built-in reader for any key the registry
 * lacks (today `read.read_data`). Lookup, validation (defaults filled, errors naming the field) and
 * loading go through here so the rest of the session never special-cases the built-ins.
 */

import { Ajv, type ValidateFunction } from "ajv";
import { ParamsError } from "../../registry/errors.js";
import { BadRequestError, NotFoundError } from "../errors.js";
import type { Operation } from "../jobs/operation.js";
import type { ShapeVariables } from "../resources/peak-memory.js";
import { BUILTIN_LIBRARY, READ_DATA_ENTRY, read_data } from "./builtin-readers.js";
import type { EngineFunction, EngineRegistry } from "./types.js";

interface Builtin {
  entry: EngineFunction;
  op: Operation;
  validate: ValidateFunction;
}

/** The built-in fallbacks, their schemas compiled by `ajv` (one compiler per `SessionFunctions`). */
function builtins(ajv: Ajv): Map<string, Builtin> {
  return new Map([
    [
      READ_DATA_ENTRY.key,
      {
        entry: READ_DATA_ENTRY,
        op: read_data as unknown as Operation,
        validate: ajv.compile(READ_DATA_ENTRY.json_schema),
      },
    ],
  ]);
}

/** The registry with the built-in fallbacks (see the module comment). */
export class SessionFunctions {
  private readonly registry: EngineRegistry;
  private readonly fallbacks: Map<string, Builtin>;

  constructor(registry: EngineRegistry) {
    this.registry = registry;
    this.fallbacks = builtins(new Ajv({ useDefaults: true, allErrors: true, strict: false }));
  }

  /** Library versions of the registry plus the built-ins. */
  get libraryVersions(): Record<string, string> {
    return { ...this.registry.libraryVersions };
  }

  /** The entry of `key`, or undefined. */
  get(key: string): EngineFunction | undefined {
    return this.registry.get(key) ?? this.fallbacks.get(key)?.entry;
  }

  /** Bytes `key` is expected to take at its peak on an input of `shape` (0 for the built-ins and unknowns). */
  peakMemory(key: string, shape: ShapeVariables, params: Readonly<Record<string, unknown>>): number {
    return this.registry.get(key) && this.registry.peakMemory
      ? this.registry.peakMemory(key, shape, params)
      : 0;
  }

  /**
   * The entry of `key` for a call that names it, or a `BadRequestError` (400, `unknown function <key>`):
   * a call naming a function nobody registered is a malformed request, on every face.
   */
  require(key: string): EngineFunction {
    const e = this.get(key);
    if (!e) throw new BadRequestError(`unknown function ${key}`);
    return e;
  }

  /** Validate `params` for `key`: a copy with defaults filled, or the registry's error naming the field. */
  validate(key: string, params: unknown): Record<string, unknown> {
    if (this.registry.get(key)) {
      try {
        return this.registry.validate(key, params);
      } catch (err) {
        // The registry's ParamsError is a plain Error; bad params are the caller's fault (400).
        if (err instanceof ParamsError) throw new BadRequestError(err.message);
        throw err;
      }
    }
    const b = this.fallbacks.get(key);
    if (!b) throw new NotFoundError(`unknown function ${key}`);
    const copy = structuredClone(params ?? {}) as Record<string, unknown>;
    if (!b.validate(copy)) {
      const e = b.validate.errors?.[0];
      const field = e?.instancePath
        ? e.instancePath.slice(1).replace(/\//g, ".")
        : ((e?.params as { missingProperty?: string })?.missingProperty ?? "");
      throw new BadRequestError(`${key}: params${field ? `.${field}` : ""} ${e?.message ?? "is invalid"}`);
    }
    return copy;
  }

  /** Whether `key` is served by a built-in (not the registry). */
  isBuiltin(key: string): boolean {
    return !this.registry.get(key) && this.fallbacks.has(key);
  }

  /** The operation function of `key`. */
  async load(key: string): Promise<Operation> {
    if (this.registry.get(key)) return this.registry.load(key);
    const b = this.fallbacks.get(key);
    if (!b) throw new NotFoundError(`unknown function ${key}`);
    return b.op;
  }

  /** The library version recorded for `entry`. */
  versionsFor(entry: EngineFunction): Record<string, string> {
    const v = this.registry.libraryVersions[entry.library];
    return { [entry.library]: v ?? (this.fallbacks.has(entry.key) ? BUILTIN_LIBRARY.version : "unknown") };
  }
}

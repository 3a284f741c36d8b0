/**
 * The manifest format: one `manifest.json` per plugin folder, generated from the TypeScript sources by
 * `npm run manifests` and read at startup (no TypeScript compiler at run time).
 */
import type { EffectClass } from "../sdk/jobs/operation.js";

/** How a path-like param is picked: a folder, a file, or either. */
export type PathKind = "folder" | "file" | "either";

/** The UI hints of one param, as `GET /api/functions` lists them. */
export interface UiField {
  /** Widget the client renders; one of {@link WIDGETS}, or null to let the client decide. */
  widget: string | null;
  /** For a relative file: the primary path param it is joined onto. For a value map: the param naming its column. */
  bound_to: string | null;
  /** Help text (the `@tooltip` tag, else the field's description). */
  tooltip: string | null;
  /** Set on path-like params; the session checks them for containment under the data dir. */
  path_kind: PathKind | null;
}

/** The widgets the spec allows (`json` and `obs_value_map` are for the service's own functions). */
export const WIDGETS = [
  "checkbox",
  "number",
  "text",
  "select",
  "multitext",
  "obs_key",
  "obs_categorical",
  "var_names",
  "layer_key",
  "obsm_key",
  "obsp_key",
  "library_id",
  "obs_value_map",
  "json",
] as const;

/** One function of a manifest. */
export interface ManifestFunction {
  namespace: string;
  function: string;
  effect_class: EffectClass;
  /** First sentence of the function's TSDoc. */
  summary: string;
  /** JSON Schema draft-07 of the params (unsupported params left out). */
  json_schema: Record<string, unknown>;
  ui_schema: Record<string, UiField>;
  partially_supported: boolean;
  /** Params that cannot be expressed in JSON (callbacks, class instances): locked to their default. */
  unsupported_params: string[];
  /** Module exporting the function, relative to the plugin folder (`./custom.js`). */
  module: string;
  /** Export name in that module. */
  export: string;
  /** Peak memory as an expression of the input's shape and the params (`@peakMemory`), when stated. */
  peak_memory?: string;
}

/** A plugin's manifest. */
export interface Manifest {
  /**
   * The library: its name and version, the namespaces of its own it declares (besides the built-in
   * ones), and, for a plugin built by `tessera plugin build`, a SHA-256 of each module's TypeScript
   * source at build time (module path → hex digest), so the registry refuses a stale build.
   */
  library: { name: string; version: string; namespaces?: string[]; sources?: Record<string, string> };
  functions: ManifestFunction[];
}

/** Check the shape of a parsed manifest, throwing an error that names `where` and the bad field. */
export function checkManifest(value: unknown, where: string): Manifest {
  const bad = (why: string): never => {
    throw new Error(`${where}: invalid manifest: ${why}`);
  };
  if (!value || typeof value !== "object") bad("not a JSON object");
  const m = value as Partial<Manifest>;
  if (!m.library || typeof m.library.name !== "string" || typeof m.library.version !== "string") {
    bad("library must be {name, version}");
  }
  const ns = m.library!.namespaces;
  if (ns !== undefined && !(Array.isArray(ns) && ns.every((x) => typeof x === "string")))
    bad("library.namespaces must be an array of strings");
  const src = m.library!.sources;
  if (
    src !== undefined &&
    (!src || typeof src !== "object" || !Object.values(src).every((x) => typeof x === "string"))
  )
    bad("library.sources must map module paths to digests");
  if (!Array.isArray(m.functions)) bad("functions must be an array");
  m.functions!.forEach((f, i) => {
    for (const k of ["namespace", "function", "effect_class", "summary", "module", "export"] as const) {
      if (typeof f?.[k] !== "string") bad(`functions[${i}].${k} must be a string`);
    }
    if (!f.json_schema || typeof f.json_schema !== "object")
      bad(`functions[${i}].json_schema must be an object`);
    if (!f.ui_schema || typeof f.ui_schema !== "object") bad(`functions[${i}].ui_schema must be an object`);
    if (!Array.isArray(f.unsupported_params)) bad(`functions[${i}].unsupported_params must be an array`);
    if (f.peak_memory !== undefined && typeof f.peak_memory !== "string")
      bad(`functions[${i}].peak_memory must be a string`);
  });
  return m as Manifest;
}

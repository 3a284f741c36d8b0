/**
 * The model behind the generated function forms (spec client §3.4): which widget of the closed set
 * a parameter gets, the defaults a new form starts from, the params a form sends (blank fields left
 * out so the server fills its defaults), and which field a server's 400 names. Pure functions, no
 * DOM, so they are tested without a browser.
 */

/** The subset of JSON Schema (draft-07) the manifests emit for a parameter. */
export interface ParamSchema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  items?: ParamSchema;
  anyOf?: ParamSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

/** A parameter's `ui_schema` entry. */
export interface UiField {
  widget?: string;
  path_kind?: string | null;
  bound_to?: string | null;
  tooltip?: string;
}

/** A function as `GET /api/functions` lists it. */
export interface FunctionEntry {
  key: string;
  namespace: string;
  function: string;
  effect_class: string;
  summary: string;
  json_schema: { properties?: Record<string, ParamSchema>; required?: string[] };
  ui_schema: Record<string, UiField>;
  partially_supported?: boolean;
  unsupported_params?: string[];
}

/** The closed widget set of the spec; anything else renders as `text`. */
export const WIDGETS = [
  "checkbox",
  "number",
  "text",
  "select",
  "multitext",
  "json",
  "obs_key",
  "obs_categorical",
  "obsm_key",
  "obsp_key",
  "layer_key",
  "var_names",
  "library_id",
  "obs_value_map",
] as const;

/** One widget of the closed set. */
export type Widget = (typeof WIDGETS)[number];

/** The non-null JSON type of a schema (`["number","null"]` → `number`). */
export function baseType(s: ParamSchema): string | undefined {
  if (Array.isArray(s.type)) return s.type.find((t) => t !== "null");
  if (s.type) return s.type;
  const alt = s.anyOf?.find((a) => a.type !== "null");
  return alt ? baseType(alt) : undefined;
}

/** Whether the schema admits null (a blank field then means null / the default). */
export function nullable(s: ParamSchema): boolean {
  if (Array.isArray(s.type)) return s.type.includes("null");
  return s.type === "null" || (s.anyOf ?? []).some((a) => a.type === "null");
}

/**
 * The widget a parameter renders with: the `ui_schema` widget when it is one of the closed set and
 * fits, `select` only for a closed set of literal values, else by type; an unknown type is `text`.
 */
export function widgetOf(s: ParamSchema, ui: UiField | undefined): Widget {
  const w = ui?.widget;
  const enumValues = s.enum ?? s.anyOf?.find((a) => a.enum)?.enum;
  if (enumValues && enumValues.length > 0 && (w === undefined || w === "select" || w === "text"))
    return "select";
  if (w && (WIDGETS as readonly string[]).includes(w)) return w as Widget;
  switch (baseType(s)) {
    case "boolean":
      return "checkbox";
    case "number":
    case "integer":
      return "number";
    case "array":
      return "multitext";
    case "object":
      return "json";
    default:
      return "text";
  }
}

/** The literal values a `select` offers. */
export function enumOf(s: ParamSchema): unknown[] {
  return s.enum ?? s.anyOf?.find((a) => a.enum)?.enum ?? [];
}

/** The values a new form starts from: every parameter's schema default (null included). */
export function defaultsOf(entry: FunctionEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(entry.json_schema.properties ?? {}))
    if (s.default !== undefined) out[k] = s.default;
  return out;
}

/**
 * The params a form sends: blank (undefined or empty-string) fields are left out so the server
 * fills its own default; a null stays only where the schema admits null.
 */
export function paramsToSend(entry: FunctionEntry, values: Record<string, unknown>): Record<string, unknown> {
  const props = entry.json_schema.properties ?? {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    const s = props[k];
    if (!s || v === undefined || v === "") continue;
    if (v === null && !nullable(s)) continue;
    out[k] = v;
  }
  return out;
}

/**
 * The parameters a server error names (`sc.pp.normalize_total: params.target_sum: must be > 0;
 * params.layer: …`), each with its message; problems naming no known parameter go under `""`.
 */
export function fieldErrorsOf(entry: FunctionEntry, detail: string): Record<string, string> {
  const names = new Set(Object.keys(entry.json_schema.properties ?? {}));
  const out: Record<string, string> = {};
  const body = detail.startsWith(`${entry.key}: `) ? detail.slice(entry.key.length + 2) : detail;
  for (const part of body.split("; ")) {
    const m = /^params\.([A-Za-z_$][\w$]*)/.exec(part);
    const name = m?.[1];
    const field = name && names.has(name) ? name : "";
    const msg = field ? part.replace(/^params\.[^:]*:\s*/, "") : part;
    out[field] = out[field] ? `${out[field]}; ${msg}` : msg;
  }
  return out;
}

/** Whether the function was contributed by a custom (non-library) plugin: the `custom.` namespace. */
export function isCustom(entry: FunctionEntry): boolean {
  return entry.namespace === "custom" || entry.namespace.startsWith("custom.");
}

/** A documentation page and citation per library namespace prefix (the spec leaves their source open). */
const LIBRARY_DOCS: Record<string, { docs: (e: FunctionEntry) => string; citation: string }> = {
  sc: {
    docs: (e) =>
      `https://scanpy.readthedocs.io/en/stable/api/generated/scanpy.${e.namespace.slice(3)}.${e.function}.html`,
    citation:
      "Wolf, Angerer & Theis (2018). SCANPY: large-scale single-cell gene expression data analysis. Genome Biology 19:15.",
  },
  sq: {
    docs: (e) =>
      `https://squidpy.readthedocs.io/en/stable/api/squidpy.${e.namespace.slice(3)}.${e.function}.html`,
    citation:
      "Palla et al. (2022). Squidpy: a scalable framework for spatial omics analysis. Nature Methods 19:171–178.",
  },
};

/** The documentation link and citation of a function (null for a namespace without known docs). */
export function docsOf(entry: FunctionEntry): { docs: string; citation: string } | null {
  const lib = LIBRARY_DOCS[entry.namespace.split(".")[0] ?? ""];
  return lib ? { docs: lib.docs(entry), citation: lib.citation } : null;
}

/**
 * The ui_schema rules: which widget, path kind and binding a param gets. Explicit TSDoc tags win
 * (`@widget`, `@boundTo`, `@pathKind`, `@tooltip`); otherwise the param's name decides, as a scanpy or
 * squidpy user expects (`cluster_key` is an obs categorical, `genes` are var names, `connectivity_key`
 * is an obsp key …); otherwise its JSON type gives a generic widget. Pure: used by the manifest build
 * and, at run time, by the coverage report.
 */
import type { PathKind, UiField } from "./manifest.js";
import { WIDGETS } from "./manifest.js";

/** The TSDoc tags of one param that bear on its UI. */
export interface UiTags {
  widget?: string;
  boundTo?: string;
  pathKind?: string;
  tooltip?: string;
}

/** What decided a param's widget: a tag, a name rule, or only its type (the coverage report counts those). */
export type UiSource = "tag" | "rule" | "type";

/** A param's UI hints and where they came from. */
export interface UiDecision {
  field: UiField;
  source: UiSource;
}

/** Obs columns holding categories: scanpy's groupby/batch keys, squidpy's cluster/library keys. */
const OBS_CATEGORICAL = new Set([
  "cluster_key",
  "groupby",
  "group_by",
  "groups_key",
  "batch_key",
  "key",
  "library_key",
  "sample_key",
  "condition_key",
  "celltype_key",
  "cell_type_key",
  "annotation_key",
  "region_set",
]);
const VAR_NAMES = new Set(["genes", "gene", "var_names", "gene_symbols", "gene_names", "var_name"]);
const LAYER = new Set(["layer", "layers", "layer_key"]);
const OBSM = new Set(["use_rep", "basis", "obsm_key", "spatial_key", "obsm", "rep"]);
const OBSP = new Set([
  "connectivity_key",
  "connectivities_key",
  "neighbors_key",
  "distances_key",
  "obsp",
  "obsp_key",
]);
/** Keys that end in `_key` but do not name an obs column. */
const NOT_OBS_KEYS = new Set([
  "uns_key",
  "varm_key",
  "var_key",
  "image_key",
  "img_key",
  "seg_key",
  "labels_key",
]);
/** Primary path params of readers (spec: "Session source rules"), in order of preference, with their kind. */
const PRIMARY_PATHS: Record<string, PathKind> = {
  path: "either",
  input: "either",
  image_path: "file",
  alignment_file: "file",
};

const PATH_KINDS = new Set<string>(["folder", "file", "either"]);

/** A JSON Schema node as the generator writes it (only the keywords the rules look at). */
export interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  items?: SchemaNode | SchemaNode[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  description?: string;
  [k: string]: unknown;
}

function types(s: SchemaNode): string[] {
  const t = s.type;
  return t === undefined ? [] : Array.isArray(t) ? t : [t];
}

/** The branches of a union schema, or the schema itself. */
function branches(s: SchemaNode): SchemaNode[] {
  const alts = s.anyOf ?? s.oneOf;
  return alts ? alts.flatMap(branches) : [s];
}

function isStringArray(s: SchemaNode): boolean {
  if (!types(s).includes("array")) return false;
  const it = s.items;
  return !!it && !Array.isArray(it) && types(it).includes("string");
}

function isEnum(s: SchemaNode): boolean {
  const alts = branches(s).filter((b) => !(types(b).length === 1 && types(b)[0] === "null"));
  return (
    alts.length > 0 &&
    alts.every((b) => b.enum !== undefined || b.const !== undefined) &&
    alts.reduce((n, b) => n + (b.enum?.length ?? 1), 0) > 0
  );
}

/** The generic widget of a schema by its type alone. */
export function typeWidget(s: SchemaNode): string {
  if (isEnum(s)) return "select";
  const alts = branches(s);
  if (alts.some(isStringArray)) return "multitext";
  const all = new Set(alts.flatMap(types).filter((t) => t !== "null"));
  if (all.size === 1) {
    const [t] = all;
    if (t === "boolean") return "checkbox";
    if (t === "number" || t === "integer") return "number";
    if (t === "string") return "text";
  }
  if (all.size === 2 && all.has("number") && all.has("integer")) return "number";
  if (all.size === 1 && all.has("array")) return "json";
  if (
    all.has("string") &&
    all.size >= 1 &&
    [...all].every((t) => t === "string" || t === "number" || t === "integer" || t === "boolean")
  ) {
    return "text";
  }
  return "json";
}

/** The primary path param of a function (the param relative files are joined onto), if any. */
export function primaryPathParam(names: readonly string[]): string | null {
  for (const p of Object.keys(PRIMARY_PATHS)) if (names.includes(p)) return p;
  return null;
}

/** The widget, path kind and binding that the name rules give `name`, or null when no rule matches. */
export function ruleFor(
  name: string,
  schema: SchemaNode,
  allNames: readonly string[],
): Omit<UiField, "tooltip"> | null {
  const textish = isStringArray(schema) || branches(schema).some(isStringArray) ? "multitext" : "text";
  if (name in PRIMARY_PATHS) return { widget: textish, bound_to: null, path_kind: PRIMARY_PATHS[name]! };
  if (/_(dir|folder)$/.test(name)) return { widget: textish, bound_to: null, path_kind: "folder" };
  if (/_path$/.test(name)) return { widget: textish, bound_to: null, path_kind: "either" };
  if (/_file$/.test(name) || name === "file") {
    // A file next to the reader's primary path (`counts_file`, `meta_file`) is joined onto it.
    const primary = primaryPathParam(allNames);
    return { widget: textish, bound_to: primary !== name ? primary : null, path_kind: "file" };
  }
  if (VAR_NAMES.has(name)) return { widget: "var_names", bound_to: null, path_kind: null };
  if (LAYER.has(name)) return { widget: "layer_key", bound_to: null, path_kind: null };
  if (OBSM.has(name)) return { widget: "obsm_key", bound_to: null, path_kind: null };
  if (OBSP.has(name)) return { widget: "obsp_key", bound_to: null, path_kind: null };
  if (name === "library_id") return { widget: "library_id", bound_to: null, path_kind: null };
  if (OBS_CATEGORICAL.has(name)) return { widget: "obs_categorical", bound_to: null, path_kind: null };
  if (/_key$/.test(name) && !NOT_OBS_KEYS.has(name))
    return { widget: "obs_key", bound_to: null, path_kind: null };
  return null;
}

/**
 * Decide one param's UI hints. Throws when a tag names an unknown widget or path kind, or binds to a
 * param the function does not have (a plugin author's mistake, caught at manifest build time).
 */
export function decideUi(
  name: string,
  schema: SchemaNode,
  tags: UiTags,
  allNames: readonly string[],
): UiDecision {
  if (tags.widget !== undefined && !(WIDGETS as readonly string[]).includes(tags.widget)) {
    throw new Error(`param "${name}": @widget ${tags.widget} is not one of ${WIDGETS.join(", ")}`);
  }
  if (tags.pathKind !== undefined && !PATH_KINDS.has(tags.pathKind)) {
    throw new Error(`param "${name}": @pathKind ${tags.pathKind} is not one of folder, file, either`);
  }
  if (tags.boundTo !== undefined && !allNames.includes(tags.boundTo)) {
    throw new Error(`param "${name}": @boundTo ${tags.boundTo} names no param of this function`);
  }
  const rule = ruleFor(name, schema, allNames);
  const tooltip =
    tags.tooltip?.replace(/\s+/g, " ").trim() || schema.description?.replace(/\s+/g, " ").trim() || null;
  const tagged = tags.widget !== undefined || tags.pathKind !== undefined || tags.boundTo !== undefined;
  const base = rule ?? { widget: typeWidget(schema), bound_to: null, path_kind: null };
  return {
    field: {
      widget: tags.widget ?? base.widget,
      bound_to: tags.boundTo ?? base.bound_to,
      tooltip,
      path_kind: (tags.pathKind as PathKind | undefined) ?? base.path_kind,
    },
    source: tagged ? "tag" : rule ? "rule" : "type",
  };
}

/** Abbreviations whose period does not end a sentence. */
const ABBREVIATIONS = /(?:^|[\s(])(?:e\.g|i\.e|etc|vs|cf|approx|resp|incl|no)\.$/i;

/**
 * The first sentence of a doc comment, whitespace collapsed: up to the first `.`, `!` or `?` that is
 * followed by a capitalised word (or ends the first paragraph), skipping abbreviations like `e.g.`.
 */
export function firstSentence(text: string): string {
  const para = text.trim().split(/\n\s*\n/)[0] ?? "";
  const flat = para.replace(/\s+/g, " ").trim();
  const re = /[.!?](?=\s+[A-Z0-9`"'(])/g;
  for (let m = re.exec(flat); m; m = re.exec(flat)) {
    const upto = flat.slice(0, m.index + 1);
    if (!ABBREVIATIONS.test(upto)) return upto;
  }
  return flat;
}

/**
 * Resolve local `#/definitions/X` references of a schema node against the root schema (also inside
 * `items` and union branches), so the rules see the real type of `cell_indices: CellIndex[]`.
 */
export function deref(node: SchemaNode, root: SchemaNode): SchemaNode {
  let n = node;
  for (let i = 0; i < 8 && typeof n.$ref === "string"; i++) {
    const m = /^#\/definitions\/(.+)$/.exec(n.$ref as string);
    const defs = root.definitions as Record<string, SchemaNode> | undefined;
    const target = m ? defs?.[decodeURIComponent(m[1]!)] : undefined;
    if (!target) break;
    const { $ref: _ref, ...rest } = n;
    n = { ...target, ...rest };
  }
  if (n.items && !Array.isArray(n.items)) n = { ...n, items: deref(n.items, root) };
  for (const k of ["anyOf", "oneOf"] as const) {
    const alts = n[k];
    if (alts) n = { ...n, [k]: alts.map((b) => deref(b, root)) };
  }
  return n;
}

/**
 * Whether a param's listed UI hints came from its type alone (no name rule and no tag): the terms
 * the coverage report counts. Works on a manifest entry, without the TSDoc tags: a tag shows as a
 * widget, path kind or binding other than the type's generic one.
 */
export function isGeneric(
  name: string,
  schema: SchemaNode,
  ui: { widget: string | null; bound_to: string | null; path_kind: string | null },
  allNames: readonly string[],
): boolean {
  if (ruleFor(name, schema, allNames)) return false;
  return ui.widget === typeWidget(schema) && ui.bound_to === null && ui.path_kind === null;
}

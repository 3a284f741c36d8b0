/**
 * Build time only: generate a plugin folder's `manifest.json` from its TypeScript sources. One
 * TypeScript program per plugin serves both the reflection over its exports (`findOperations`) and the
 * JSON Schema of every params type (ts-json-schema-generator); the UI hints come from the params'
 * TSDoc tags and the name rules of `ui-rules.ts`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  type CompletedConfig,
  createFormatter,
  createParser,
  createProgram,
  DEFAULT_CONFIG,
  SchemaGenerator,
} from "ts-json-schema-generator";
import ts from "typescript";
import type { Manifest, ManifestFunction, UiField } from "../manifest.js";
import { isNamespace, type PluginDescriptor, type PluginModule, pluginNamespaces } from "../plugin.js";
import { decideUi, deref, type SchemaNode, type UiTags } from "../ui-rules.js";
import { findOperations, type ModuleSource, stripLinks } from "./reflect.js";

/** The UI tags the generator copies onto properties (`extraTags`), then removed from the schema. */
const UI_TAGS = ["widget", "boundTo", "pathKind", "tooltip"] as const;

/** The repository's tsconfig (compiler options for every plugin program). */
const DEFAULT_TSCONFIG = fileURLToPath(new URL("../../../tsconfig.json", import.meta.url));

/** Options of `buildManifest`. */
export interface BuildOptions {
  /** tsconfig whose compiler options the program uses (default: the repository's). */
  tsconfig?: string;
  /** A program over the plugin's sources, made by the caller (`tessera plugin build`), used instead of a tsconfig. */
  program?: ts.Program;
  /** The descriptor, when the caller has loaded it already (from the built `plugin.js`). */
  descriptor?: PluginDescriptor;
  /** Module path → SHA-256 of the TypeScript sources built, recorded as `library.sources`. */
  sources?: Record<string, string>;
}

/** Load the descriptor exported as `plugin` by `<dir>/plugin.ts` (or the built `plugin.js` beside it). */
export async function loadDescriptor(
  dir: string,
  file = join(dir, "plugin.ts"),
  query = "",
): Promise<PluginDescriptor> {
  if (!existsSync(file))
    throw new Error(`${dir}: no plugin.ts (a plugin folder exports its descriptor as \`plugin\` there)`);
  let mod: { plugin?: PluginDescriptor };
  try {
    mod = (await import(pathToFileURL(file).href + query)) as { plugin?: PluginDescriptor };
  } catch (err) {
    throw new Error(`${file}: cannot be loaded: ${(err as Error).message}`);
  }
  const d = mod.plugin;
  if (!d || typeof d.name !== "string" || typeof d.version !== "string" || !Array.isArray(d.modules)) {
    throw new Error(`${file}: export \`plugin\` must be a descriptor {name, version, namespace, modules}`);
  }
  return d;
}

/** Source file and manifest path of a module path as the descriptor writes it (`./pp.js`). */
function moduleSource(
  dir: string,
  entry: string | PluginModule,
  fallbackNs: string,
  allowed: ReadonlySet<string>,
): ModuleSource {
  const path = typeof entry === "string" ? entry : entry.path;
  const rel = path.startsWith("./") ? path : `./${path}`;
  const manifestPath = rel.replace(/\.ts$/, ".js").replace(/\.mts$/, ".mjs");
  const file = resolve(dir, manifestPath.replace(/\.js$/, ".ts").replace(/\.mjs$/, ".mts"));
  if (!existsSync(file)) throw new Error(`${dir}: module ${path} listed in plugin.ts has no source ${file}`);
  return {
    file,
    manifestPath,
    namespace: (typeof entry === "string" ? undefined : entry.namespace) ?? fallbackNs,
    allowed,
  };
}

type Json = Record<string, unknown>;

/** Remove the UI tags from a schema tree and `{@link}` markup from its descriptions (in place). */
function cleanSchema(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(cleanSchema);
    return;
  }
  if (!node || typeof node !== "object") return;
  const o = node as Json;
  for (const t of UI_TAGS) delete o[t];
  if (typeof o.description === "string") o.description = stripLinks(o.description);
  for (const v of Object.values(o)) cleanSchema(v);
}

/**
 * Longest string a param accepts when its type sets no `@maxLength` (free text): whatever a client
 * sends is kept in the session's history, so no string is unbounded. Names carry a tighter
 * `@maxLength` on their type.
 */
export const DEFAULT_STRING_MAX_LENGTH = 10_000;

/** Keys whose values are data, not schemas (not walked by `boundStrings`). */
const VALUE_KEYS = new Set(["default", "examples", "const", "enum"]);

/** Give every string schema without a length bound, enum or const `maxLength` DEFAULT_STRING_MAX_LENGTH (in place). */
function boundStrings(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(boundStrings);
    return;
  }
  if (!node || typeof node !== "object") return;
  const o = node as Json;
  const types = ([] as unknown[]).concat(o.type ?? []);
  if (types.includes("string") && o.maxLength === undefined && o.enum === undefined && o.const === undefined)
    o.maxLength = DEFAULT_STRING_MAX_LENGTH;
  for (const [k, v] of Object.entries(o)) if (!VALUE_KEYS.has(k)) boundStrings(v);
}

/** Build the manifest of the plugin folder `dir` (nothing is written). */
export async function buildManifest(dir: string, opts: BuildOptions = {}): Promise<Manifest> {
  const absDir = resolve(dir);
  const descriptor = opts.descriptor ?? (await loadDescriptor(absDir));
  const allowed = pluginNamespaces(descriptor);
  const modules = descriptor.modules.map((m) => moduleSource(absDir, m, descriptor.namespace, allowed));
  const config: CompletedConfig = {
    ...DEFAULT_CONFIG,
    // Every .ts of the folder and its subfolders: params types may live beside the operations, and a
    // plugin may group its modules in folders (scanpy's pp/, tl/, get/).
    path: join(absDir, "**/*.ts"),
    tsconfig: opts.tsconfig ?? DEFAULT_TSCONFIG,
    type: "*",
    extraTags: [...UI_TAGS],
    skipTypeCheck: true,
    topRef: false,
    jsDoc: "extended",
    additionalProperties: false,
    functions: "hide",
  };
  const program = opts.program ?? createProgram(config);
  const generator = new SchemaGenerator(
    program,
    createParser(program, config),
    createFormatter(config),
    config,
  );

  const functions: ManifestFunction[] = [];
  const seen = new Map<string, string>();
  for (const mod of modules) {
    for (const op of findOperations(program, mod)) {
      const key = `${op.namespace}.${op.function}`;
      if (seen.has(key)) throw new Error(`${op.where}: ${key} is also exported by ${seen.get(key)}`);
      seen.set(key, op.where);
      let schema: Json;
      try {
        schema = generator.createSchema(op.paramsType) as Json;
      } catch (err) {
        throw new Error(
          `${op.where}: cannot generate the JSON Schema of ${op.paramsType}: ${(err as Error).message}`,
        );
      }
      const { json_schema, ui_schema } = finishSchema(schema, op.unsupported, op.where);
      functions.push({
        namespace: op.namespace,
        function: op.function,
        effect_class: op.effect_class,
        summary: op.summary,
        json_schema,
        ui_schema,
        partially_supported: op.unsupported.length > 0,
        unsupported_params: op.unsupported,
        module: op.module,
        export: op.export,
        ...(op.peak_memory !== undefined ? { peak_memory: op.peak_memory } : {}),
      });
    }
  }
  const own = [...allowed].filter((ns) => !isNamespace(ns)).sort();
  return {
    library: {
      name: descriptor.name,
      version: descriptor.version,
      ...(own.length ? { namespaces: own } : {}),
      ...(opts.sources ? { sources: opts.sources } : {}),
    },
    functions,
  };
}

/** At most this many type errors are listed in a build error. */
const MAX_DIAGNOSTICS = 10;

/** Type errors as a message: `file(line,col): text`, paths relative to the plugin folder. */
export function formatDiagnostics(diagnostics: readonly ts.Diagnostic[], dir: string): string {
  const lines = diagnostics.slice(0, MAX_DIAGNOSTICS).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, "\n  ");
    if (!d.file || d.start === undefined) return `  ${text}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return `  ${relative(dir, d.file.fileName)}(${line + 1},${character + 1}): ${text}`;
  });
  const more =
    diagnostics.length > MAX_DIAGNOSTICS ? `\n  … and ${diagnostics.length - MAX_DIAGNOSTICS} more` : "";
  return `type errors in ${dir}:\n${lines.join("\n")}${more}`;
}

/** Split the generator's output into the clean draft-07 schema and the ui_schema. */
function finishSchema(
  schema: Json,
  unsupported: readonly string[],
  where: string,
): { json_schema: Json; ui_schema: Record<string, UiField> } {
  const props = (schema.properties ?? {}) as Record<string, SchemaNode>;
  for (const name of unsupported) delete props[name];
  if (Array.isArray(schema.required)) {
    schema.required = (schema.required as string[]).filter((r) => !unsupported.includes(r));
    if ((schema.required as string[]).length === 0) delete schema.required;
  }
  const names = Object.keys(props);
  const ui_schema: Record<string, UiField> = {};
  for (const name of names) {
    const raw = props[name]!;
    const tags: UiTags = {};
    for (const t of UI_TAGS) if (typeof raw[t] === "string") tags[t] = raw[t] as string;
    try {
      ui_schema[name] = decideUi(name, deref(raw, schema as SchemaNode), tags, names).field;
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message}`);
    }
  }
  cleanSchema(schema);
  pruneDefinitions(schema);
  boundStrings(schema);
  if (!schema.type) schema.type = "object";
  // `Record<string, never>` (no params) comes out as `additionalProperties: {not: {}}`; say it plainly.
  const ap = schema.additionalProperties;
  if (ap && typeof ap === "object" && JSON.stringify(ap) === '{"not":{}}')
    schema.additionalProperties = false;
  return { json_schema: schema, ui_schema };
}

/** Drop definitions no longer reachable from the properties (those only unsupported params used). */
function pruneDefinitions(schema: Json): void {
  const defs = (schema.definitions ?? {}) as Record<string, unknown>;
  const keep = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (!node || typeof node !== "object") return;
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === "definitions") continue;
      const m = k === "$ref" && typeof v === "string" ? /^#\/definitions\/(.+)$/.exec(v) : null;
      if (m) {
        const name = decodeURIComponent(m[1]!);
        if (!keep.has(name)) {
          keep.add(name);
          visit(defs[name]);
        }
      } else visit(v);
    }
  };
  visit(schema);
  for (const name of Object.keys(defs)) if (!keep.has(name)) delete defs[name];
  if (Object.keys(defs).length === 0) delete schema.definitions;
}

/** The repository root (biome runs there so that its configuration applies). */
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * The manifest as written to disk: 2-space JSON passed through the repository's formatter (biome), so
 * that `npm run format` leaves the committed file as it is and regenerating gives the same bytes.
 * Without biome (an install without dev dependencies), or with `format: false` (a plugin outside this
 * repository), it is the plain JSON.
 */
export function manifestText(m: Manifest, opts: { format?: boolean } = {}): string {
  const raw = `${JSON.stringify(m, null, 2)}\n`;
  if (opts.format === false) return raw;
  let bin: string;
  try {
    bin = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
  } catch {
    return raw;
  }
  return execFileSync(process.execPath, [bin, "format", "--stdin-file-path=src/plugins/manifest.json"], {
    input: raw,
    encoding: "utf8",
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Build and write `<dir>/manifest.json`; returns its path. */
export async function writeManifest(dir: string, opts: BuildOptions = {}): Promise<string> {
  const out = join(resolve(dir), "manifest.json");
  writeFileSync(out, manifestText(await buildManifest(dir, opts)));
  return out;
}

/** The plugin folders under `root` (those with a `plugin.ts`), sorted by name. */
export function pluginFolders(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, e.name, "plugin.ts")))
    .map((e) => join(root, e.name))
    .sort();
}

/**
 * Where plugin folders, manifests and operation modules are. Built-in plugins live in
 * `src/plugins/<name>/` (run from source: tsx, vitest) or `dist/plugins/<name>/` (run from the build),
 * found from this module's own location, so the same code works in both. Other plugins are folders
 * or npm packages, found from the working directory the way Node finds a package.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = fileURLToPath(import.meta.url);
/** Whether this code runs from its TypeScript source (tsx, vitest) rather than from the build. */
const FROM_SOURCE = /\.[cm]?ts$/.test(HERE);

/** The package root: the nearest folder above this module with a package.json. */
function packageRoot(): string {
  let dir = dirname(HERE);
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`registry: no package.json above ${HERE}`);
    dir = up;
  }
}

/** Where one plugin's manifest is read and its modules imported from. */
export interface PluginLocation {
  /** The plugin as configured (a built-in name, a folder or an npm package name). */
  spec: string;
  /** Whether it is one of the plugins shipped with Tessera. */
  builtin: boolean;
  /** Path of its manifest.json. */
  manifest: string;
  /** Folder its manifest's module paths are relative to. */
  moduleDir: string;
}

/**
 * Names of the built-in plugins: folders with a manifest of `src/plugins` when running from source,
 * of `dist/plugins` when running from the build (a build left from older sources does not count).
 */
export function builtinPlugins(): string[] {
  const d = join(packageRoot(), FROM_SOURCE ? "src" : "dist", "plugins");
  if (!existsSync(d)) return [];
  const names = readdirSync(d, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(d, e.name, "manifest.json")))
    .map((e) => e.name);
  return names.sort();
}

/** An npm package name (`name`, `@scope/name`). */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/**
 * The folder of a plugin package: the package root, or the folder its package.json names under
 * `tessera.plugin` (e.g. `{"tessera": {"plugin": "./dist"}}`), which holds manifest.json.
 */
export function pluginFolderOfPackage(root: string): string {
  const pj = join(root, "package.json");
  if (!existsSync(pj)) return root;
  let meta: { tessera?: { plugin?: unknown } };
  try {
    meta = JSON.parse(readFileSync(pj, "utf8")) as typeof meta;
  } catch (err) {
    throw new Error(`${pj}: not valid JSON: ${(err as Error).message}`);
  }
  const sub = meta.tessera?.plugin;
  if (sub === undefined) return root;
  if (typeof sub !== "string") throw new Error(`${pj}: "tessera.plugin" must be a folder path`);
  const dir = resolve(root, sub);
  const rel = relative(root, dir);
  if (rel.startsWith("..") || isAbsolute(rel))
    throw new Error(`${pj}: "tessera.plugin" must be a folder inside the package, not ${sub}`);
  return dir;
}

/**
 * The root of npm package `name` as Node resolves it from `from`: the first
 * `node_modules/<name>/package.json` in `from` or a folder above it, else undefined.
 */
export function findPackageRoot(name: string, from: string): string | undefined {
  let dir = resolve(from);
  for (;;) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** A folder location (its manifest and modules), from a folder path or a package root. */
function folderLocation(spec: string, dir: string): PluginLocation {
  const folder = pluginFolderOfPackage(dir);
  return { spec, builtin: false, manifest: join(folder, "manifest.json"), moduleDir: folder };
}

/**
 * Folders whose subfolders are plugins found by name: `TESSERA_PLUGIN_PATH`, separated like `PATH`
 * (`:`; `;` on Windows). This repository's tests set it to `test/plugins` so that the test-only
 * `testkit` plugin, which is not shipped, is enabled by name like a built-in one.
 */
export function pluginPath(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.TESSERA_PLUGIN_PATH ?? "")
    .split(delimiter)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => resolve(s));
}

/**
 * Locate a configured plugin, in this order: a built-in name (`tessera`, `scanpy`, …); a folder path
 * (absolute, a `file:` URL, or relative to `cwd`, with or without a leading `./`); a name found as
 * `<folder>/<name>/manifest.json` in a folder of {@link pluginPath}; an npm package name installed
 * where `cwd`'s project resolves it (`node_modules` of `cwd` or a folder above). A folder or package
 * holds `manifest.json`, or names the folder that does in package.json's `tessera.plugin`. Throws
 * naming what was looked for.
 */
export function locatePlugin(spec: string, cwd: string = process.cwd()): PluginLocation {
  if (spec.startsWith("file:") || isAbsolute(spec) || spec.startsWith("./") || spec.startsWith("../")) {
    const dir = spec.startsWith("file:") ? fileURLToPath(spec) : resolve(cwd, spec);
    return folderLocation(spec, dir);
  }
  const root = packageRoot();
  if (/^[a-z0-9][a-z0-9_-]*$/i.test(spec) && builtinPlugins().includes(spec)) {
    const src = join(root, "src", "plugins", spec);
    const dist = join(root, "dist", "plugins", spec);
    if (FROM_SOURCE) return { spec, builtin: true, manifest: join(src, "manifest.json"), moduleDir: src };
    // From the build, modules are the built JS; the manifest is copied beside them or read from the source tree.
    const manifest = existsSync(join(dist, "manifest.json"))
      ? join(dist, "manifest.json")
      : join(src, "manifest.json");
    return { spec, builtin: true, manifest, moduleDir: dist };
  }
  const local = resolve(cwd, spec);
  if (existsSync(local) && statSync(local).isDirectory()) return folderLocation(spec, local);
  if (/^[a-z0-9][a-z0-9_-]*$/i.test(spec)) {
    for (const dir of pluginPath()) {
      if (existsSync(join(dir, spec, "manifest.json"))) return folderLocation(spec, join(dir, spec));
    }
  }
  if (NPM_NAME.test(spec)) {
    const pkg = findPackageRoot(spec, cwd);
    if (pkg) return folderLocation(spec, pkg);
  }
  throw new Error(
    `plugin "${spec}": not a built-in plugin (${builtinPlugins().join(", ")}), a folder${pluginPath().length ? `, a plugin in TESSERA_PLUGIN_PATH (${pluginPath().join(", ")})` : ""}, nor an npm package installed in ${cwd} or a folder above it`,
  );
}

/**
 * The file: URL of a manifest module path (`./custom.js`) under `moduleDir`: the built `.js` when it
 * exists, else the `.ts` source (tsx and vitest import it), else the `.js` path (importing it fails
 * with a message naming it).
 */
export function moduleUrl(moduleDir: string, rel: string): string {
  const js = resolve(moduleDir, rel);
  if (existsSync(js)) return pathToFileURL(js).href;
  const ts = js.replace(/\.js$/, ".ts").replace(/\.mjs$/, ".mts");
  if (ts !== js && existsSync(ts)) return pathToFileURL(ts).href;
  return pathToFileURL(js).href;
}

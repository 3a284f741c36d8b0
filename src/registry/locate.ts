/**
 * Where plugin folders, manifests and operation modules are. Built-in plugins live in
 * `src/plugins/<name>/` (run from source: tsx, vitest) or `dist/plugins/<name>/` (run from the build),
 * found from this module's own location, so the same code works in both.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
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
  /** The plugin as configured (a built-in name or a folder). */
  spec: string;
  /** Path of its manifest.json. */
  manifest: string;
  /** Folder its manifest's module paths are relative to. */
  moduleDir: string;
}

/** Names of the built-in plugins (folders of `src/plugins` with a manifest). */
export function builtinPlugins(): string[] {
  const dir = join(packageRoot(), "src", "plugins");
  const distDir = join(packageRoot(), "dist", "plugins");
  const names = new Set<string>();
  for (const d of [dir, distDir]) {
    if (!existsSync(d)) continue;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory() && existsSync(join(d, e.name, "manifest.json"))) names.add(e.name);
    }
  }
  return [...names].sort();
}

/**
 * Locate a configured plugin: a built-in name (`tessera`, `testkit`), or a folder path (absolute,
 * `./`-relative to the working directory, or a `file:` URL) holding a manifest.json.
 */
export function locatePlugin(spec: string): PluginLocation {
  if (spec.startsWith("file:") || isAbsolute(spec) || spec.startsWith("./") || spec.startsWith("../")) {
    const dir = spec.startsWith("file:") ? fileURLToPath(spec) : resolve(spec);
    return { spec, manifest: join(dir, "manifest.json"), moduleDir: dir };
  }
  if (!/^[a-z0-9][a-z0-9_-]*$/i.test(spec)) {
    throw new Error(
      `plugin "${spec}": not a built-in plugin name or a folder path (npm plugin packages are not supported yet)`,
    );
  }
  const root = packageRoot();
  const src = join(root, "src", "plugins", spec);
  const dist = join(root, "dist", "plugins", spec);
  if (FROM_SOURCE) return { spec, manifest: join(src, "manifest.json"), moduleDir: src };
  // From the build, modules are the built JS; the manifest is copied beside them or read from the source tree.
  const manifest = existsSync(join(dist, "manifest.json"))
    ? join(dist, "manifest.json")
    : join(src, "manifest.json");
  return { spec, manifest, moduleDir: dist };
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

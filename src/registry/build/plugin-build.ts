/**
 * `tessera plugin build [DIR]`: turn a plugin package's TypeScript into what the registry loads. One
 * TypeScript program over the plugin's sources is type-checked (errors are listed as
 * `file(line,col): message`, never a stack trace), emitted as JavaScript beside each source (Node 20
 * runs no TypeScript, so the build, not the user, compiles), then reflected into `manifest.json`,
 * which records a SHA-256 of every source so the registry refuses a build its sources have moved on
 * from (see `../fresh.ts`). Shipped with the package: ts-json-schema-generator and typescript are
 * runtime dependencies, loaded only by this command.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { sourceDigest } from "../fresh.js";
import { pluginFolderOfPackage } from "../locate.js";
import { buildManifest, formatDiagnostics, loadDescriptor, manifestText } from "./build-manifest.js";

/** What `buildPlugin` did. */
export interface PluginBuildResult {
  /** The plugin folder (where plugin.ts, the built modules and manifest.json are). */
  folder: string;
  /** Path of the manifest written. */
  manifest: string;
  /** Library name and version from the descriptor. */
  library: { name: string; version: string };
  /** Keys of the operations found. */
  functions: string[];
  /** Sources compiled, relative to the folder. */
  compiled: string[];
}

/** Folders never compiled: dependencies, tests, hidden folders. */
const SKIP_DIRS = new Set(["node_modules", "test", "tests", "__tests__"]);

/** The plugin's TypeScript sources under `dir` (tests and declaration files left out), sorted. */
export function pluginSources(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) walk(p);
      } else if (
        /\.m?ts$/.test(e.name) &&
        !/\.d\.m?ts$/.test(e.name) &&
        !/\.(test|spec)\.m?ts$/.test(e.name)
      ) {
        out.push(p);
      }
    }
  };
  walk(dir);
  return out.sort();
}

/** Compiler options: the plugin's tsconfig.json (folder, else package root) or Node ESM defaults. */
function compilerOptions(folder: string, root: string): ts.CompilerOptions {
  const file = [join(folder, "tsconfig.json"), join(root, "tsconfig.json")].find((f) => existsSync(f));
  const base: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    esModuleInterop: true,
  };
  let options = base;
  if (file) {
    const read = ts.readConfigFile(file, ts.sys.readFile);
    if (read.error) throw new Error(formatDiagnostics([read.error], folder));
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(file), undefined, file);
    if (parsed.errors.length) throw new Error(formatDiagnostics(parsed.errors, folder));
    options = { ...base, ...parsed.options };
  }
  // The JavaScript lands beside each source, where the manifest's module paths point.
  const {
    outDir: _o,
    outFile: _f,
    rootDir: _r,
    declarationDir: _d,
    noEmit: _n,
    emitDeclarationOnly: _e,
    ...rest
  } = options;
  return { ...rest, declaration: false, sourceMap: false, declarationMap: false, noEmitOnError: true };
}

/**
 * Build the plugin package in `dir` (its root, or the folder holding plugin.ts): type-check,
 * compile to `.js` beside the sources, write `manifest.json`. Throws an Error whose message is fit to
 * print as it is (no stack needed) on any problem.
 */
export async function buildPlugin(dir: string): Promise<PluginBuildResult> {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new Error(`${root}: no such folder`);
  const folder = pluginFolderOfPackage(root);
  if (!existsSync(join(folder, "plugin.ts")))
    throw new Error(
      `${folder}: no plugin.ts (a plugin exports its descriptor there: export const plugin = definePlugin({...}))`,
    );
  const sources = pluginSources(folder);
  const program = ts.createProgram(sources, compilerOptions(folder, root));
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length) throw new Error(formatDiagnostics(diagnostics, folder));
  const emitted = program.emit();
  if (emitted.emitSkipped || emitted.diagnostics.length)
    throw new Error(formatDiagnostics(emitted.diagnostics, folder));

  const digests: Record<string, string> = {};
  for (const file of sources)
    digests[`./${relative(folder, file).split(sep).join("/")}`] = sourceDigest(readFileSync(file));
  // The descriptor from the JavaScript just built (Node 20 cannot import plugin.ts); a query string
  // so that a second build in the same process reads the new file, not the module cache.
  const descriptor = await loadDescriptor(folder, join(folder, "plugin.js"), `?build=${Date.now()}`);
  const manifest = await buildManifest(folder, { program, descriptor, sources: digests });
  if (manifest.functions.length === 0)
    throw new Error(
      `${folder}: no operations found in ${descriptor.modules.length} module(s): an operation is an exported function (sd: SpatialData, params: NamedParams, ctx: OpContext) with a TSDoc comment`,
    );
  const out = join(folder, "manifest.json");
  writeFileSync(out, manifestText(manifest, { format: false }));
  return {
    folder,
    manifest: out,
    library: { name: descriptor.name, version: descriptor.version },
    functions: manifest.functions.map((f) => `${f.namespace}.${f.function}`),
    compiled: Object.keys(digests),
  };
}

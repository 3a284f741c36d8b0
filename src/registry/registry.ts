/**
 * The function registry: the operations of the configured plugins, read from their manifests at
 * startup (no TypeScript compiler at run time). It lists them (`GET /api/functions`), validates
 * params against their JSON Schemas, reports library versions and the UI coverage, and imports an
 * operation's module on demand.
 */
import { readFile } from "node:fs/promises";
import type { EffectClass, Operation } from "../sdk/jobs/operation.js";
import {
  compilePeakMemory,
  defaultPeakMemory,
  type PeakEstimate,
  type ShapeVariables,
} from "../sdk/resources/peak-memory.js";
import { TESSERA_VERSION } from "../sdk/version.js";
import { type CoverageReport, coverageOf } from "./coverage.js";
import { checkFreshBuild } from "./fresh.js";
import { locatePlugin, moduleUrl } from "./locate.js";
import { checkManifest, type UiField } from "./manifest.js";
import { isNamespace, isNamespaceName } from "./plugin.js";
import { ParamsValidator } from "./validate.js";

/** One registered operation: what `GET /api/functions` lists, plus where its code is. */
export interface FunctionEntry {
  /** `<namespace>.<function>`, e.g. `sc.pp.normalize_total`, `custom.rename_obs_column`. */
  key: string;
  namespace: string;
  function: string;
  effect_class: EffectClass;
  summary: string;
  /** JSON Schema draft-07 of the params (no injected args). */
  json_schema: object;
  ui_schema: Record<string, UiField>;
  partially_supported: boolean;
  unsupported_params: string[];
  /** Plugin (library) name, a key of `library_versions`. */
  library: string;
  /** Absolute file: URL of the module exporting the function. */
  module: string;
  /** Export name in that module. */
  export: string;
  /** Peak memory expression from the manifest (`@peakMemory`), when the operation states one. */
  peak_memory?: string;
}

/** An entry as the API lists it (without where the code is, nor the engine's memory estimate). */
export type PublicEntry = Omit<FunctionEntry, "module" | "export" | "library" | "peak_memory">;

/** Options of `Registry.load`. */
export interface RegistryOptions {
  /**
   * Plugins to load, read by {@link pluginList}: built-in names (`tessera`, `scanpy`, …), names found in
   * `TESSERA_PLUGIN_PATH`, plugin folder paths or npm package names. Default: the comma-separated `TESSERA_PLUGINS`, else {@link DEFAULT_PLUGINS}.
   */
  plugins?: string[];
  /** Folder npm package names and relative folder paths resolve from (default the working directory). */
  cwd?: string;
}

/** Plugins enabled when configuration names none: the service's own and scanpy's operations. */
export const DEFAULT_PLUGINS = ["tessera", "scanpy", "squidpy", "plots", "spatialdata-io", "spatial"];

/**
 * The plugins a configured list means. A list that names none of the {@link DEFAULT_PLUGINS} adds to
 * them (`./mine` → the defaults and ./mine); a list that names one of them is the whole list
 * (`tessera,testkit`); an entry `-name` drops that plugin (`-scanpy,./mine` → the defaults without
 * scanpy, and ./mine). An empty list is the default.
 */
export function pluginList(entries: readonly string[]): string[] {
  const items = entries.map((s) => s.trim()).filter(Boolean);
  const drop = new Set(items.filter((s) => s.startsWith("-")).map((s) => s.slice(1).trim()));
  const named = items.filter((s) => !s.startsWith("-"));
  const whole = named.some((s) => DEFAULT_PLUGINS.includes(s));
  const list = whole ? named : [...DEFAULT_PLUGINS, ...named];
  return [...new Set(list)].filter((s) => !drop.has(s));
}

/** The plugins configured by `TESSERA_PLUGINS` (comma-separated, read by {@link pluginList}). */
export function configuredPlugins(env: NodeJS.ProcessEnv = process.env): string[] {
  return pluginList((env.TESSERA_PLUGINS ?? "").split(","));
}

/** The registry of operations. */
export class Registry {
  /** Plugin name → version, plus `tessera` (the engine's own version). */
  readonly libraryVersions: Record<string, string>;
  private readonly entries: Map<string, FunctionEntry>;
  private readonly validator = new ParamsValidator();
  private readonly modules = new Map<string, Promise<Record<string, unknown>>>();
  /** Each function's peak-memory estimate, compiled once from its manifest expression (or the default). */
  private readonly estimates = new Map<string, PeakEstimate>();

  private constructor(entries: FunctionEntry[], libraryVersions: Record<string, string>) {
    this.entries = new Map(entries.map((e) => [e.key, e]));
    this.libraryVersions = libraryVersions;
    for (const e of entries) {
      let est = defaultPeakMemory(e.effect_class);
      if (e.peak_memory !== undefined) {
        try {
          est = compilePeakMemory(e.peak_memory);
        } catch (err) {
          throw new Error(`${e.key}: ${(err as Error).message}`);
        }
      }
      this.estimates.set(e.key, est);
    }
  }

  /** Bytes function `key` is expected to take at its peak on an input of this shape with these params. */
  peakMemory(key: string, shape: ShapeVariables, params: Readonly<Record<string, unknown>>): number {
    return (this.estimates.get(key) ?? (() => 0))(shape, params);
  }

  /** Read the manifests of the configured plugins. Throws naming the plugin and file on any problem. */
  static async load(opts: RegistryOptions = {}): Promise<Registry> {
    const specs = opts.plugins ? pluginList(opts.plugins) : configuredPlugins();
    if (specs.length === 0) throw new Error("no plugins configured (every plugin was dropped with -name)");
    const loaded = await Promise.all(
      specs.map(async (spec) => {
        const loc = locatePlugin(spec, opts.cwd);
        let text: string;
        try {
          text = await readFile(loc.manifest, "utf8");
        } catch {
          throw new Error(
            `plugin "${spec}": no manifest at ${loc.manifest} (${loc.builtin ? "run `npm run manifests`" : "run `tessera plugin build` in the plugin's folder"})`,
          );
        }
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch (err) {
          throw new Error(`${loc.manifest}: not valid JSON: ${(err as Error).message}`);
        }
        const manifest = checkManifest(json, loc.manifest);
        await checkFreshBuild(loc.moduleDir, manifest, spec);
        return { loc, manifest };
      }),
    );
    const versions: Record<string, string> = { tessera: TESSERA_VERSION };
    const entries: FunctionEntry[] = [];
    const owner = new Map<string, string>();
    const urls = new Map<string, string>();
    for (const { loc, manifest } of loaded) {
      const lib = manifest.library.name;
      if (owner.has(`lib:${lib}`) && lib !== "tessera")
        throw new Error(`plugin "${loc.spec}": library "${lib}" is loaded twice`);
      owner.set(`lib:${lib}`, loc.spec);
      versions[lib] = manifest.library.version;
      const declared = new Set(manifest.library.namespaces ?? []);
      for (const ns of declared)
        if (!isNamespaceName(ns))
          throw new Error(`${loc.manifest}: declared namespace "${ns}" is not a valid name`);
      for (const f of manifest.functions) {
        const key = `${f.namespace}.${f.function}`;
        if (!isNamespace(f.namespace) && !declared.has(f.namespace))
          throw new Error(
            `${loc.manifest}: ${key}: namespace "${f.namespace}" is neither built in nor declared in library.namespaces`,
          );
        const other = owner.get(key);
        if (other)
          throw new Error(`function ${key} is defined by both plugin "${other}" and plugin "${loc.spec}"`);
        owner.set(key, loc.spec);
        const urlKey = `${loc.moduleDir}\0${f.module}`;
        let url = urls.get(urlKey);
        if (!url) {
          url = moduleUrl(loc.moduleDir, f.module);
          urls.set(urlKey, url);
        }
        entries.push({
          key,
          namespace: f.namespace,
          function: f.function,
          effect_class: f.effect_class,
          summary: f.summary,
          json_schema: f.json_schema,
          ui_schema: f.ui_schema,
          partially_supported: f.partially_supported,
          unsupported_params: f.unsupported_params,
          library: lib,
          module: url,
          export: f.export,
          ...(f.peak_memory !== undefined ? { peak_memory: f.peak_memory } : {}),
        });
      }
    }
    entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return new Registry(entries, versions);
  }

  /** Every entry, sorted by key. */
  list(): FunctionEntry[] {
    return [...this.entries.values()];
  }

  /**
   * The entry of `key`, or undefined. A plot entry records namespace `pl` (service-spec PlotEntry)
   * whatever namespace its function lives in, so `pl.<f>` also finds scanpy's `sc.pl.<f>` (no squidpy
   * plot shares a scanpy plot's name), then the one plot function named `<f>` in any other namespace
   * (`custom.cellular_neighborhoods_plot`, a plugin's plot). Only plots are found that way.
   */
  get(key: string): FunctionEntry | undefined {
    const direct = this.entries.get(key);
    if (direct || !key.startsWith("pl.")) return direct;
    const scanpy = this.entries.get(`sc.${key}`);
    if (scanpy) return scanpy;
    const fn = key.slice(3);
    const plots = [...this.entries.values()].filter((e) => e.function === fn && e.effect_class === "plot");
    return plots.length === 1 ? plots[0] : undefined;
  }

  /** The entry of `key`, or an `unknown function <key>` error. */
  require(key: string): FunctionEntry {
    const e = this.get(key);
    if (!e) throw new Error(`unknown function ${key}`);
    return e;
  }

  /**
   * Validate `params` of function `key`: returns a copy with defaults filled, or throws a
   * `ParamsError` naming the field and the rule (`params.n_neighbors: must be >= 1`).
   */
  validate(key: string, params: unknown): Record<string, unknown> {
    const e = this.require(key);
    return this.validator.validate(key, e.json_schema, params, e.unsupported_params);
  }

  /** The registry as `GET /api/functions` returns it. */
  envelope(): { functions: PublicEntry[]; library_versions: Record<string, string> } {
    return {
      functions: this.list().map(({ module: _m, export: _e, library: _l, peak_memory: _p, ...pub }) => pub),
      library_versions: { ...this.libraryVersions },
    };
  }

  /** The param terms no widget rule matched, ranked by how many functions use them. */
  coverage(): CoverageReport {
    return coverageOf(this.list());
  }

  /** Import the module of `key` and return its operation function. */
  // biome-ignore lint/suspicious/useAdjacentOverloadSignatures: the static load (read manifests) and this one (import a module) are different methods named by the engine contract.
  async load(key: string): Promise<Operation> {
    const e = this.require(key);
    let mod = this.modules.get(e.module);
    if (!mod) {
      mod = import(e.module) as Promise<Record<string, unknown>>;
      this.modules.set(e.module, mod);
      mod.catch(() => this.modules.delete(e.module));
    }
    let m: Record<string, unknown>;
    try {
      m = await mod;
    } catch (err) {
      throw new Error(`${key}: cannot import ${e.module}: ${(err as Error).message}`);
    }
    const fn = m[e.export];
    if (typeof fn !== "function")
      throw new Error(`${key}: ${e.module} has no exported function "${e.export}"`);
    return fn as Operation;
  }
}

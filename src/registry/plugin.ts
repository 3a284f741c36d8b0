/**
 * The plugin descriptor: what a plugin folder's `plugin.ts` exports. It names the library, its version,
 * the namespace its operations belong to by default, and the modules that hold them. It never lists the
 * operations themselves: the manifest build finds them by reflection over each module's exports.
 */

/** A module of operations and the namespace its functions belong to unless a `@namespace` tag says otherwise. */
export interface PluginModule {
  /** Path relative to the plugin folder, written as an import (`./pp.js`); the build reads the `.ts` beside it. */
  readonly path: string;
  /** Namespace of the module's functions (`sc.pp`, `gr`, `pl`, `custom` …); defaults to the plugin's. */
  readonly namespace?: string;
}

/** A plugin folder's descriptor (the `plugin` export of its `plugin.ts`). */
export interface PluginDescriptor {
  /** Library name, the key of `library_versions` (`tessera`, `scanpy` …). */
  readonly name: string;
  /** Version string reported in `library_versions` and recorded in every history entry. */
  readonly version: string;
  /** Default namespace of the plugin's functions. */
  readonly namespace: string;
  /** Modules that hold operations: a path, or a path with its own namespace. */
  readonly modules: readonly (string | PluginModule)[];
}

/** Identity helper that type-checks a descriptor: `export const plugin = definePlugin({...})`. */
export function definePlugin(descriptor: PluginDescriptor): PluginDescriptor {
  return descriptor;
}

/** The namespaces an operation may live in (scanpy, squidpy, spatialdata-io and the service's own). */
export const NAMESPACES = [
  "sc.pp",
  "sc.tl",
  "sc.get",
  "gr",
  "im",
  "tl",
  "pl",
  "read",
  "io",
  "custom",
] as const;

/** One namespace. */
export type Namespace = (typeof NAMESPACES)[number];

/** Whether `ns` is a known namespace. */
export function isNamespace(ns: string): ns is Namespace {
  return (NAMESPACES as readonly string[]).includes(ns);
}

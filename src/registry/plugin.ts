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
  /**
   * Default namespace of the plugin's functions: a built-in one ({@link NAMESPACES}) or one of the
   * plugin's own (it counts as declared).
   */
  readonly namespace: string;
  /**
   * Namespaces of the plugin's own besides the built-in ones, for modules and `@namespace` tags
   * (each must satisfy {@link isNamespaceName}; e.g. `["smooth", "qc"]`).
   */
  readonly namespaces?: readonly string[];
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
  "sc.pl",
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

/** Whether `ns` is a built-in namespace. */
export function isNamespace(ns: string): ns is Namespace {
  return (NAMESPACES as readonly string[]).includes(ns);
}

/**
 * The rule for a namespace a plugin declares: one to three dot-separated lowercase words (a letter,
 * then letters, digits or `_`, at most 32 each), e.g. `smooth`, `myorg.qc`. Function keys are
 * `<namespace>.<function>`, split at the last dot, so a namespace may hold dots but a function may not.
 */
export function isNamespaceName(ns: string): boolean {
  return /^[a-z][a-z0-9_]{0,31}(?:\.[a-z][a-z0-9_]{0,31}){0,2}$/.test(ns);
}

/**
 * The namespaces a plugin's functions may use: the built-in ones, its default namespace and those it
 * declares. Throws naming the plugin when a declared name breaks {@link isNamespaceName}.
 */
export function pluginNamespaces(
  d: Pick<PluginDescriptor, "name" | "namespace" | "namespaces">,
): Set<string> {
  const own = [d.namespace, ...(d.namespaces ?? [])].filter((ns) => !isNamespace(ns));
  for (const ns of own) {
    if (!isNamespaceName(ns))
      throw new Error(
        `plugin "${d.name}": namespace "${ns}" is not a valid name (lowercase words separated by dots, e.g. "smooth" or "myorg.qc")`,
      );
  }
  return new Set<string>([...NAMESPACES, ...own]);
}

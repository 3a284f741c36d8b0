/**
 * `openZarr(store)`: a small facade for walking a zarr hierarchy without caring about its flavour (v2 or v3,
 * consolidated or not, directory, zip or HTTP). The SpatialData and AnnData readers use it to find groups and
 * read attributes; arrays are then opened with zarrita on {@link ZarrTree.store}. Browser-safe.
 * @module
 */
import type { GetOptions, ReadableStore } from "../store/types.js";
import {
  type ConsolidatedIndex,
  type ConsolidatedNode,
  indexChildren,
  indexFromListing,
  type JsonObject,
  normalizePath,
  parseJsonObject,
  readConsolidated,
  type WithConsolidatedOptions,
  withConsolidated,
} from "./consolidated.js";

/** Kind, format and attributes of one node. */
export type ZarrNodeInfo = Pick<ConsolidatedNode, "path" | "kind" | "zarrFormat" | "attributes">;

/** A walkable view of a zarr hierarchy. Paths are relative to the root: `""`, `"tables/table"`. */
export interface ZarrTree {
  /** The store's location (for error messages). */
  readonly location: string;
  /**
   * The store to open arrays on with zarrita: wrapped so metadata keys come from the consolidated (or listed)
   * metadata without I/O.
   */
  readonly store: ReadableStore;
  /** Consolidated metadata of the store, or `null` when it has none (then the tree comes from listing, if any). */
  readonly index: ConsolidatedIndex | null;
  /** The node at `path`, or `undefined` if there is none. */
  node(path: string): Promise<ZarrNodeInfo | undefined>;
  /**
   * Names of the direct child groups/arrays of `path`, sorted (`[]` for an array). Non-zarr keys (parquet files)
   * are not included. Throws when `path` is not in the hierarchy, or when the store has neither consolidated
   * metadata nor a listing (plain HTTP directory).
   */
  children(path: string): Promise<string[]>;
  /** Attributes of the node at `path` (`{}` when it has none). Throws when there is no node there. */
  attrs(path: string): Promise<JsonObject>;
}

/** Options of {@link openZarr}. */
export interface OpenZarrOptions extends WithConsolidatedOptions {
  /** Aborts the metadata reads. */
  signal?: AbortSignal;
}

/** Tree backed by a complete index (consolidated metadata or a full listing). */
class IndexedTree implements ZarrTree {
  readonly location: string;
  readonly store: ReadableStore;
  readonly index: ConsolidatedIndex | null;
  readonly #nodes: ConsolidatedIndex;

  constructor(
    store: ReadableStore,
    nodes: ConsolidatedIndex,
    consolidated: boolean,
    opts: WithConsolidatedOptions,
  ) {
    this.location = store.location;
    this.#nodes = nodes;
    this.index = consolidated ? nodes : null;
    this.store = withConsolidated(store, nodes, opts);
  }

  /** Whether `path` is a node or an implicit group (an ancestor of nodes without metadata of its own). */
  #exists(p: string): boolean {
    if (this.#nodes.nodes.has(p)) return true;
    const prefix = p === "" ? "" : `${p}/`;
    for (const k of this.#nodes.nodes.keys()) if (k.startsWith(prefix)) return true;
    return false;
  }

  async node(path: string): Promise<ZarrNodeInfo | undefined> {
    const n = this.#nodes.nodes.get(normalizePath(path));
    return n && { path: n.path, kind: n.kind, zarrFormat: n.zarrFormat, attributes: n.attributes };
  }

  async children(path: string): Promise<string[]> {
    const p = normalizePath(path);
    if (!this.#exists(p)) throw new Error(`${this.location}: no zarr group at "${p}"`);
    if (this.#nodes.nodes.get(p)?.kind === "array") return [];
    return indexChildren(this.#nodes, p);
  }

  /** Direct children of `path` in the index, `[]` when it has none or is not there. */
  listed(path: string): string[] {
    return indexChildren(this.#nodes, path);
  }

  async attrs(path: string): Promise<JsonObject> {
    const p = normalizePath(path);
    const n = this.#nodes.nodes.get(p);
    if (n) return n.attributes;
    if (this.#exists(p)) return {};
    throw new Error(`${this.location}: no zarr group or array at "${p}"`);
  }
}

/** Tree over a store that can neither list nor offers consolidated metadata: reads node metadata on demand. */
class UnlistableTree implements ZarrTree {
  readonly location: string;
  readonly store: ReadableStore;
  readonly index = null;

  constructor(store: ReadableStore) {
    this.location = store.location;
    this.store = store;
  }

  async node(path: string, opts?: GetOptions): Promise<ZarrNodeInfo | undefined> {
    const p = normalizePath(path);
    const key = (name: string) => (p === "" ? `/${name}` : `/${p}/${name}`) as `/${string}`;
    const v3 = await this.store.get(key("zarr.json"), opts);
    if (v3) {
      const meta = parseJsonObject(this.location, key("zarr.json").slice(1), v3);
      const kind = meta.node_type === "array" ? "array" : "group";
      const attributes = (meta.attributes ?? {}) as JsonObject;
      return { path: p, kind, zarrFormat: 3, attributes };
    }
    const [zgroup, zarray, zattrs] = await Promise.all(
      [".zgroup", ".zarray", ".zattrs"].map((n) => this.store.get(key(n), opts)),
    );
    if (!zgroup && !zarray) return undefined;
    const attributes = zattrs ? parseJsonObject(this.location, key(".zattrs").slice(1), zattrs) : {};
    return { path: p, kind: zarray ? "array" : "group", zarrFormat: 2, attributes };
  }

  async children(path: string): Promise<string[]> {
    throw new Error(
      `${this.location}: cannot list the children of "${normalizePath(path)}": the store has no consolidated ` +
        `metadata (.zmetadata, zmetadata or consolidated_metadata in zarr.json) and cannot be listed ` +
        `(e.g. a plain HTTP directory); consolidated metadata is required to walk its groups`,
    );
  }

  async attrs(path: string): Promise<JsonObject> {
    const n = await this.node(path);
    if (!n) throw new Error(`${this.location}: no zarr group or array at "${normalizePath(path)}"`);
    return n.attributes;
  }
}

/**
 * Open a zarr hierarchy for walking. Uses consolidated metadata when the store has it (no further metadata I/O);
 * otherwise lists the store once and reads every metadata file; for stores that cannot list (HTTP directories)
 * `children()` throws and `attrs()` reads node metadata on demand.
 */
export async function openZarr(store: ReadableStore, opts: OpenZarrOptions = {}): Promise<ZarrTree> {
  const get = { signal: opts.signal };
  const index = await readConsolidated(store, get);
  if (index) return new IndexedTree(store, index, true, opts);
  if (store.list) {
    const listed = await indexFromListing(
      store as ReadableStore & Required<Pick<ReadableStore, "list">>,
      get,
    );
    return new IndexedTree(store, listed, false, opts);
  }
  return new UnlistableTree(store);
}

/**
 * Child names from a tree's index (consolidated or listed), for readers that walk a sub-hierarchy on their own
 * (the AnnData reader's `listChildren`): no I/O, and a path missing from the index has no children. `undefined`
 * for a tree that cannot list (an HTTP folder without consolidated metadata), so the reader says it could not.
 */
export function indexChildLister(tree: ZarrTree): ((path: string) => Promise<string[]>) | undefined {
  return tree instanceof IndexedTree ? (path) => Promise.resolve(tree.listed(path)) : undefined;
}

/** Alias of {@link openZarr} (the name the SpatialData reader imports). */
export const openZarrTree = openZarr;

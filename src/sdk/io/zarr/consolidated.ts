/**
 * Consolidated zarr metadata, every flavour:
 * - zarr v2 `.zmetadata` and spatialdata's `zmetadata` (no dot): `{"metadata": {key: json}, "zarr_consolidated_format": 1}`;
 * - zarr v3 inline (zarr-python 3): root `zarr.json` → `consolidated_metadata: {kind: "inline", must_understand:
 *   false, metadata: {path: nodeMeta}}`.
 *
 * {@link readConsolidated} turns any of them into one {@link ConsolidatedIndex}; {@link withConsolidated} answers
 * metadata keys from it without I/O (one request per node matters over HTTP); {@link consolidateV3} writes the v3
 * form. Browser-safe.
 * @module
 */
import { absoluteKey, METADATA_BASENAMES, splitKey } from "../store/keys.js";
import { makeGroupsExplicit } from "./hierarchy-v3.js";
import { isObject, type JsonObject, normalizePath, parseJsonObject } from "./json.js";

export { type JsonObject, normalizePath, parseJsonObject } from "./json.js";

import type {
  AbsolutePath,
  GetOptions,
  ListableWritableStore,
  RangeQuery,
  ReadableStore,
} from "../store/types.js";

/** One node (group or array) of a zarr hierarchy. */
export interface ConsolidatedNode {
  /** Path relative to the root: `""` for the root, `"a/b"` below it. */
  path: string;
  /** Group or array. */
  kind: "group" | "array";
  /** Zarr format of the node's metadata. */
  zarrFormat: 2 | 3;
  /** User attributes (`.zattrs`, or `attributes` of `zarr.json`); `{}` when none. */
  attributes: JsonObject;
  /** Array metadata (`.zarray` object, or the array's `zarr.json`); absent for groups. */
  array?: JsonObject;
  /** The node's metadata document as stored: `.zgroup`/`.zarray` (v2) or `zarr.json` (v3). */
  meta: JsonObject;
}

/** Where an index came from. */
export type ConsolidatedSource = ".zmetadata" | "zmetadata" | "zarr.json" | "listing";

/** Every node of a hierarchy, keyed by path. */
export interface ConsolidatedIndex {
  /** Zarr format of the hierarchy. */
  format: 2 | 3;
  /** The key the metadata was read from, or `"listing"` when built by listing the store. */
  source: ConsolidatedSource;
  /** Path → node (`""` is the root). */
  nodes: ReadonlyMap<string, ConsolidatedNode>;
}

const encoder = new TextEncoder();

/** Reads in flight at once when gathering metadata files (bounded so large stores do not exhaust file handles). */
const CONCURRENCY = 16;

/** `Promise.all(items.map(fn))` with at most {@link CONCURRENCY} calls running at a time; keeps the order. */
async function mapLimit<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return out;
}

/** Build an index from a flat v2 metadata map (`{".zgroup": …, "a/.zarray": …, "a/.zattrs": …}`). */
export function indexFromV2Metadata(metadata: JsonObject, source: ConsolidatedSource): ConsolidatedIndex {
  const nodes = new Map<string, ConsolidatedNode>();
  const attrs = new Map<string, JsonObject>();
  for (const [key, value] of Object.entries(metadata)) {
    const [dir, base] = splitKey(key);
    if (!isObject(value)) continue;
    const path = normalizePath(dir);
    if (base === ".zgroup") {
      nodes.set(path, { path, kind: "group", zarrFormat: 2, attributes: {}, meta: value });
    } else if (base === ".zarray") {
      nodes.set(path, { path, kind: "array", zarrFormat: 2, attributes: {}, array: value, meta: value });
    } else if (base === ".zattrs") {
      attrs.set(path, value);
    }
  }
  for (const [path, a] of attrs) {
    const n = nodes.get(path);
    if (n) n.attributes = a;
  }
  return { format: 2, source, nodes };
}

function v3Node(path: string, meta: JsonObject): ConsolidatedNode | undefined {
  const kind = meta.node_type;
  if (kind !== "group" && kind !== "array") return undefined;
  const attributes = isObject(meta.attributes) ? meta.attributes : {};
  return kind === "array"
    ? { path, kind, zarrFormat: 3, attributes, array: meta, meta }
    : { path, kind, zarrFormat: 3, attributes, meta };
}

/** Build an index from a v3 root `zarr.json` carrying inline `consolidated_metadata`. */
export function indexFromV3Root(root: JsonObject): ConsolidatedIndex {
  const nodes = new Map<string, ConsolidatedNode>();
  const rootNode = v3Node("", root);
  if (rootNode) nodes.set("", rootNode);
  const cm = root.consolidated_metadata;
  if (isObject(cm) && isObject(cm.metadata)) {
    for (const [p, meta] of Object.entries(cm.metadata)) {
      if (!isObject(meta)) continue;
      const path = normalizePath(p);
      const n = v3Node(path, meta);
      if (n && path !== "") nodes.set(path, n);
    }
  }
  return { format: 3, source: "zarr.json", nodes };
}

function readV2Consolidated(location: string, key: string, bytes: Uint8Array): ConsolidatedIndex {
  const doc = parseJsonObject(location, key, bytes);
  if (doc.zarr_consolidated_format !== 1 || !isObject(doc.metadata)) {
    throw new Error(
      `${location}: ${key} is not zarr consolidated metadata (expected {"metadata": {...}, "zarr_consolidated_format": 1})`,
    );
  }
  return indexFromV2Metadata(doc.metadata, key === ".zmetadata" ? ".zmetadata" : "zmetadata");
}

/**
 * Read the consolidated metadata of a store, whichever flavour it has, or `null` when it has none.
 *
 * The three candidate keys are fetched in parallel (one round trip over HTTP). A v3 root (`zarr.json`) decides:
 * its inline `consolidated_metadata` is used, or `null` is returned if it has none (a v2 `.zmetadata` beside a v3
 * root would be stale). Otherwise `.zmetadata` wins over `zmetadata`. Malformed JSON throws.
 */
export async function readConsolidated(
  store: ReadableStore,
  opts?: GetOptions,
): Promise<ConsolidatedIndex | null> {
  const [v3, dot, nodot] = await Promise.all([
    store.get("/zarr.json", opts),
    store.get("/.zmetadata", opts),
    store.get("/zmetadata", opts),
  ]);
  if (v3) {
    const root = parseJsonObject(store.location, "zarr.json", v3);
    if (root.zarr_format === 3) {
      const cm = root.consolidated_metadata;
      if (!isObject(cm) || root.node_type !== "group") return null;
      if (cm.kind !== "inline" || !isObject(cm.metadata)) {
        if (cm.must_understand === false) return null;
        throw new Error(
          `${store.location}: zarr.json has consolidated_metadata of kind ${JSON.stringify(cm.kind)}, which is not supported`,
        );
      }
      return indexFromV3Root(root);
    }
  }
  if (dot) return readV2Consolidated(store.location, ".zmetadata", dot);
  if (nodot) return readV2Consolidated(store.location, "zmetadata", nodot);
  return null;
}

/** Options of {@link withConsolidated}. */
export interface WithConsolidatedOptions {
  /**
   * When true (default) the index is the truth for metadata: keys of nodes it does not list (and metadata keys
   * of the other zarr format) answer `undefined` without touching the store, as zarr-python does with
   * consolidated metadata. When false such keys fall through to the store.
   */
  authoritative?: boolean;
}

/** The metadata document a key names, from the index; `null` = "known absent", `undefined` = "not answerable". */
function answer(index: ConsolidatedIndex, dir: string, base: string): JsonObject | null | undefined {
  const node = index.nodes.get(normalizePath(dir));
  if (index.format === 3) {
    if (base !== "zarr.json") return null;
    return node ? node.meta : undefined;
  }
  if (base === "zarr.json") return null;
  if (!node) return undefined;
  if (base === ".zattrs") return node.attributes;
  if (base === ".zgroup") return node.kind === "group" ? node.meta : null;
  return node.kind === "array" ? node.meta : null;
}

/**
 * Wrap a store so metadata keys (`.zgroup`, `.zattrs`, `.zarray`, `zarr.json`) are answered from `index` with no
 * I/O; everything else (chunks, parquet files, `list`) goes to the wrapped store.
 */
export function withConsolidated(
  store: ReadableStore,
  index: ConsolidatedIndex,
  opts: WithConsolidatedOptions = {},
): ReadableStore {
  const authoritative = opts.authoritative ?? true;
  const cache = new Map<string, Uint8Array>();
  const wrapped: ReadableStore = {
    location: store.location,
    async get(key: AbsolutePath, getOpts?: GetOptions): Promise<Uint8Array | undefined> {
      const [dir, base] = splitKey(key);
      if (METADATA_BASENAMES.has(base)) {
        const hit = cache.get(key);
        if (hit) return hit;
        const doc = answer(index, dir, base);
        if (doc === null) return undefined;
        if (doc) {
          const bytes = encoder.encode(JSON.stringify(doc));
          cache.set(key, bytes);
          return bytes;
        }
        if (authoritative) return undefined;
      }
      return store.get(key, getOpts);
    },
  };
  if (store.getRange) {
    const getRange = store.getRange.bind(store);
    wrapped.getRange = (key: AbsolutePath, range: RangeQuery, o?: GetOptions) => getRange(key, range, o);
  }
  if (store.list) wrapped.list = store.list.bind(store);
  return wrapped;
}

/**
 * Build an index by listing a store and reading every metadata file (for stores without consolidated metadata).
 * The format is 3 when the root has a `zarr.json`, else 2 when it has `.zgroup`/`.zarray`, else whichever
 * metadata files are more common.
 */
export async function indexFromListing(
  store: ReadableStore & Required<Pick<ReadableStore, "list">>,
  opts?: GetOptions,
): Promise<ConsolidatedIndex> {
  const keys = (await store.list()).map((e) => e.key).filter((k) => METADATA_BASENAMES.has(splitKey(k)[1]));
  const docs = await mapLimit(keys, async (k) => {
    const bytes = await store.get(absoluteKey(k), opts);
    return [k, bytes ? parseJsonObject(store.location, k, bytes) : undefined] as const;
  });
  const v3 = docs.filter(([k]) => splitKey(k)[1] === "zarr.json");
  const v2 = docs.filter(([k]) => splitKey(k)[1] !== "zarr.json");
  const hasRoot = (name: string) => keys.includes(name);
  const useV3 =
    hasRoot("zarr.json") || (!hasRoot(".zgroup") && !hasRoot(".zarray") && v3.length >= v2.length);
  if (useV3) {
    const nodes = new Map<string, ConsolidatedNode>();
    for (const [k, doc] of v3) {
      if (!doc) continue;
      const path = normalizePath(splitKey(k)[0]);
      const n = v3Node(path, doc);
      if (n) nodes.set(path, n);
    }
    return { format: 3, source: "listing", nodes };
  }
  const flat: JsonObject = {};
  for (const [k, doc] of v2) if (doc) flat[k] = doc;
  const index = indexFromV2Metadata(flat, "listing");
  return index;
}

/** Direct children of `path` in an index (including implicit intermediate groups), sorted. */
export function indexChildren(index: ConsolidatedIndex, path: string): string[] {
  const p = normalizePath(path);
  const prefix = p === "" ? "" : `${p}/`;
  const out = new Set<string>();
  for (const key of index.nodes.keys()) {
    if (key === "" || !key.startsWith(prefix) || key === p) continue;
    const rest = key.slice(prefix.length);
    out.add(rest.split("/")[0]!);
  }
  return [...out].sort();
}

/**
 * Consolidate a v3 hierarchy like zarr-python 3: gather every `zarr.json` below the root into the root
 * `zarr.json` as `consolidated_metadata: {kind: "inline", must_understand: false, metadata: {path: meta}}`.
 * Implicit groups are first given their own `zarr.json` ({@link makeGroupsExplicit}): zarr v3 has none, and
 * zarr-python refuses consolidated metadata that lists a node whose parent it does not list. Paths are sorted and the JSON is indented by 2, so the same hierarchy always gives the same bytes. Child groups
 * carry an empty inline block, as zarr-python writes them. Returns the resulting index.
 */
export async function consolidateV3(store: ListableWritableStore): Promise<ConsolidatedIndex> {
  const rootBytes = await store.get("/zarr.json");
  if (!rootBytes) throw new Error(`${store.location}: no root zarr.json to consolidate into`);
  const root = parseJsonObject(store.location, "zarr.json", rootBytes);
  if (root.zarr_format !== 3 || root.node_type !== "group") {
    throw new Error(`${store.location}: root zarr.json is not a zarr v3 group`);
  }
  await makeGroupsExplicit(store);
  const keys = (await store.list())
    .map((e) => e.key)
    .filter((k) => k !== "zarr.json" && splitKey(k)[1] === "zarr.json");
  const docs = await mapLimit(keys, async (k) => {
    const bytes = await store.get(absoluteKey(k));
    if (!bytes) throw new Error(`${store.location}: ${k} disappeared while consolidating`);
    return [normalizePath(splitKey(k)[0]), parseJsonObject(store.location, k, bytes)] as const;
  });
  // Sort by node path (not by key: "a/b/zarr.json" vs "a/zarr.json" order differently from "a/b" vs "a").
  docs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const metadata: JsonObject = {};
  for (const [path, doc] of docs) {
    if (doc.node_type === "group") {
      const { consolidated_metadata: _ignored, ...rest } = doc;
      metadata[path] = {
        ...rest,
        consolidated_metadata: { kind: "inline", must_understand: false, metadata: {} },
      };
    } else {
      metadata[path] = doc;
    }
  }
  const { attributes, zarr_format, consolidated_metadata: _old, node_type, ...others } = root;
  const next: JsonObject = {
    attributes: attributes ?? {},
    zarr_format,
    consolidated_metadata: { kind: "inline", must_understand: false, metadata },
    node_type,
    ...others,
  };
  await store.set("/zarr.json", encoder.encode(JSON.stringify(next, null, 2)));
  return indexFromV3Root(next);
}

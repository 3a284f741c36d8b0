/**
 * The structural rules of a zarr v3 hierarchy, as strict readers (zarr-python 3, and so spatialdata and
 * anndata) apply them:
 *
 * 1. every node is a folder holding a `zarr.json`, and every folder between the root and a node is a group
 *    with its own `zarr.json` (zarr v3 has no implicit groups);
 * 2. nothing is nested inside an array but its chunks;
 * 3. the root's inline consolidated metadata, when present, is complete (it lists every node below the
 *    root, and nothing else), each entry equals the node's own `zarr.json`, and it is ordered as
 *    zarr-python rebuilds the tree from it: a node's parent is listed, and after a stable sort by depth
 *    the entries that share a parent are consecutive.
 *
 * {@link makeGroupsExplicit} repairs rule 1 on a store being written; {@link checkV3Hierarchy} reports every
 * broken rule, so a writer (the checkpoint) can refuse to publish a store that Python would not open.
 * @module
 */
import { absoluteKey, splitKey } from "../store/keys.js";
import type { ListableWritableStore, ReadableStore } from "../store/types.js";
import { type JsonObject, normalizePath, parseJsonObject } from "./json.js";

/** One broken structural rule. */
export interface HierarchyViolation {
  /** Node (or folder) path relative to the root; `""` is the root. */
  path: string;
  /** Which rule: see the module comment. */
  rule:
    | "root"
    | "implicit-group"
    | "inside-array"
    | "consolidated-missing"
    | "consolidated-extra"
    | "consolidated-stale"
    | "consolidated-order";
  /** What is wrong, in words. */
  message: string;
}

/** A store that can list its keys (what a structural check needs). */
type ListableStore = ReadableStore & Required<Pick<ReadableStore, "list">>;

const encoder = new TextEncoder();

/** `"a/b/c"` → `["a", "a/b"]`: the folders strictly between the root and `path`. */
function ancestors(path: string): string[] {
  const parts = path.split("/");
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join("/"));
  return out;
}

/** Parent path of a node (`"a/b"` → `"a"`, `"a"` → `""`). */
function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/** Every node of the store: path → its parsed `zarr.json`. */
async function readNodes(store: ListableStore): Promise<Map<string, JsonObject>> {
  const keys = (await store.list()).map((e) => e.key).filter((k) => splitKey(k)[1] === "zarr.json");
  const nodes = new Map<string, JsonObject>();
  for (const key of keys) {
    const bytes = await store.get(absoluteKey(key));
    if (!bytes) continue;
    nodes.set(normalizePath(splitKey(key)[0]), parseJsonObject(store.location, key, bytes));
  }
  return nodes;
}

/**
 * Give every implicit group of a v3 store its own `zarr.json` (`{"zarr_format": 3, "node_type": "group",
 * "attributes": {}}`): each folder between the root and a node that has none. Returns the paths created,
 * sorted. Throws when a node sits inside an array, which no metadata can repair.
 */
export async function makeGroupsExplicit(store: ListableWritableStore): Promise<string[]> {
  const nodes = await readNodes(store);
  const missing = new Set<string>();
  for (const path of nodes.keys()) {
    if (path === "") continue;
    for (const dir of ["", ...ancestors(path)]) {
      const node = nodes.get(dir);
      if (node?.node_type === "array") {
        throw new Error(`${store.location}: node ${path} is inside the array ${dir || "(root)"}`);
      }
      if (!node) missing.add(dir);
    }
  }
  const created = [...missing].sort();
  for (const dir of created) {
    const meta = { zarr_format: 3, node_type: "group", attributes: {} };
    await store.set(
      absoluteKey(dir ? `${dir}/zarr.json` : "zarr.json"),
      encoder.encode(JSON.stringify(meta, null, 2)),
    );
  }
  return created;
}

/** A node document without the inline consolidated block of a group, for comparing entries with nodes. */
function withoutConsolidated(doc: JsonObject): JsonObject {
  const { consolidated_metadata: _ignored, ...rest } = doc;
  return rest;
}

/** JSON text with object keys sorted at every level, so two documents compare by content. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as JsonObject).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The order zarr-python needs: it stably sorts entries by depth, then groups consecutive entries by parent and
 * moves each group under its parent, so a parent split in two runs loses the first run's children.
 */
function orderViolations(paths: readonly string[]): HierarchyViolation[] {
  const out: HierarchyViolation[] = [];
  const byDepth = [...paths].sort((a, b) => a.split("/").length - b.split("/").length);
  const closedParents = new Set<string>();
  let current: string | undefined;
  for (const path of byDepth) {
    const parent = parentOf(path);
    if (parent === current) continue;
    if (current !== undefined) closedParents.add(current);
    if (closedParents.has(parent) && parent !== "") {
      out.push({
        path,
        rule: "consolidated-order",
        message: `consolidated entry ${path} is not next to its siblings under ${parent} (zarr-python would drop some of them)`,
      });
    }
    current = parent;
  }
  return out;
}

/**
 * Check a zarr v3 store against the structural rules of the module comment. Returns every violation (empty
 * when the store is well formed); reads only metadata documents.
 */
export async function checkV3Hierarchy(store: ListableStore): Promise<HierarchyViolation[]> {
  const nodes = await readNodes(store);
  const out: HierarchyViolation[] = [];
  const root = nodes.get("");
  if (!root || root.zarr_format !== 3 || root.node_type !== "group") {
    out.push({ path: "", rule: "root", message: "the root has no zarr.json of a zarr v3 group" });
    return out;
  }
  const implicit = new Set<string>();
  for (const path of nodes.keys()) {
    for (const dir of ancestors(path)) {
      const node = nodes.get(dir);
      if (node?.node_type === "array") {
        out.push({ path, rule: "inside-array", message: `node ${path} is inside the array ${dir}` });
      } else if (!node && !implicit.has(dir)) {
        implicit.add(dir);
        out.push({
          path: dir,
          rule: "implicit-group",
          message: `folder ${dir} holds nodes but has no zarr.json`,
        });
      }
    }
  }
  const cm = root.consolidated_metadata as { metadata?: unknown } | null | undefined;
  if (!cm || typeof cm.metadata !== "object" || cm.metadata === null) return out;
  const listed = cm.metadata as JsonObject;
  const listedPaths = Object.keys(listed).map(normalizePath);
  const listedSet = new Set(listedPaths);
  for (const [path, doc] of nodes) {
    if (path === "") continue;
    const entry = listed[path];
    if (!listedSet.has(path)) {
      out.push({
        path,
        rule: "consolidated-missing",
        message: `node ${path} is not in the consolidated metadata`,
      });
    } else if (
      entry &&
      canonicalJson(withoutConsolidated(entry as JsonObject)) !== canonicalJson(withoutConsolidated(doc))
    ) {
      out.push({
        path,
        rule: "consolidated-stale",
        message: `consolidated entry ${path} differs from its zarr.json`,
      });
    }
  }
  for (const path of listedPaths) {
    if (!nodes.has(path)) {
      out.push({
        path,
        rule: "consolidated-extra",
        message: `consolidated entry ${path} names no node in the store`,
      });
    }
    const parent = parentOf(path);
    if (parent !== "" && !listedSet.has(parent)) {
      out.push({
        path,
        rule: "consolidated-order",
        message: `consolidated entry ${path} is listed without its parent ${parent}`,
      });
    }
  }
  out.push(...orderViolations(listedPaths));
  return out;
}

/** Throw one Error listing every violation (at most 20 named) when the store breaks a structural rule. */
export async function assertV3Hierarchy(store: ListableStore): Promise<void> {
  const violations = await checkV3Hierarchy(store);
  if (violations.length === 0) return;
  const shown = violations.slice(0, 20).map((v) => `  ${v.rule}: ${v.message}`);
  const more = violations.length > 20 ? [`  … and ${violations.length - 20} more`] : [];
  throw new Error(
    `${store.location}: not a well-formed zarr v3 hierarchy (zarr-python would refuse it):\n${[...shown, ...more].join("\n")}`,
  );
}

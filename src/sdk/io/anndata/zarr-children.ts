/**
 * Child names of zarr groups for the AnnData reader when a store has no consolidated metadata.
 *
 * AnnData's `dict` groups (`obsm`, `varm`, `obsp`, `varp`, `layers`, `uns`, `raw/varm`) have keys no attribute
 * names, so without consolidated metadata the reader must enumerate the store. Every store that can enumerate
 * is asked: Tessera stores through `list()` (a folder, or a zip's central directory — local or over HTTP
 * Range), zarrita's zip store through its parsed entries, zarrita's `FileSystemStore` through its folder.
 * Only a store that cannot enumerate at all (an HTTP folder) answers `null`.
 * @module
 */
import type { Readable } from "@zarrita/storage";

/** Child names of the group at a store path (no leading slash, `""` = root); `null` when the store cannot list. */
export type ChildLister = (path: string) => Promise<string[] | null>;

/** A Tessera store's `list()` (see `io/store/types.ts`): every key under a prefix, with its size. */
type ListFn = (prefix?: string) => Promise<readonly { key: string }[]>;

/**
 * Names one level below `path` among relative store `keys`: the first segment after `path/` of every key that
 * lies at least one folder deeper (so the group's own metadata files are not names). Sorted.
 */
export function childNames(keys: Iterable<string>, path: string): string[] {
  const prefix = path === "" ? "" : `${path}/`;
  const names = new Set<string>();
  for (const key of keys) {
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash > 0) names.add(rest.slice(0, slash));
  }
  return [...names].sort();
}

/**
 * A lister over a Tessera store's `list()`: the element at `base` is listed once (one walk of a folder, or a
 * scan of the zip's in-memory central directory) and every group's children come from that one listing.
 */
function listedChildren(list: ListFn, base: string): ChildLister {
  let keys: Promise<string[]> | undefined;
  return async (path) => {
    keys ??= list(base === "" ? "" : `${base}/`).then((entries) => entries.map((e) => e.key));
    return childNames(await keys, path);
  };
}

/** A lister over zarrita's `ZipFileStore`, whose `info` promise holds the parsed zip entries. */
function zipInfoChildren(info: Promise<unknown>): ChildLister {
  return async (path) => {
    const entries = ((await info) as { entries?: Record<string, unknown> }).entries;
    return entries ? childNames(Object.keys(entries), path) : null;
  };
}

/** A lister over a zarrita consolidated store, whose `contents()` names every node (`{path: "/a/b"}`). */
function contentsChildren(contents: () => { path: string }[]): ChildLister {
  return async (path) => {
    const prefix = path === "" ? "" : `/${path}`;
    const names = new Set<string>();
    for (const e of contents()) {
      if (e.path.startsWith(`${prefix}/`)) names.add(e.path.slice(prefix.length + 1).split("/")[0]!);
    }
    return [...names].filter(Boolean).sort();
  };
}

/** A lister over zarrita's `FileSystemStore` (a `root` folder): the sub-folders of the group's folder. */
function folderChildren(root: string): ChildLister {
  return async (path) => {
    // A computed specifier keeps bundlers from pulling node:fs into browser builds; this branch is Node-only.
    const spec = "node:fs/promises";
    const fs = (await import(/* @vite-ignore */ spec)) as typeof import("node:fs/promises");
    const dir = [root, path].filter(Boolean).join("/");
    try {
      const ents = await fs.readdir(dir, { withFileTypes: true });
      return ents
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return [];
      throw new Error(`${dir}: cannot list the folder: ${(err as Error).message}`, { cause: err });
    }
  };
}

/**
 * The best child lister a store offers for the AnnData element at `base` (store path, no leading slash), or
 * `null` when the store cannot enumerate its keys (plain HTTP folders).
 */
export function storeChildLister(store: Readable, base: string): ChildLister | null {
  const s = store as unknown as Record<string, unknown>;
  if (typeof s.list === "function") return listedChildren((s.list as ListFn).bind(store), base);
  if (s.info instanceof Promise) return zipInfoChildren(s.info);
  if (typeof s.contents === "function")
    return contentsChildren((s.contents as () => { path: string }[]).bind(store));
  if (typeof s.root === "string" && typeof s.getRange === "function") return folderChildren(s.root);
  return null;
}

/**
 * Dataset discovery and folder browsing under the data dir (`GET /api/fs/datasets`, `GET /api/fs/browse`).
 * Both only ever look inside the data dir: every folder walked and every symlink followed is checked
 * with the same containment rule as a load path, so nothing outside the data dir is listed or even
 * probed. Hidden entries (dot-names) and the working dir (when it lies inside the data dir: it holds
 * Tessera's own staging and caches, not user data) are skipped.
 */
import { type Dirent, existsSync } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { NotFoundError, PathError } from "../errors.js";
import { containPath } from "./paths.js";

/** What an entry is: a folder to open, a dataset Tessera can load, or any other file. */
export type EntryKind = "dir" | "dataset" | "file";

/** One entry of a folder listing. */
export interface BrowseEntry {
  /** File or folder name. */
  name: string;
  /** Absolute real path (usable as a load `path` or a reader path param). */
  path: string;
  kind: EntryKind;
}

/** A folder listing (`GET /api/fs/browse`). */
export interface BrowseResult {
  /** Absolute real path of the folder listed. */
  path: string;
  /** Its parent folder, or null at the data dir root (the browser cannot go above it). */
  parent: string | null;
  entries: BrowseEntry[];
}

/** A dataset found by discovery. */
export interface DatasetEntry {
  /** Path relative to the data dir, `/`-separated (what a picker shows). */
  name: string;
  /** Absolute real path (what `POST /api/sessions` takes as `source.path`). */
  path: string;
}

/** File names that are datasets on their own: zipped zarr stores (checkpoints), h5ad, OME-TIFF. */
const DATASET_FILE_RE = /\.(zarr\.zip|h5ad|ome\.tiff?)$/i;
/** Files whose presence marks a folder as the root of a zarr store (v3, v2 group, v2 attrs). */
const ZARR_MARKERS = ["zarr.json", ".zgroup", ".zattrs"];

/** Limits of discovery: how deep it walks, how many folders it opens, how many datasets it lists. */
export interface DiscoveryLimits {
  /** Folder depth below the data dir (default 6). */
  maxDepth?: number;
  /** Folders read at most (default 20 000). */
  maxFolders?: number;
  /** Datasets listed at most (default 5 000). */
  maxDatasets?: number;
}

/** Whether a folder is a dataset: a `.zarr` name, or a zarr store root (marker file inside). */
function isDatasetDir(path: string): boolean {
  if (/\.zarr$/i.test(path)) return true;
  return ZARR_MARKERS.some((m) => existsSync(join(path, m)));
}

/** Whether `child` is `root` or lies inside it. */
function inside(root: string, child: string): boolean {
  return child === root || child.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** An entry's kind, following a symlink; null when it is hidden, dangling or leads outside `root`. */
async function classify(
  root: string,
  dir: string,
  d: Dirent,
  skip: readonly string[],
): Promise<{ kind: EntryKind; real: string } | null> {
  if (d.name.startsWith(".")) return null;
  const full = join(dir, d.name);
  let real = full;
  let isDir = d.isDirectory();
  if (d.isSymbolicLink()) {
    try {
      real = await realpath(full);
      isDir = (await stat(real)).isDirectory();
    } catch {
      return null;
    }
    if (!inside(root, real)) return null;
  } else if (!d.isFile() && !isDir) return null;
  if (skip.some((s) => inside(s, real))) return null;
  if (isDir) return { kind: isDatasetDir(real) ? "dataset" : "dir", real };
  return { kind: DATASET_FILE_RE.test(d.name) ? "dataset" : "file", real };
}

/** Real path of the data dir, and of the folders to skip inside it (the working dir). */
async function roots(dataDir: string, workDir?: string): Promise<{ root: string; skip: string[] }> {
  const root = await realpath(resolve(dataDir));
  const skip: string[] = [];
  if (workDir) {
    try {
      const w = await realpath(resolve(workDir));
      if (w !== root && inside(root, w)) skip.push(w);
    } catch {
      // No working dir yet: nothing to skip.
    }
  }
  return { root, skip };
}

/** Entries of a folder, or [] when it cannot be read (permissions, removed meanwhile). */
async function entriesOf(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * Find the datasets under the data dir: `.zarr` folders and other zarr store roots (not descended
 * into), `.zarr.zip`, `.h5ad` and `.ome.tif(f)` files. Breadth-first to `maxDepth`, hidden entries
 * and the working dir skipped, symlinks followed only where they stay inside the data dir (each real
 * folder visited once). Sorted by name.
 */
export async function findDatasets(
  dataDir: string,
  opts: DiscoveryLimits & { workDir?: string } = {},
): Promise<DatasetEntry[]> {
  const maxDepth = opts.maxDepth ?? 6;
  const maxFolders = opts.maxFolders ?? 20_000;
  const maxDatasets = opts.maxDatasets ?? 5_000;
  const { root, skip } = await roots(dataDir, opts.workDir);
  const out: DatasetEntry[] = [];
  const seen = new Set<string>([root]);
  let level = [root];
  let folders = 0;
  for (let depth = 0; depth <= maxDepth && level.length; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      if (++folders > maxFolders || out.length >= maxDatasets) break;
      for (const d of await entriesOf(dir)) {
        const c = await classify(root, dir, d, skip);
        if (!c || c.kind === "file" || seen.has(c.real)) continue;
        seen.add(c.real);
        if (c.kind === "dir") next.push(c.real);
        else out.push({ name: relative(root, join(dir, d.name)).split(sep).join("/"), path: c.real });
      }
    }
    level = next;
  }
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out.slice(0, maxDatasets);
}

const KIND_ORDER: Record<EntryKind, number> = { dir: 0, dataset: 1, file: 2 };

/**
 * List one folder under the data dir. `path` (absolute, or relative to the data dir; default the data
 * dir) must resolve inside the data dir after `..` and symlinks (else a `PathError`, 400); a folder
 * that does not exist is a `NotFoundError` (404), a file a `PathError`. Folders and datasets are
 * listed always, other files only with `includeFiles`; hidden entries, the working dir and symlinks
 * leading outside are left out. Sorted folders first, then datasets, then files, by name
 * (case-insensitive).
 */
export async function browseFolder(
  dataDir: string,
  path: string | undefined,
  opts: { includeFiles?: boolean; workDir?: string } = {},
): Promise<BrowseResult> {
  const { root, skip } = await roots(dataDir, opts.workDir);
  const real = path === undefined || path === "" ? root : await containPath(root, path, "path");
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(real);
  } catch {
    throw new NotFoundError(`path ${JSON.stringify(path)}: no such folder`);
  }
  if (!st.isDirectory()) throw new PathError("path", `path ${JSON.stringify(path)} is not a folder`);
  if (skip.some((s) => inside(s, real)))
    throw new PathError("path", `path ${JSON.stringify(path)} is inside Tessera's working dir`);
  const entries: BrowseEntry[] = [];
  for (const d of await entriesOf(real)) {
    const c = await classify(root, real, d, skip);
    if (!c || (c.kind === "file" && !opts.includeFiles)) continue;
    entries.push({ name: d.name, path: c.real, kind: c.kind });
  }
  entries.sort(
    (a, b) =>
      KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
      a.name.toLowerCase().localeCompare(b.name.toLowerCase(), "en") ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  return { path: real, parent: real === root ? null : dirname(real), entries };
}

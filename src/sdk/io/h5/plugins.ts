/**
 * Registering the HDF5 filter plugins of the npm package `h5wasm-plugins` (LZF, blosc, bzip2, zstd, …) with
 * h5wasm, so h5ad files written with `compression="lzf"` or through hdf5plugin open.
 *
 * The package ships the plugins as WebAssembly side modules (`plugins/libH5Z<name>.so`). Its own
 * `install_plugins` copies them into a folder with `fetch`, which cannot read `file:` URLs on Node, and under
 * the Node build's NODERAWFS that folder would be on the real disk. None of that is needed: NODERAWFS reads
 * the host filesystem, so HDF5 loads the files where npm put them once that folder heads its plugin search
 * path (what the package's `install_local_plugins` does, minus its URL-to-path shortcut that breaks on
 * escaped characters). Nothing is written, downloaded or raced over between processes.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { BUILTIN_FILTERS, BUILTIN_ONLY, type FilterSupport } from "./filters.js";
import type { H5Wasm } from "./h5wasm.js";
import { installLzfDecoder, isLzfPlugin } from "./lzf-plugin.js";

/**
 * HDF5 filter id of each plugin that h5wasm-plugins 0.2 ships, by the `<name>` of its `libH5Z<name>.so`
 * (ids from the HDF Group's registry of filter plugins).
 */
export const PLUGIN_FILTERS: Readonly<Record<string, number>> = {
  bz2: 307,
  lzf: 32000,
  blosc: 32001,
  lz4: 32004,
  bshuf: 32008,
  zfp: 32013,
  zstd: 32015,
  jpeg: 32019,
  bitgroom: 32022,
  bitround: 32023,
  blosc2: 32026,
};

/** The installed `h5wasm-plugins/plugins` folder, or null when the package is not installed. */
export function pluginFolder(): string | null {
  try {
    const pkg = createRequire(import.meta.url).resolve("h5wasm-plugins/package.json");
    const dir = join(dirname(pkg), "plugins");
    return existsSync(dir) ? dir : null;
  } catch {
    return null;
  }
}

/**
 * The filters whose plugin file is in `dir`, plus the built-in ones. LZF counts only when its plugin is
 * the build whose decoder `installLzfDecoder` replaces: the plugin's own decoder fails on string arrays.
 */
export function filtersIn(dir: string): Map<number, string> {
  const ids = new Map(BUILTIN_FILTERS);
  for (const file of readdirSync(dir)) {
    const name = /^libH5Z(.+)\.so$/.exec(file)?.[1];
    const id = name === undefined ? undefined : PLUGIN_FILTERS[name];
    if (name === undefined || id === undefined) continue;
    if (name === "lzf" && !isLzfPlugin(new WebAssembly.Module(readFileSync(join(dir, file))))) continue;
    ids.set(id, name);
  }
  return ids;
}

/**
 * Put `dir` (default: the installed h5wasm-plugins folder) first in the HDF5 plugin search path of `module`
 * and return what the module can then decode; without a folder, only the built-in filters. Installs the
 * LZF decoder hook first, since libhdf5 loads a plugin when it first needs it. Idempotent.
 */
export function registerFilterPlugins(
  module: H5Wasm["Module"],
  dir: string | null = pluginFolder(),
): FilterSupport {
  if (dir === null) return BUILTIN_ONLY;
  installLzfDecoder();
  // One h5wasm module serves the whole process, and test runners load this file again for each test file.
  if (!module.get_plugin_search_paths().includes(dir) && module.insert_plugin_search_path(dir, 0) < 0) {
    throw new Error(`${dir}: h5wasm refused this folder as an HDF5 plugin search path`);
  }
  return { ids: filtersIn(dir), pluginDir: dir };
}

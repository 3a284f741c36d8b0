/**
 * Which HDF5 filters (the compression and checksum stages of a dataset's pipeline) Tessera can decode,
 * and the error for a dataset it cannot.
 *
 * The check has to happen before a read: when libhdf5 inside h5wasm meets a filter it has no code for, it
 * prints a diagnostic to stderr and h5wasm hands back an uninitialised buffer as if it were the data, and
 * for variable-length strings it then aborts the wasm module (VERIFIED with h5wasm 0.10.3). A plugin
 * that calls a C library function h5wasm does not export (blosc's zlib codec needs `uncompress`) aborts
 * the module too. So a read cannot be trusted to fail by itself.
 */
import type { Filter } from "h5wasm";

/** Filters compiled into h5wasm's libhdf5 (`H5Z_FILTER_*` 1–6), by id. */
export const BUILTIN_FILTERS: ReadonlyMap<number, string> = new Map([
  [1, "deflate"],
  [2, "shuffle"],
  [3, "fletcher32"],
  [4, "szip"],
  [5, "nbit"],
  [6, "scaleoffset"],
]);

/**
 * Names of registered filter ids (the HDF Group's list), for error messages: the name a file stores is
 * free text ("HDF5 lzf filter; see https://…") or empty.
 */
const FILTER_NAMES: ReadonlyMap<number, string> = new Map([
  ...BUILTIN_FILTERS,
  [307, "bzip2"],
  [32000, "lzf"],
  [32001, "blosc"],
  [32003, "snappy"],
  [32004, "lz4"],
  [32008, "bitshuffle"],
  [32013, "zfp"],
  [32014, "fpzip"],
  [32015, "zstd"],
  [32017, "sz"],
  [32018, "fcidecomp"],
  [32019, "jpeg"],
  [32020, "vbz"],
  [32022, "bitgroom"],
  [32023, "bitround"],
  [32024, "sz3"],
  [32026, "blosc2"],
  [32028, "sperr"],
]);

/** The filters one h5wasm module can run: their ids, and where the plugin filters came from. */
export interface FilterSupport {
  /** Filter ids, built-in and plugin, mapped to a short name. */
  readonly ids: ReadonlyMap<number, string>;
  /** The folder HDF5 loads plugin filters from, or null when no plugin folder was found. */
  readonly pluginDir: string | null;
}

/** Support with the built-in filters only (h5wasm before plugins are registered, or without them). */
export const BUILTIN_ONLY: FilterSupport = { ids: BUILTIN_FILTERS, pluginDir: null };

/**
 * Blosc codecs (the 7th filter parameter, as hdf5plugin and PyTables write it) that the blosc and blosc2
 * plugins of h5wasm-plugins 0.2 cannot run: snappy is not compiled in, and zlib calls `compress2` and
 * `uncompress`, which h5wasm does not export, so the module aborts.
 */
const BLOSC_MISSING_CODECS: ReadonlyMap<number, ReadonlyMap<number, string>> = new Map([
  [
    32001,
    new Map([
      [3, "snappy"],
      [4, "zlib"],
    ]),
  ],
  [32026, new Map([[4, "zlib"]])],
]);

/** A stage of a dataset's filter pipeline that cannot be decoded, and why. */
export interface UnreadableFilter {
  readonly filter: Filter;
  /** Completes "it is compressed with HDF5 filter N (name) …". */
  readonly why: string;
}

/** The first stage of a dataset's pipeline that `support` cannot decode, or null when all can. */
export function unreadableFilter(
  pipeline: readonly Filter[],
  support: FilterSupport,
): UnreadableFilter | null {
  for (const filter of pipeline) {
    if (!support.ids.has(filter.id)) return { filter, why: "which Tessera cannot decode" };
    const codec = BLOSC_MISSING_CODECS.get(filter.id)?.get(filter.cd_values[6] ?? -1);
    if (codec) return { filter, why: `using the ${codec} codec, which Tessera's blosc plugin cannot decode` };
  }
  return null;
}

/**
 * The Error for a dataset with an undecodable filter stage. `where` names the file and the dataset
 * (`FILE: /path`), like the other HDF5 errors.
 */
export function filterError(where: string, { filter, why }: UnreadableFilter, support: FilterSupport): Error {
  const known = FILTER_NAMES.get(filter.id) ?? filter.name.trim().split(/[\s;,]/)[0];
  const name = known ? ` (${known})` : "";
  const have = [...new Set(support.ids.values())].join(", ");
  const plugins = support.pluginDir ? "" : "; the h5wasm-plugins package was not found";
  return new Error(
    `${where}: cannot read dataset: it is compressed with HDF5 filter ${filter.id}${name}, ${why} ` +
      `(it reads ${have}${plugins}). Re-save the file with gzip or no compression, e.g. ` +
      `adata.write_h5ad(path, compression="gzip") in Python.`,
  );
}

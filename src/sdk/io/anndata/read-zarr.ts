/**
 * `readAnnDataZarr`: read an AnnData element (anndata 0.7 … 0.12, zarr v2 or v3, plain, sharded or
 * zipped) from any zarrita-compatible store.
 */
import type { Readable } from "@zarrita/storage";
import { type DecodeResult, decodeAnnData } from "./decode.js";
import { openZarrTree, type ZarrTreeOptions } from "./zarr-node.js";

/** Options of `readAnnDataZarr`. */
export type ReadAnnDataZarrOptions = ZarrTreeOptions;

/**
 * Read the AnnData group at `path` of a zarr store. obs, var, obsm, varm and uns are read now; X,
 * layers, obsp, varp and raw.X are lazy (`load()` reads them). Unsupported nodes are skipped and named
 * in `warnings`. Throws an Error naming the store and node when the input is missing or corrupt.
 */
export async function readAnnDataZarr(
  store: Readable,
  path = "/",
  opts: ReadAnnDataZarrOptions = {},
): Promise<DecodeResult> {
  const root = await openZarrTree(store, path, opts);
  return decodeAnnData(root);
}

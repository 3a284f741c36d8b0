/** `readH5ad`: read an `.h5ad` file (anndata ≥ 0.7 layouts) through h5wasm. */
import { openH5Tree } from "../h5/node.js";
import { type DecodeResult, decodeAnnData } from "./decode.js";

/** Options of `readH5ad`. */
export interface ReadH5adOptions {
  /** HDF5 group holding the AnnData element (default the file root). */
  path?: string;
  /**
   * Where external links and virtual datasets may lead (default: the data dir holding the file, else
   * its folder; see `io/confine.ts`).
   */
  confine?: string;
}

/**
 * Read an h5ad file. obs, var, obsm, varm and uns are read now; X, layers, obsp, varp and raw.X are
 * lazy and reopen the file on `load()` (reading big datasets in slices). Unsupported nodes are skipped and
 * named in `warnings`. Throws an Error naming the file and node when the file is missing or corrupt.
 */
export async function readH5ad(filePath: string, opts: ReadH5adOptions = {}): Promise<DecodeResult> {
  const { root, release } = await openH5Tree(
    filePath,
    opts.path ?? "/",
    opts.confine ? { confine: opts.confine } : {},
  );
  try {
    return await decodeAnnData(root);
  } finally {
    release();
  }
}

/**
 * The service's own reader (namespace `read`): open any input the SDK reads. `read_data` is the name
 * the docs, recipes and the SDK's built-in fallback use; `open_data` is kept as an alias of it (the
 * name this plugin first shipped), so both keys run the one reader (`readAnyInput`).
 */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { readAnyInput } from "../../sdk/session/builtin-readers.js";

/** Params of `read_data` (and its alias `open_data`). */
export interface ReadDataParams {
  /**
   * The input: a SpatialData or AnnData zarr store (folder or `.zarr.zip`), an `.h5ad`, an OME-Zarr,
   * an OME-TIFF, or a Tessera checkpoint.
   * @maxLength 4096
   */
  path: string;
}

/**
 * Open any readable input as a SpatialData object (SpatialData/AnnData zarr, .h5ad, OME-Zarr,
 * OME-TIFF, checkpoint), detecting its format.
 */
export async function read_data(
  _sd: SpatialData,
  params: ReadDataParams,
  ctx: OpContext,
): Promise<SpatialData> {
  return readAnyInput(params.path, ctx);
}

/**
 * Open any readable input as a SpatialData object: an alias of `read.read_data`, kept for recipes
 * and clients that name it so.
 */
export async function open_data(
  _sd: SpatialData,
  params: ReadDataParams,
  ctx: OpContext,
): Promise<SpatialData> {
  return readAnyInput(params.path, ctx);
}

/** The service's own reader (namespace `read`): open any input the SDK reads. */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { openData } from "../../sdk/io/open.js";
import type { OpContext } from "../../sdk/jobs/operation.js";

/** Params of `open_data`. */
export interface OpenDataParams {
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
export async function open_data(
  _sd: SpatialData,
  params: OpenDataParams,
  ctx: OpContext,
): Promise<SpatialData> {
  ctx.progress(0, `opening ${params.path}`);
  const { sdata, warnings, format } = await openData(params.path);
  ctx.log(`read ${params.path} as ${format}`);
  for (const w of warnings) ctx.log(`warning: ${w}`);
  ctx.progress(1);
  return sdata;
}

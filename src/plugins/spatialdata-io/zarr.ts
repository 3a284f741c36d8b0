/** `io.read_zarr`: a SpatialData store or archive (spatialdata's `read_zarr`). */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { DataError } from "../../sdk/io/data-error.js";
import { openData } from "../../sdk/io/open.js";
import type { OpContext } from "../../sdk/jobs/operation.js";

/** Params of `read_zarr`. */
export interface ReadZarrParams {
  /**
   * The SpatialData store: a `.zarr` folder or a `.zarr.zip` / `.sdata.zarr.zip` archive.
   * @pathKind either
   * @maxLength 4096
   */
  store: string;
}

/** Read a SpatialData zarr store (v2 or v3, folder or zip) or a Tessera checkpoint. */
export async function read_zarr(
  _sd: SpatialData,
  params: ReadZarrParams,
  ctx: OpContext,
): Promise<SpatialData> {
  ctx.progress(0, `opening ${params.store}`);
  const { sdata, warnings, format } = await openData(params.store);
  if (format !== "spatialdata-zarr" && format !== "checkpoint")
    throw new DataError(
      `${params.store}: not a SpatialData store (read as ${format}); use the reader for that format`,
    );
  for (const w of warnings) ctx.log(`warning: ${w}`);
  ctx.log(`read ${params.store} as ${format}`);
  ctx.progress(1, "read");
  return sdata;
}

/** `io.visium`: a Space Ranger `outs` folder (spatialdata-io's `visium`). */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { readVisium } from "../../sdk/io/vendors/visium/read.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { finish, reportTo } from "./report.js";

/** Params of `visium`. */
export interface VisiumParams {
  /**
   * The Space Ranger output folder (`outs`, holding `spatial/` and the count matrix).
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
  /**
   * Names the spots element and the coordinate systems (`<id>`, `<id>_downscaled_hires`,
   * `<id>_downscaled_lowres`); default the folder's name (its parent's for `outs`).
   * @maxLength 256
   */
  dataset_id?: string | null;
  /**
   * Count matrix inside the folder: an h5 file or a MEX folder (default `filtered_feature_bc_matrix.h5`,
   * else `filtered_feature_bc_matrix/`, else the raw matrix).
   * @pathKind either
   * @maxLength 4096
   */
  counts_file?: string | null;
  /**
   * Spot positions file inside the folder (default `spatial/tissue_positions.parquet`, `.csv`, or `_list.csv`).
   * @maxLength 4096
   */
  tissue_positions_file?: string | null;
  /**
   * Scale factors file inside the folder (default `spatial/scalefactors_json.json`).
   * @maxLength 4096
   */
  scalefactors_file?: string | null;
  /**
   * Open the hires and lowres tissue images.
   * @default true
   */
  load_images?: boolean;
}

/**
 * Read a Visium Space Ranger folder: spots × genes table, spots as circles in full-resolution pixels,
 * the hires/lowres images, and the coordinate systems that put spots on them.
 */
export async function visium(_sd: SpatialData, params: VisiumParams, ctx: OpContext): Promise<SpatialData> {
  const { path, ...opts } = params;
  return finish(await readVisium(path, opts, reportTo(ctx)), ctx);
}

/** `io.visium_hd`: a Visium HD Space Ranger `outs` folder with `binned_outputs/` (spatialdata-io's `visium_hd`). */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { readVisiumHd } from "../../sdk/io/vendors/visium-hd/read.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { finish, reportTo } from "./report.js";

/** Params of `visium_hd`. */
export interface VisiumHdParams {
  /**
   * The Space Ranger HD output folder (`outs`, holding `binned_outputs/square_NNNum/`).
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
  /**
   * Names the bins' elements and the coordinate systems; default the folder's name (its parent's for `outs`).
   * @maxLength 256
   */
  dataset_id?: string | null;
  /**
   * Bin sizes in µm to read (2, 8, 16 …); default every bin folder.
   * @maxItems 16
   */
  bin_size?: number[] | null;
  /**
   * Open the hires and lowres tissue images.
   * @default true
   */
  load_images?: boolean;
}

/** Read a Visium HD folder: a table and a shapes element of square bins per bin size, and the images. */
export async function visium_hd(
  _sd: SpatialData,
  params: VisiumHdParams,
  ctx: OpContext,
): Promise<SpatialData> {
  const { path, ...opts } = params;
  return finish(await readVisiumHd(path, opts, reportTo(ctx)), ctx);
}

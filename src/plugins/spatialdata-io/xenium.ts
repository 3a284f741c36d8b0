/** `io.xenium`: a Xenium output folder (spatialdata-io's `xenium`). */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { readXenium } from "../../sdk/io/vendors/xenium/read.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { finish, reportTo } from "./report.js";

/** Params of `xenium`. */
export interface XeniumParams {
  /**
   * The Xenium output folder (cells, cell_feature_matrix, boundaries, transcripts, morphology images).
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
  /**
   * Read the cell boundaries as polygons (`cell_boundaries`).
   * @default true
   */
  cells_boundaries?: boolean;
  /**
   * Read the nucleus boundaries as polygons (`nucleus_boundaries`).
   * @default true
   */
  nucleus_boundaries?: boolean;
  /**
   * Add the cells as circles of their area (`cell_circles`, the table's region).
   * @default true
   */
  cells_as_circles?: boolean;
  /**
   * Read the transcripts as points (columnar).
   * @default true
   */
  transcripts?: boolean;
  /**
   * Open `morphology_mip.ome.tif`.
   * @default true
   */
  morphology_mip?: boolean;
  /**
   * Open `morphology_focus.ome.tif`.
   * @default true
   */
  morphology_focus?: boolean;
}

/**
 * Read a Xenium output folder in microns (`global`): cells × genes, circles, cell and nucleus
 * boundaries, transcripts, and the morphology images placed with the pixel size.
 */
export async function xenium(_sd: SpatialData, params: XeniumParams, ctx: OpContext): Promise<SpatialData> {
  const { path, ...opts } = params;
  return finish(await readXenium(path, opts, reportTo(ctx)), ctx);
}

/** `io.cosmx`: a CosMx (NanoString) flat-file export folder (spatialdata-io's `cosmx`). */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { readCosmx } from "../../sdk/io/vendors/cosmx/read.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { finish, reportTo } from "./report.js";

/** Params of `cosmx`. */
export interface CosmxParams {
  /**
   * The export folder (`*_exprMat_file.csv`, `*_metadata_file.csv`, `*_tx_file.csv`, `*-polygons.csv`).
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
  /**
   * Names the run.
   * @maxLength 256
   */
  dataset_id?: string | null;
  /**
   * Expression matrix inside the folder (default the one `*_exprMat_file.csv`).
   * @maxLength 4096
   */
  counts_file?: string | null;
  /**
   * Cell metadata inside the folder (default the one `*_metadata_file.csv`).
   * @maxLength 4096
   */
  meta_file?: string | null;
  /**
   * Read the transcripts as points.
   * @default true
   */
  transcripts?: boolean;
  /**
   * Read the cell polygons.
   * @default true
   */
  polygons?: boolean;
  /**
   * Read the per-FOV cell label masks (`CellLabels/CellLabels_F*.tif`) as labels `<fov>_labels`, placed
   * in the global pixels by the affine fitted from the cells' local and global centres.
   * @default true
   */
  labels?: boolean;
}

/**
 * Read a CosMx export in stitched global pixels (`global`): cells × targets, cell polygons,
 * transcripts and per-FOV label masks, with global and FOV-local centres.
 */
export async function cosmx(_sd: SpatialData, params: CosmxParams, ctx: OpContext): Promise<SpatialData> {
  const { path, ...opts } = params;
  return finish(await readCosmx(path, opts, reportTo(ctx)), ctx);
}

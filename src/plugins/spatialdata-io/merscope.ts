/** `io.merscope`: a MERSCOPE (Vizgen) output folder (spatialdata-io's `merscope`). */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { readMerscope } from "../../sdk/io/vendors/merscope/read.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { finish, reportTo } from "./report.js";

/** Params of `merscope`. */
export interface MerscopeParams {
  /**
   * The MERSCOPE region folder (cell_by_gene.csv, cell_metadata.csv, detected_transcripts.csv,
   * cell_boundaries, images/).
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
  /**
   * Names the mosaic images (`<id>_z<z>`); default the folder's name.
   * @maxLength 256
   */
  dataset_id?: string | null;
  /**
   * Cell-by-gene file inside the folder (default `cell_by_gene.csv`).
   * @maxLength 4096
   */
  counts_file?: string | null;
  /**
   * Cell metadata file inside the folder (default `cell_metadata.csv`).
   * @maxLength 4096
   */
  meta_file?: string | null;
  /**
   * micron → mosaic-pixel transform inside the folder (default
   * `images/micron_to_mosaic_pixel_transform.csv`, else derived from `images/manifest.json`).
   * @maxLength 4096
   */
  transformation_file?: string | null;
  /**
   * z plane of the cell boundaries (default the lowest present).
   * @asType integer
   * @minimum 0
   * @maximum 1000
   */
  z_index?: number | null;
  /**
   * Read the detected transcripts as points.
   * @default true
   */
  transcripts?: boolean;
  /**
   * Open the mosaic images (one image per z plane, a channel per stain).
   * @default true
   */
  mosaic_images?: boolean;
  /**
   * Read the cell boundaries as polygons.
   * @default true
   */
  cells_boundaries?: boolean;
  /**
   * A folder inside the output folder with a vpt (vizgen-postprocessing-tool) re-segmentation:
   * `*cell_by_gene.csv`, `*cell_metadata.csv`, `*micron_space.parquet` (vpt names them after the
   * segmentation, e.g. `cellpose_…`), read instead of the instrument's cells and boundaries.
   * @pathKind folder
   * @boundTo path
   * @maxLength 4096
   */
  vpt_outputs?: string | null;
}

/**
 * Read a MERSCOPE output folder in microns (`global`): cells × genes, cell boundaries, transcripts and
 * the mosaics placed by the micron → mosaic-pixel transform.
 */
export async function merscope(
  _sd: SpatialData,
  params: MerscopeParams,
  ctx: OpContext,
): Promise<SpatialData> {
  const { path, ...opts } = params;
  return finish(await readMerscope(path, opts, reportTo(ctx)), ctx);
}

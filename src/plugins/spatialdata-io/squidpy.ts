/** squidpy's reader names (namespace `read`): `visium`, `vizgen`, `nanostring`, over the same SDK readers. */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { readCosmx } from "../../sdk/io/vendors/cosmx/read.js";
import { readMerscope } from "../../sdk/io/vendors/merscope/read.js";
import { readVisium } from "../../sdk/io/vendors/visium/read.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { finish, reportTo } from "./report.js";

/** Params of squidpy's `read.visium`. */
export interface SquidpyVisiumParams {
  /**
   * The Space Ranger output folder.
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
  /**
   * Count matrix inside the folder (default `filtered_feature_bc_matrix.h5`).
   * @pathKind either
   * @maxLength 4096
   */
  counts_file?: string | null;
  /**
   * Library id naming the spots and coordinate systems (default the folder's name).
   * @maxLength 256
   */
  library_id?: string | null;
  /**
   * Open the hires and lowres tissue images.
   * @default true
   */
  load_images?: boolean;
}

/** Read a Visium Space Ranger folder (squidpy's `read.visium`; the same reader as `io.visium`). */
export async function visium(
  _sd: SpatialData,
  params: SquidpyVisiumParams,
  ctx: OpContext,
): Promise<SpatialData> {
  return finish(
    await readVisium(
      params.path,
      {
        dataset_id: params.library_id ?? null,
        counts_file: params.counts_file ?? null,
        ...(params.load_images !== undefined ? { load_images: params.load_images } : {}),
      },
      reportTo(ctx),
    ),
    ctx,
  );
}

/** Params of squidpy's `read.vizgen`. */
export interface SquidpyVizgenParams {
  /**
   * The MERSCOPE region folder.
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
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
   * micron → mosaic-pixel transform inside the folder (default from `images/`).
   * @maxLength 4096
   */
  transformation_file?: string | null;
  /**
   * Library id naming the mosaic images (default the folder's name).
   * @maxLength 256
   */
  library_id?: string | null;
}

/** Read a MERSCOPE (Vizgen) folder (squidpy's `read.vizgen`; the same reader as `io.merscope`). */
export async function vizgen(
  _sd: SpatialData,
  params: SquidpyVizgenParams,
  ctx: OpContext,
): Promise<SpatialData> {
  return finish(
    await readMerscope(
      params.path,
      {
        dataset_id: params.library_id ?? null,
        counts_file: params.counts_file ?? null,
        meta_file: params.meta_file ?? null,
        transformation_file: params.transformation_file ?? null,
      },
      reportTo(ctx),
    ),
    ctx,
  );
}

/** Params of squidpy's `read.nanostring`. */
export interface SquidpyNanostringParams {
  /**
   * The CosMx export folder.
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
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
}

/** Read a CosMx (NanoString) export (squidpy's `read.nanostring`; the same reader as `io.cosmx`). */
export async function nanostring(
  _sd: SpatialData,
  params: SquidpyNanostringParams,
  ctx: OpContext,
): Promise<SpatialData> {
  return finish(
    await readCosmx(
      params.path,
      { counts_file: params.counts_file ?? null, meta_file: params.meta_file ?? null },
      reportTo(ctx),
    ),
    ctx,
  );
}

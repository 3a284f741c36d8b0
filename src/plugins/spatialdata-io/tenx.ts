/** 10x count matrices on their own: `io.read_10x_h5` and `io.read_10x_mtx` (scanpy's names). */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { readTenxH5File, readTenxMatrixFolder } from "../../sdk/io/vendors/tenx/folder.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { finish, reportTo } from "./report.js";

/** Params of `read_10x_h5`. */
export interface Read10xH5Params {
  /**
   * The 10x h5 file (Cell Ranger 1–2 per-genome, ≥ 3, probe-based, Xenium's cell_feature_matrix.h5).
   * @pathKind file
   * @maxLength 4096
   */
  path: string;
  /**
   * Genome to read from a Cell Ranger 1–2 file holding several.
   * @maxLength 256
   */
  genome?: string | null;
  /**
   * Keep only `Gene Expression` features.
   * @default true
   */
  gex_only?: boolean;
}

/** Read a 10x h5 count matrix as a table (barcodes × features). */
export async function read_10x_h5(
  _sd: SpatialData,
  params: Read10xH5Params,
  ctx: OpContext,
): Promise<SpatialData> {
  return finish(
    await readTenxH5File(
      params.path,
      { genome: params.genome ?? null, gexOnly: params.gex_only ?? true },
      reportTo(ctx),
    ),
    ctx,
  );
}

/** Params of `read_10x_mtx`. */
export interface Read10xMtxParams {
  /**
   * The folder holding `matrix.mtx`, `barcodes.tsv` and `features.tsv` (or `genes.tsv`), gzipped or not.
   * @pathKind folder
   * @maxLength 4096
   */
  path: string;
}

/** Read a 10x MEX folder as a table (barcodes × features). */
export async function read_10x_mtx(
  _sd: SpatialData,
  params: Read10xMtxParams,
  ctx: OpContext,
): Promise<SpatialData> {
  return finish(await readTenxMatrixFolder(params.path, reportTo(ctx)), ctx);
}

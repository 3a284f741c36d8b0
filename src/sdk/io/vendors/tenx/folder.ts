/** A 10x count matrix on its own (an h5 file or a MEX folder) as a SpatialData object with one table. */
import { makeSpatialData } from "../../../data/spatialdata.js";
import type { ReaderReport, VendorResult } from "../common.js";
import { type ReadTenxH5Options, readTenxH5 } from "./h5-matrix.js";
import { readMex } from "./mex.js";

/** Read a MEX folder as a table-only object. */
export async function readTenxMatrixFolder(dir: string, report: ReaderReport = {}): Promise<VendorResult> {
  report.progress?.(0, `reading ${dir}`);
  const { table, warnings } = await readMex(dir);
  report.progress?.(1, "read");
  return {
    reader: "io.read_10x_mtx",
    warnings,
    sdata: makeSpatialData({ tables: { table }, source: { path: dir, format: "10x-mtx" } }),
  };
}

/** Read a 10x h5 file as a table-only object. */
export async function readTenxH5File(
  file: string,
  opts: ReadTenxH5Options = {},
  report: ReaderReport = {},
): Promise<VendorResult> {
  report.progress?.(0, `reading ${file}`);
  const { table, warnings, layout } = await readTenxH5(file, opts);
  report.log?.(`${file}: 10x h5 (${layout === "v3" ? "Cell Ranger ≥ 3" : "Cell Ranger 1–2, per genome"})`);
  report.progress?.(1, "read");
  return {
    reader: "io.read_10x_h5",
    warnings,
    sdata: makeSpatialData({ tables: { table }, source: { path: file, format: "10x-h5" } }),
  };
}

/**
 * The built-in reader `read.read_data({path})`: opens any input Tessera reads (`openData`: SpatialData,
 * AnnData zarr/h5ad, MuData, OME-Zarr, OME-TIFF, a checkpoint). It serves sessions whose source is a
 * `read` descriptor while no reader plugin provides the `read` namespace; a registered
 * `read.read_data` takes precedence.
 */

import type { SpatialData } from "../data/spatialdata.js";
import { openData } from "../io/open.js";
import type { OpContext } from "../jobs/operation.js";
import { TESSERA_VERSION } from "../version.js";
import type { EngineFunction } from "./types.js";

/** Params of `read_data`. */
export interface ReadDataParams {
  /** The dataset to open (a path under the data dir). */
  path: string;
}

/** Open any readable input as a SpatialData object. */
export async function read_data(
  _sd: SpatialData,
  params: ReadDataParams,
  ctx: OpContext,
): Promise<SpatialData> {
  ctx.progress(0, `opening ${params.path}`);
  const { sdata, warnings, format } = await openData(params.path);
  ctx.log(`read ${params.path} as ${format}`);
  for (const w of warnings) ctx.log(`warning: ${w}`);
  ctx.progress(1, "read");
  return sdata;
}

/** The registry entry of the built-in reader. */
export const READ_DATA_ENTRY: EngineFunction = {
  key: "read.read_data",
  namespace: "read",
  function: "read_data",
  effect_class: "read",
  summary: "Open any input Tessera reads (SpatialData, AnnData, MuData, OME-Zarr, OME-TIFF, a checkpoint).",
  json_schema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      path: { type: "string", minLength: 1, description: "The dataset to open (a path under the data dir)." },
    },
    required: ["path"],
    additionalProperties: false,
  },
  ui_schema: {
    path: {
      widget: "text",
      bound_to: null,
      tooltip: "The dataset to open (a path under the data dir).",
      path_kind: "either",
    },
  },
  library: "tessera",
  module: import.meta.url,
  export: "read_data",
};

/** Library name and version of the built-in readers, for `library_versions`. */
export const BUILTIN_LIBRARY = { name: "tessera", version: TESSERA_VERSION } as const;

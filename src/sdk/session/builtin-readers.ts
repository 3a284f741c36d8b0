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

/**
 * Open any readable input as a SpatialData object, logging the format found and any warnings: the one
 * reader behind the built-in `read.read_data` and the tessera plugin's `read.read_data`/`read.open_data`.
 */
export async function readAnyInput(
  path: string,
  ctx: Pick<OpContext, "progress" | "log">,
): Promise<SpatialData> {
  ctx.progress(0, `opening ${path}`);
  const { sdata, warnings, format } = await openData(path);
  ctx.log(`read ${path} as ${format}`);
  for (const w of warnings) ctx.log(`warning: ${w}`);
  ctx.progress(1, "read");
  return sdata;
}

/** Open any readable input as a SpatialData object (the built-in `read.read_data`). */
export async function read_data(
  _sd: SpatialData,
  params: ReadDataParams,
  ctx: OpContext,
): Promise<SpatialData> {
  return readAnyInput(params.path, ctx);
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

/** Engine test reader (namespace `io`): opens any input, with an optional metadata file beside it. */
import { readFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { openData } from "../../../src/sdk/io/open.js";
import type { OpContext } from "../../../src/sdk/jobs/operation.js";

/** Params of `open_with_meta`. */
export interface OpenWithMetaParams {
  /** The input to open (any format `openData` reads). */
  path: string;
  /** A JSON file inside the input folder (joined onto `path`, as spatialdata-io joins `counts_file`) whose object is merged into the root attrs. */
  meta_file?: string;
}

/**
 * Open an input and merge a JSON metadata file found beside it into the object's attrs.
 */
export async function open_with_meta(
  _sd: SpatialData,
  params: OpenWithMetaParams,
  ctx: OpContext,
): Promise<SpatialData> {
  ctx.progress(0, `opening ${params.path}`);
  const { sdata, warnings } = await openData(params.path);
  for (const w of warnings) ctx.log(w);
  if (!params.meta_file) return sdata;
  const metaPath = isAbsolute(params.meta_file) ? params.meta_file : join(params.path, params.meta_file);
  let meta: unknown;
  try {
    meta = JSON.parse(await readFile(metaPath, "utf8"));
  } catch (err) {
    throw new Error(`${metaPath}: cannot read the metadata file: ${(err as Error).message}`);
  }
  if (!meta || typeof meta !== "object" || Array.isArray(meta))
    throw new Error(`${metaPath}: metadata must be a JSON object`);
  ctx.progress(1);
  return makeSpatialData({ ...sdata, attrs: { ...sdata.attrs, ...(meta as Record<string, unknown>) } });
}

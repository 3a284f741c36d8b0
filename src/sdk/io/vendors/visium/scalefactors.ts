/** Space Ranger's `scalefactors_json.json`: full-resolution → hires/lowres image scales and the spot diameter. */
import { readFile } from "node:fs/promises";
import { DataError } from "../../data-error.js";

/** The scale factors a Visium reader uses. */
export interface ScaleFactors {
  readonly tissue_hires_scalef: number;
  readonly tissue_lowres_scalef: number;
  readonly spot_diameter_fullres: number;
  readonly fiducial_diameter_fullres?: number;
  /** Visium HD: microns per full-resolution pixel. */
  readonly microns_per_pixel?: number;
  /** Visium HD: bin size in microns. */
  readonly bin_size_um?: number;
}

/** Read and check a scale factors file. */
export async function readScaleFactors(file: string): Promise<ScaleFactors> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    throw new DataError(`${file}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (!json || typeof json !== "object") throw new DataError(`${file}: not a JSON object`);
  const o = json as Record<string, unknown>;
  for (const k of ["tissue_hires_scalef", "tissue_lowres_scalef", "spot_diameter_fullres"]) {
    const v = o[k];
    if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v))
      throw new DataError(`${file}: "${k}" must be a positive number, got ${JSON.stringify(v)}`);
  }
  return o as unknown as ScaleFactors;
}

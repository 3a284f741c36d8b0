/** Where a Xenium output folder keeps each part, newest name first (parquet, then the csv.gz copies). */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DataError } from "../../data-error.js";

/** Xenium's default micron size of a morphology pixel (`experiment.xenium` `pixel_size`). */
export const XENIUM_PIXEL_SIZE = 0.2125;

/** Candidate names of each part. */
export const XENIUM_FILES = {
  cells: ["cells.parquet", "cells.csv.gz", "cells.csv"],
  matrix: ["cell_feature_matrix.h5", "cell_feature_matrix"],
  cellBoundaries: ["cell_boundaries.parquet", "cell_boundaries.csv.gz", "cell_boundaries.csv"],
  nucleusBoundaries: ["nucleus_boundaries.parquet", "nucleus_boundaries.csv.gz", "nucleus_boundaries.csv"],
  transcripts: ["transcripts.parquet", "transcripts.csv.gz", "transcripts.csv"],
  morphologyFocus: ["morphology_focus.ome.tif", "morphology_focus/morphology_focus_0000.ome.tif"],
  morphologyMip: ["morphology_mip.ome.tif"],
} as const;

/** The first present file of a part, or null. */
export function partFile(dir: string, part: keyof typeof XENIUM_FILES): string | null {
  for (const n of XENIUM_FILES[part]) if (existsSync(join(dir, n))) return join(dir, n);
  return null;
}

/** `pixel_size` from `experiment.xenium` when present, else Xenium's default, with where it came from. */
export async function pixelSize(dir: string): Promise<{ size: number; from: string }> {
  const file = join(dir, "experiment.xenium");
  if (!existsSync(file)) return { size: XENIUM_PIXEL_SIZE, from: "default (no experiment.xenium)" };
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    throw new DataError(`${file}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const v = (json as Record<string, unknown>)?.pixel_size;
  if (typeof v !== "number" || !(v > 0))
    throw new DataError(`${file}: "pixel_size" must be a positive number`);
  return { size: v, from: file };
}

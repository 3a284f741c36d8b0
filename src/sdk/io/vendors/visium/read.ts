/**
 * Space Ranger `outs` folders as SpatialData, as spatialdata-io's `visium` lays them out: a table of
 * spots (counts from the filtered h5, or the MEX folder), spots as circles (diameter from the scale
 * factors) in full-resolution pixels, the hires and lowres images, and three coordinate systems named
 * after the dataset: `<id>` (full resolution), `<id>_downscaled_hires`, `<id>_downscaled_lowres`.
 */
import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { dense } from "../../../data/arrays.js";
import { type Column, withColumn } from "../../../data/dataframe.js";
import type { ImageElement } from "../../../data/elements.js";
import { makeSpatialData } from "../../../data/spatialdata.js";
import { obsNames, type Table } from "../../../data/table.js";
import { DataError } from "../../data-error.js";
import { circles, type ReaderReport, rangeIds, regionTable, type VendorResult, xyMatrix } from "../common.js";
import { type ImageRecipes, openImage } from "../image-recipe.js";
import { identityOn, identityXY, scaleOn } from "../placement.js";
import { readTenxH5 } from "../tenx/h5-matrix.js";
import { isMexFolder, readMex } from "../tenx/mex.js";
import { findPositionsFile, readPositions } from "./positions.js";
import { readScaleFactors } from "./scalefactors.js";

/** Options of {@link readVisium} (spatialdata-io's names). */
export interface VisiumOptions {
  /** Dataset id naming the elements and coordinate systems (default: the folder's name, or its parent's for `outs`). */
  readonly dataset_id?: string | null;
  /** Count matrix, relative to the folder (default `filtered_feature_bc_matrix.h5`, else the MEX folder). */
  readonly counts_file?: string | null;
  /** Positions file, relative to the folder (default: found in `spatial/`). */
  readonly tissue_positions_file?: string | null;
  /** Scale factors, relative to the folder (default `spatial/scalefactors_json.json`). */
  readonly scalefactors_file?: string | null;
  /** Whether to open the hires/lowres images (default true). */
  readonly load_images?: boolean;
}

/** Counts file names tried, in order, when none is given. */
export const DEFAULT_COUNTS = [
  "filtered_feature_bc_matrix.h5",
  "filtered_feature_bc_matrix",
  "raw_feature_bc_matrix.h5",
  "raw_feature_bc_matrix",
];

/** The dataset id spatialdata-io users see when they give none. */
export function defaultDatasetId(dir: string): string {
  const name = basename(resolve(dir));
  return name === "outs" ? basename(resolve(dir, "..")) : name;
}

async function readCounts(file: string): Promise<{ table: Table; warnings: string[] }> {
  if (statSync(file).isDirectory()) {
    if (!isMexFolder(file))
      throw new DataError(`${file}: a folder without matrix.mtx, barcodes.tsv and features.tsv`);
    return readMex(file);
  }
  return readTenxH5(file);
}

/** Read a Space Ranger folder. */
export async function readVisium(
  dir: string,
  opts: VisiumOptions = {},
  report: ReaderReport = {},
): Promise<VendorResult> {
  const id = opts.dataset_id || defaultDatasetId(dir);
  const warnings: string[] = [];
  report.progress?.(0, "reading the count matrix");
  let countsPath: string;
  if (opts.counts_file) countsPath = join(dir, opts.counts_file);
  else {
    const found = DEFAULT_COUNTS.map((f) => join(dir, f)).find((p) => existsSync(p));
    if (!found) throw new DataError(`${dir}: no count matrix (looked for ${DEFAULT_COUNTS.join(", ")})`);
    countsPath = found;
  }
  if (!existsSync(countsPath)) throw new DataError(`${countsPath}: counts_file does not exist`);
  const counts = await readCounts(countsPath);
  warnings.push(...counts.warnings);
  report.log?.(`counts: ${countsPath}`);

  report.progress?.(0.4, "reading spot positions");
  const spatialDir = join(dir, "spatial");
  const posFile = opts.tissue_positions_file
    ? join(dir, opts.tissue_positions_file)
    : findPositionsFile(spatialDir);
  if (!posFile || !existsSync(posFile))
    throw new DataError(
      `${dir}: no spot positions (looked for spatial/tissue_positions.parquet, tissue_positions.csv, tissue_positions_list.csv)`,
    );
  const pos = await readPositions(posFile);
  const sfFile = opts.scalefactors_file
    ? join(dir, opts.scalefactors_file)
    : join(spatialDir, "scalefactors_json.json");
  if (!existsSync(sfFile)) throw new DataError(`${sfFile}: no scale factors file`);
  const sf = await readScaleFactors(sfFile);
  report.log?.(`positions: ${posFile}; scale factors: ${sfFile}`);

  // Join positions onto the table's barcodes (the positions list every spot; the matrix may hold fewer).
  const row = new Map<string, number>();
  for (let i = 0; i < pos.barcodes.length; i++) row.set(pos.barcodes[i]!, i);
  const barcodes = obsNames(counts.table).values.map((b) => b ?? "");
  const n = barcodes.length;
  const take = (a: Float64Array) => {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = a[row.get(barcodes[i]!)!]!;
    return out;
  };
  const missing = barcodes.filter((b) => !row.has(b));
  if (missing.length)
    throw new DataError(
      `${posFile}: ${missing.length} barcodes of the count matrix have no position (first: ${missing.slice(0, 3).join(", ")})`,
    );
  const x = take(pos.pxlCol);
  const y = take(pos.pxlRow);
  let table = counts.table;
  const extra: Record<string, Column> = {
    in_tissue: dense(Int32Array.from(take(pos.inTissue))),
    array_row: dense(Int32Array.from(take(pos.arrayRow))),
    array_col: dense(Int32Array.from(take(pos.arrayCol))),
  };
  let obs = table.obs;
  for (const [k, v] of Object.entries(extra)) obs = withColumn(obs, k, v);
  table = { ...table, obs };
  const spotIds = Int32Array.from({ length: n }, (_, i) => i);
  table = regionTable(table, id, "spot_id", dense(spotIds), xyMatrix(x, y));

  const hiresCs = `${id}_downscaled_hires`;
  const lowresCs = `${id}_downscaled_lowres`;
  const shapes = {
    [id]: circles(id, rangeIds(n), x, y, new Float64Array(n).fill(sf.spot_diameter_fullres / 2), {
      [id]: identityXY(id, id),
      [hiresCs]: scaleOn(["x", "y"], id, hiresCs, sf.tissue_hires_scalef, sf.tissue_hires_scalef),
      [lowresCs]: scaleOn(["x", "y"], id, lowresCs, sf.tissue_lowres_scalef, sf.tissue_lowres_scalef),
    }),
  };

  const images: Record<string, ImageElement> = {};
  const recipes: ImageRecipes = {};
  if (opts.load_images !== false) {
    report.progress?.(0.7, "opening the tissue images");
    for (const [res, cs] of [
      ["hires", hiresCs],
      ["lowres", lowresCs],
    ] as const) {
      const file = join(spatialDir, `tissue_${res}_image.png`);
      if (!existsSync(file)) {
        warnings.push(`${dir}: no spatial/tissue_${res}_image.png; the ${res} image is left out`);
        continue;
      }
      const name = `${id}_${res}_image`;
      images[name] = await openImage(
        { opener: "picture", file },
        name,
        (axes) => ({ [cs]: identityOn(axes, name, cs) }),
        recipes,
      );
    }
  }
  report.progress?.(1, "read");
  return {
    reader: "io.visium",
    warnings,
    images: recipes,
    sdata: makeSpatialData({
      tables: { table },
      shapes,
      images,
      source: { path: dir, format: "visium" },
    }),
  };
}

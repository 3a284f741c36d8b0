/**
 * Visium HD Space Ranger outputs as SpatialData, as far as spatialdata-io's `visium_hd` layout goes:
 * every `binned_outputs/square_NNNum/` folder (its count matrix, `spatial/tissue_positions.parquet` and
 * scale factors) becomes a table `square_NNNum` annotating a shapes element `<id>_square_NNNum` of
 * square bins (side = `bin_size_um / microns_per_pixel` full-resolution pixels) in the system `<id>`;
 * the hires/lowres images come from `outs/spatial/`. Each bin folder is read by the Visium reader.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { dataFrame, nRows, withColumn } from "../../../data/dataframe.js";
import type { ImageElement, ShapesElement } from "../../../data/elements.js";
import { rangeStrings } from "../../../data/lazy-strings.js";
import { makeSpatialData } from "../../../data/spatialdata.js";
import { makeTable, type Table } from "../../../data/table.js";
import { DataError } from "../../data-error.js";
import { constantCategorical, type ReaderReport, type VendorResult } from "../common.js";
import { type ImageRecipes, openImage } from "../image-recipe.js";
import { identityOn, identityXY, scaleOn } from "../placement.js";
import { defaultDatasetId, readVisium } from "../visium/read.js";
import { readScaleFactors } from "../visium/scalefactors.js";

/** Options of {@link readVisiumHd}. */
export interface VisiumHdOptions {
  readonly dataset_id?: string | null;
  /** Bin sizes to read (`[2, 8, 16]`); default every `square_NNNum` folder. */
  readonly bin_size?: readonly number[] | null;
  readonly load_images?: boolean;
}

/** The `square_NNNum` folders of an outs folder, by bin size in µm. */
export function binFolders(dir: string): { size: number; name: string; dir: string }[] {
  const root = join(dir, "binned_outputs");
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .flatMap((n) => {
      const m = /^square_(\d+)um$/.exec(n);
      return m ? [{ size: Number(m[1]), name: n, dir: join(root, n) }] : [];
    })
    .sort((a, b) => a.size - b.size);
}

function squares(name: string, centers: Float64Array, side: number, cs: string): ShapesElement {
  const n = centers.length / 2;
  const h = side / 2;
  const coords = new Float64Array(n * 10);
  for (let i = 0; i < n; i++) {
    const x = centers[2 * i]!;
    const y = centers[2 * i + 1]!;
    coords.set([x - h, y - h, x + h, y - h, x + h, y + h, x - h, y + h, x - h, y - h], i * 10);
  }
  return {
    kind: "shapes",
    name,
    transformations: { [cs]: identityXY(name, cs) },
    geometry: {
      type: "polygon",
      coords,
      geomOffsets: Int32Array.from({ length: n + 1 }, (_, i) => i),
      ringOffsets: Int32Array.from({ length: n + 1 }, (_, i) => i * 5),
    },
    frame: dataFrame(rangeStrings(n), {}, "_index"),
  };
}

/** Read a Visium HD outs folder. */
export async function readVisiumHd(
  dir: string,
  opts: VisiumHdOptions = {},
  report: ReaderReport = {},
): Promise<VendorResult> {
  const id = opts.dataset_id || defaultDatasetId(dir);
  let bins = binFolders(dir);
  if (opts.bin_size?.length) bins = bins.filter((b) => opts.bin_size!.includes(b.size));
  if (!bins.length)
    throw new DataError(
      `${dir}: no binned_outputs/square_NNNum folder${opts.bin_size?.length ? ` of size ${opts.bin_size.join(", ")} µm` : ""}`,
    );
  const warnings: string[] = [];
  const tables: Record<string, Table> = {};
  const shapes: Record<string, ShapesElement> = {};
  let sf: Awaited<ReturnType<typeof readScaleFactors>> | null = null;
  for (const [k, b] of bins.entries()) {
    report.progress?.(k / (bins.length + 1), `reading ${b.name}`);
    const r = await readVisium(b.dir, { dataset_id: id, load_images: false });
    warnings.push(...r.warnings);
    const binSf = await readScaleFactors(join(b.dir, "spatial", "scalefactors_json.json"));
    sf ??= binSf;
    const side = binSf.microns_per_pixel
      ? (binSf.bin_size_um ?? b.size) / binSf.microns_per_pixel
      : binSf.spot_diameter_fullres;
    const region = `${id}_${b.name}`;
    const t = r.sdata.tables.table!;
    const obs = withColumn(t.obs, "region", constantCategorical(region, nRows(t.obs)));
    tables[b.name] = makeTable({
      X: t.X,
      obs,
      var: t.var,
      obsm: t.obsm,
      annotation: { region, regionKey: "region", instanceKey: "spot_id" },
    });
    shapes[region] = squares(region, (t.obsm.spatial as { data: Float64Array }).data, side, id);
    report.log?.(`${b.name}: ${nRows(t.obs)} bins, side ${side.toFixed(3)} px`);
  }
  const images: Record<string, ImageElement> = {};
  const recipes: ImageRecipes = {};
  if (opts.load_images !== false && sf) {
    for (const [res, scale] of [
      ["hires", sf.tissue_hires_scalef],
      ["lowres", sf.tissue_lowres_scalef],
    ] as const) {
      const file = [
        join(dir, "spatial", `tissue_${res}_image.png`),
        join(bins[0]!.dir, "spatial", `tissue_${res}_image.png`),
      ].find((f) => existsSync(f));
      if (!file) continue;
      const cs = `${id}_downscaled_${res}`;
      const name = `${id}_${res}_image`;
      images[name] = await openImage(
        { opener: "picture", file },
        name,
        (axes) => ({ [cs]: identityOn(axes, name, cs) }),
        recipes,
      );
      // The bins reach the image's system through a scale from full resolution.
      for (const s of Object.values(shapes))
        (s.transformations as Record<string, unknown>)[cs] = scaleOn(["x", "y"], s.name, cs, scale, scale);
    }
  }
  report.progress?.(1, "read");
  return {
    reader: "io.visium_hd",
    warnings,
    images: recipes,
    sdata: makeSpatialData({ tables, shapes, images, source: { path: dir, format: "visium_hd" } }),
  };
}

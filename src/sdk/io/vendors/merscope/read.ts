/**
 * MERSCOPE (Vizgen) output folders as SpatialData, in microns (`global`), as spatialdata-io's
 * `merscope` lays them out: the cell × gene table (`Blank-*` barcodes moved to obsm `blank`, cells'
 * metadata as obs), cell boundaries (GeoParquet, else the per-FOV hdf5 files), detected transcripts as
 * columnar points, and the mosaics, one image per z plane with a channel per stain, placed with the
 * inverse of the micron → mosaic-pixel transform. Entity ids (≈ 1.1e17, beyond 2^53) stay text.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { dense, strings } from "../../../data/arrays.js";
import { type Column, dataFrame } from "../../../data/dataframe.js";
import type { ImageElement, PointsElement, ShapesElement } from "../../../data/elements.js";
import { makeSpatialData } from "../../../data/spatialdata.js";
import { makeTable } from "../../../data/table.js";
import { DataError } from "../../data-error.js";
import { asCategorical } from "../categorize.js";
import { type ReaderReport, rangeIds, regionTable, type VendorResult, xyMatrix } from "../common.js";
import { numericColumn, readFrameFile, textColumn } from "../frame-file.js";
import { type ImageRecipes, openImage } from "../image-recipe.js";
import { affineOn, identityXY } from "../placement.js";
import { csrFromTextColumns, readDelimited, typedColumn } from "../text.js";
import { readMerscopeBoundaries } from "./boundaries.js";
import { invertAffine2, micronToPixel, readManifest } from "./transform.js";

/** Options of {@link readMerscope} (spatialdata-io's names). */
export interface MerscopeOptions {
  /** Names the images (`<id>_z<z>`); default the folder's name. */
  readonly dataset_id?: string | null;
  /** Cell-by-gene file inside the folder (default `cell_by_gene.csv`). */
  readonly counts_file?: string | null;
  /** Cell metadata file inside the folder (default `cell_metadata.csv`). */
  readonly meta_file?: string | null;
  /** micron → mosaic-pixel transform inside the folder (default `images/micron_to_mosaic_pixel_transform.csv`, else from the manifest). */
  readonly transformation_file?: string | null;
  readonly transcripts?: boolean;
  readonly mosaic_images?: boolean;
  readonly cells_boundaries?: boolean;
  /** z plane of the boundaries (default the lowest present). */
  readonly z_index?: number | null;
  /**
   * A folder inside the output folder holding a vpt (vizgen-postprocessing-tool) re-segmentation —
   * `*cell_by_gene.csv`, `*cell_metadata.csv` and `*micron_space.parquet` or `*cell_boundaries.parquet`
   * (vpt names them after the segmentation, `cellpose_…`) — read instead of the instrument's cells.
   */
  readonly vpt_outputs?: string | null;
}

/** The files of a vpt output folder (see `MerscopeOptions.vpt_outputs`); a DataError names what is missing. */
export function vptFiles(folder: string): { counts: string; meta: string; boundaries: string | null } {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    throw new DataError(`${folder}: vpt_outputs is not a readable folder`);
  }
  const one = (re: RegExp, what: string): string | null => {
    const hits = names.filter((n) => re.test(n));
    if (hits.length > 1) throw new DataError(`${folder}: several ${what} files (${hits.join(", ")})`);
    return hits.length ? join(folder, hits[0]!) : null;
  };
  const counts = one(/cell_by_gene\.csv$/i, "cell-by-gene");
  const meta = one(/cell_metadata\.csv$/i, "cell metadata");
  if (!counts || !meta)
    throw new DataError(`${folder}: a vpt output folder needs *cell_by_gene.csv and *cell_metadata.csv`);
  const boundaries = one(/(micron_space|cell_boundaries)\.parquet$/i, "boundaries");
  return { counts, meta, boundaries };
}

const GLOBAL = "global";

/** Read a MERSCOPE output folder. */
export async function readMerscope(
  dir: string,
  opts: MerscopeOptions = {},
  report: ReaderReport = {},
): Promise<VendorResult> {
  const warnings: string[] = [];
  const id = opts.dataset_id || dir.replace(/\/+$/, "").split("/").pop()!;
  const vpt = opts.vpt_outputs ? vptFiles(join(dir, opts.vpt_outputs)) : null;
  if (vpt)
    report.log?.(`vpt outputs: ${vpt.counts}, ${vpt.meta}, ${vpt.boundaries ?? "no boundaries parquet"}`);
  report.progress?.(0, "reading the cell-by-gene matrix");
  const countsFile = vpt?.counts ?? join(dir, opts.counts_file ?? "cell_by_gene.csv");
  if (!existsSync(countsFile)) throw new DataError(`${countsFile}: no cell-by-gene file`);
  const counts = await readDelimited(countsFile, { sep: "," });
  const header = counts.header ?? [];
  if (header.length < 2) throw new DataError(`${countsFile}: no gene columns`);
  const cellIds = counts.columns[0]!;
  const n = counts.nRows;
  const geneCols: number[] = [];
  const blankCols: number[] = [];
  header.forEach((h, i) => {
    if (i > 0) (/^Blank-/i.test(h) ? blankCols : geneCols).push(i);
  });
  const X = csrFromTextColumns(
    counts,
    Array.from({ length: n }, (_, r) => r),
    geneCols,
    countsFile,
  );
  const blank = new Float32Array(n * blankCols.length);
  for (let r = 0; r < n; r++)
    blankCols.forEach((c, j) => {
      blank[r * blankCols.length + j] = Number(counts.columns[c]![r]);
    });

  report.progress?.(0.2, "reading the cell metadata");
  const metaFile = vpt?.meta ?? join(dir, opts.meta_file ?? "cell_metadata.csv");
  if (!existsSync(metaFile)) throw new DataError(`${metaFile}: no cell metadata file`);
  const meta = await readFrameFile(metaFile, { textColumns: ["EntityID", ""] });
  const metaIds = textColumn(meta, meta.order.includes("EntityID") ? "EntityID" : meta.order[0]!);
  const row = new Map<string, number>();
  for (let i = 0; i < metaIds.length; i++) row.set(metaIds[i]!, i);
  const pos = Int32Array.from(cellIds, (c) => {
    const r = row.get(c);
    if (r === undefined) throw new DataError(`${metaFile}: cell ${c} of ${countsFile} has no row`);
    return r;
  });
  const obs: Record<string, Column> = {};
  for (const name of meta.order) {
    if (name === "EntityID" || name === "") continue;
    const c = meta.columns[name]!;
    if (c.kind === "dense") obs[name] = dense(Float64Array.from(pos, (r) => Number(c.data[r]!)));
    else if (c.kind === "string") obs[name] = typedColumn(Array.from(pos, (r) => c.values[r] ?? ""));
  }
  const cx = numericColumn(meta, "center_x");
  const cy = numericColumn(meta, "center_y");
  const x = Float64Array.from(pos, (r) => cx[r]!);
  const y = Float64Array.from(pos, (r) => cy[r]!);
  const geneNames = geneCols.map((c) => header[c]!);
  let table = makeTable({
    X,
    obs: dataFrame(strings(cellIds), obs, "_index"),
    var: dataFrame(geneNames, {}, "_index"),
    obsm: blankCols.length ? { blank: dense(blank, [n, blankCols.length]) } : {},
  });
  const region = "cell_boundaries";
  table = regionTable(
    table,
    region,
    "cell_index",
    dense(Int32Array.from({ length: n }, (_, i) => i)),
    xyMatrix(x, y),
  );
  report.log?.(`${n} cells, ${geneNames.length} genes, ${blankCols.length} blank barcodes`);

  const shapes: Record<string, ShapesElement> = {};
  if (vpt && !vpt.boundaries && opts.cells_boundaries !== false)
    warnings.push(`${opts.vpt_outputs}: no vpt boundaries parquet; boundaries left out`);
  else if (opts.cells_boundaries !== false) {
    report.progress?.(0.4, "reading the cell boundaries");
    const b = await readMerscopeBoundaries(
      dir,
      cellIds,
      region,
      { [GLOBAL]: identityXY(region, GLOBAL) },
      opts.z_index,
      vpt?.boundaries ?? undefined,
    );
    if (b) {
      shapes[region] = b.shapes;
      warnings.push(...b.warnings);
      report.log?.(`boundaries: ${b.from}`);
    } else warnings.push(`${dir}: no cell_boundaries.parquet or cell_boundaries/*.hdf5; boundaries left out`);
  }

  const points: Record<string, PointsElement> = {};
  const txFile = join(dir, "detected_transcripts.csv");
  if (opts.transcripts !== false && existsSync(txFile)) {
    report.progress?.(0.6, "reading the transcripts");
    const tx = await readFrameFile(txFile, { textColumns: ["gene", "transcript_id", "cell_id"] });
    const cols: Record<string, Column> = {};
    for (const name of tx.order) {
      if (name === "" || name === "V1") continue;
      const to =
        name === "global_x"
          ? "x"
          : name === "global_y"
            ? "y"
            : name === "global_z"
              ? "z"
              : name === "x" || name === "y"
                ? `${name}_fov`
                : name;
      const c = tx.columns[name]!;
      cols[to] =
        to === "x" || to === "y" || to === "z"
          ? dense(Float32Array.from(numericColumn(tx, name)))
          : name === "gene"
            ? asCategorical(c)
            : c;
    }
    if (!cols.x || !cols.y) throw new DataError(`${txFile}: no global_x/global_y columns`);
    points.transcripts = {
      kind: "points",
      name: "transcripts",
      axes: cols.z ? ["x", "y", "z"] : ["x", "y"],
      frame: dataFrame(rangeIds(tx.nRows), cols, "_index"),
      featureKey: "gene",
      transformations: { [GLOBAL]: identityXY("transcripts", GLOBAL) },
    };
  }

  const images: Record<string, ImageElement> = {};
  const recipes: ImageRecipes = {};
  const imagesDir = join(dir, "images");
  const manifestFile = join(imagesDir, "manifest.json");
  if (opts.mosaic_images !== false && existsSync(manifestFile)) {
    report.progress?.(0.8, "opening the mosaics");
    const manifest = await readManifest(manifestFile);
    const t = await micronToPixel(
      imagesDir,
      manifest,
      opts.transformation_file ? join(dir, opts.transformation_file) : null,
    );
    report.log?.(`micron → mosaic pixel: ${JSON.stringify(t.m)} (${t.from})`);
    const toMicrons = invertAffine2(t.m);
    const zs = [...new Set(manifest.mosaic_files.map((f) => f.z))].sort((a, b) => a - b);
    for (const z of zs) {
      const files = manifest.mosaic_files.filter(
        (f) => f.z === z && existsSync(join(imagesDir, f.file_name)),
      );
      if (!files.length) continue;
      const name = `${id}_z${z}`;
      images[name] = await openImage(
        {
          opener: "tiff-planes",
          files: files.map((f) => join(imagesDir, f.file_name)),
          channels: files.map((f) => f.stain),
        },
        name,
        (axes) => ({ [GLOBAL]: affineOn(axes, name, GLOBAL, toMicrons) }),
        recipes,
      );
    }
  }
  report.progress?.(1, "read");
  return {
    reader: "io.merscope",
    warnings,
    images: recipes,
    sdata: makeSpatialData({
      tables: { table },
      shapes,
      points,
      images,
      source: { path: dir, format: "merscope" },
    }),
  };
}

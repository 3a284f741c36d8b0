/**
 * Xenium output folders as SpatialData, as spatialdata-io's `xenium` lays them out, in microns
 * (coordinate system `global`): the cell × gene table (cell_feature_matrix, with cells' metadata as
 * obs), cells as circles (`cell_circles`, radius √(area/π)), cell and nucleus boundaries as polygons,
 * transcripts as points (columnar: typed arrays and categorical genes, never an object per
 * transcript), and the morphology OME-TIFFs placed with the micron size of a pixel.
 */
import { allocArray, type DType, dense, strings, type TypedArray } from "../../../data/arrays.js";
import { type Column, dataFrame, nRows } from "../../../data/dataframe.js";
import type { ImageElement, PointsElement, ShapesElement } from "../../../data/elements.js";
import { makeSpatialData } from "../../../data/spatialdata.js";
import { makeTable, obsNames, type Table } from "../../../data/table.js";
import { DataError } from "../../data-error.js";
import { polygonsFromVertexFile, polygonsFromVertices } from "../boundaries.js";
import { asCategorical } from "../categorize.js";
import { circles, type ReaderReport, rangeIds, regionTable, type VendorResult, xyMatrix } from "../common.js";
import { type FileColumns, numericColumn, readFrameFile, textColumn } from "../frame-file.js";
import { type ImageRecipes, openImage } from "../image-recipe.js";
import { CodeBuilder, openParquetStream, putNumbers } from "../parquet-stream.js";
import { identityXY, scaleOn } from "../placement.js";
import { readTenxH5 } from "../tenx/h5-matrix.js";
import { readMex } from "../tenx/mex.js";
import { partFile, pixelSize } from "./files.js";

/** Options of {@link readXenium} (spatialdata-io's names). */
export interface XeniumOptions {
  readonly cells_boundaries?: boolean;
  readonly nucleus_boundaries?: boolean;
  readonly cells_as_circles?: boolean;
  readonly transcripts?: boolean;
  readonly morphology_mip?: boolean;
  readonly morphology_focus?: boolean;
}

const GLOBAL = "global";

async function readTable(dir: string, warnings: string[]): Promise<Table> {
  const file = partFile(dir, "matrix");
  if (!file) throw new DataError(`${dir}: no cell_feature_matrix.h5 or cell_feature_matrix folder`);
  const r = file.endsWith(".h5") ? await readTenxH5(file) : await readMex(file);
  warnings.push(...r.warnings);
  return r.table;
}

/** Cells' metadata rows in the table's order (joined by cell_id). */
function cellsInTableOrder(
  cells: FileColumns,
  table: Table,
): { obs: Record<string, Column>; x: Float64Array; y: Float64Array; area: Float64Array | null } {
  const ids = textColumn(cells, "cell_id");
  const row = new Map<string, number>();
  for (let i = 0; i < ids.length; i++) row.set(ids[i]!, i);
  const barcodes = obsNames(table).values.map((v) => v ?? "");
  const pos = new Int32Array(barcodes.length);
  barcodes.forEach((b, i) => {
    const r = row.get(b);
    if (r === undefined) throw new DataError(`${cells.file}: cell "${b}" of the matrix has no row`);
    pos[i] = r;
  });
  const pick = (a: Float64Array) => Float64Array.from(pos, (r) => a[r]!);
  const obs: Record<string, Column> = {};
  for (const name of cells.order) {
    if (name === "cell_id") continue;
    const c = cells.columns[name]!;
    if (c.kind === "dense" && !(c.data instanceof BigInt64Array) && !(c.data instanceof BigUint64Array))
      obs[name] = dense(pick(numericColumn(cells, name)));
  }
  return {
    obs,
    x: pick(numericColumn(cells, "x_centroid")),
    y: pick(numericColumn(cells, "y_centroid")),
    area: cells.columns.cell_area ? pick(numericColumn(cells, "cell_area")) : null,
  };
}

async function boundaries(file: string, name: string, signal?: AbortSignal): Promise<ShapesElement> {
  const tf = { [GLOBAL]: identityXY(name, GLOBAL) };
  if (/\.parquet$/i.test(file))
    return polygonsFromVertexFile(name, file, { id: "cell_id", x: "vertex_x", y: "vertex_y" }, tf, signal);
  const fc = await readFrameFile(file, {
    columns: ["cell_id", "vertex_x", "vertex_y"],
    textColumns: ["cell_id"],
  });
  return polygonsFromVertices(
    name,
    textColumn(fc, "cell_id"),
    numericColumn(fc, "vertex_x"),
    numericColumn(fc, "vertex_y"),
    tf,
    file,
  );
}

const TX_RENAME: Record<string, string> = { x_location: "x", y_location: "y", z_location: "z" };

/**
 * A parquet transcripts file's columns, a row group at a time: coordinates into float32, every text
 * column (gene, cell id, FOV) into category codes, other numbers into arrays of their stored type.
 */
async function transcriptColumns(
  file: string,
  signal?: AbortSignal,
): Promise<{ n: number; cols: Record<string, Column> }> {
  const stream = await openParquetStream(file);
  const n = stream.nRows;
  const floats: Record<string, Float32Array | Float64Array> = {};
  const codes: Record<string, CodeBuilder> = {};
  const others: Record<string, { data: TypedArray; mask: Uint8Array | null; dtype: DType }> = {};
  const names: string[] = [];
  for (const info of stream.infos) {
    const to = TX_RENAME[info.name] ?? info.name;
    if (to === "x" || to === "y" || to === "z") floats[info.name] = new Float32Array(n);
    else if (info.kind === "string" || info.categorical) codes[info.name] = new CodeBuilder(n);
    else if ((info.kind === "numeric" || info.kind === "bool") && info.dtype) {
      if (info.dtype === "float32") floats[info.name] = new Float32Array(n);
      else if (info.dtype === "float64") floats[info.name] = new Float64Array(n);
      else others[info.name] = { data: allocArray(info.dtype, n), mask: null, dtype: info.dtype };
    } else continue;
    names.push(info.name);
  }
  await stream.forEachChunk(
    names,
    (col, values, rowStart) => {
      const f = floats[col];
      if (f) return putNumbers(f, values, rowStart);
      const c = codes[col];
      if (c) return c.add(values, rowStart);
      const o = others[col]!;
      const big = o.data instanceof BigInt64Array || o.data instanceof BigUint64Array;
      const out = o.data as unknown as Record<number, number | bigint>;
      for (let i = 0; i < values.length; i++) {
        const v = (values as ArrayLike<unknown>)[i];
        if (v === null || v === undefined) {
          o.mask ??= new Uint8Array(n);
          o.mask[rowStart + i] = 1;
        } else
          out[rowStart + i] = big ? BigInt(v as bigint) : typeof v === "boolean" ? (v ? 1 : 0) : Number(v);
      }
    },
    signal,
  );
  const cols: Record<string, Column> = {};
  for (const name of names) {
    const to = TX_RENAME[name] ?? name;
    if (floats[name]) cols[to] = dense(floats[name]!);
    else if (codes[name])
      cols[to] = {
        kind: "categorical",
        codes: codes[name]!.codes,
        categories: strings(codes[name]!.categories),
        ordered: false,
      };
    else {
      const o = others[name]!;
      cols[to] = o.mask
        ? { kind: "nullable", dtype: o.dtype, data: o.data, mask: o.mask }
        : dense(o.data, undefined, o.dtype);
    }
  }
  return { n, cols };
}

/** Transcripts as a columnar points element (`x`, `y`, `z`, `feature_name` categorical …). */
export async function readTranscripts(file: string, signal?: AbortSignal): Promise<PointsElement> {
  if (/\.parquet$/i.test(file)) {
    const { n, cols } = await transcriptColumns(file, signal);
    return transcriptsElement(file, n, cols);
  }
  const fc = await readFrameFile(file, { textColumns: ["cell_id", "feature_name"] });
  const rename = TX_RENAME;
  const cols: Record<string, Column> = {};
  for (const n of fc.order) {
    const c = fc.columns[n]!;
    const to = rename[n] ?? n;
    if (to === "x" || to === "y" || to === "z") cols[to] = dense(Float32Array.from(numericColumn(fc, n)));
    else if (n === "feature_name" || n === "cell_id" || n === "fov_name") cols[to] = asCategorical(c);
    else cols[to] = c;
  }
  return transcriptsElement(file, fc.nRows, cols);
}

function transcriptsElement(file: string, n: number, cols: Record<string, Column>): PointsElement {
  for (const a of ["x", "y"]) if (!cols[a]) throw new DataError(`${file}: no ${a}_location column`);
  const axes = cols.z ? ["x", "y", "z"] : ["x", "y"];
  return {
    kind: "points",
    name: "transcripts",
    axes,
    frame: dataFrame(rangeIds(n), cols, "_index"),
    featureKey: "feature_name",
    instanceKey: "cell_id",
    transformations: { [GLOBAL]: identityXY("transcripts", GLOBAL) },
  };
}

/** Read a Xenium output folder. */
export async function readXenium(
  dir: string,
  opts: XeniumOptions = {},
  report: ReaderReport = {},
): Promise<VendorResult> {
  const warnings: string[] = [];
  report.progress?.(0, "reading the cell-feature matrix");
  let table = await readTable(dir, warnings);
  const cellsFile = partFile(dir, "cells");
  if (!cellsFile) throw new DataError(`${dir}: no cells.parquet or cells.csv.gz`);
  const cells = await readFrameFile(cellsFile, { textColumns: ["cell_id"] });
  const meta = cellsInTableOrder(cells, table);
  table = makeTable({ X: table.X, obs: dataFrame(table.obs.index, meta.obs, "_index"), var: table.var });
  const n = meta.x.length;
  table = regionTable(
    table,
    "cell_circles",
    "cell_index",
    dense(Int32Array.from({ length: n }, (_, i) => i)),
    xyMatrix(meta.x, meta.y),
  );
  report.log?.(`${n} cells, ${nRows(table.var)} genes`);

  const shapes: Record<string, ShapesElement> = {};
  if (opts.cells_as_circles !== false) {
    const radius = meta.area ? meta.area.map((a) => Math.sqrt(a / Math.PI)) : new Float64Array(n).fill(5);
    shapes.cell_circles = circles("cell_circles", rangeIds(n), meta.x, meta.y, radius, {
      [GLOBAL]: identityXY("cell_circles", GLOBAL),
    });
  }
  report.progress?.(0.3, "reading the boundaries");
  for (const [part, name, on] of [
    ["cellBoundaries", "cell_boundaries", opts.cells_boundaries],
    ["nucleusBoundaries", "nucleus_boundaries", opts.nucleus_boundaries],
  ] as const) {
    if (on === false) continue;
    const file = partFile(dir, part);
    if (!file) {
      warnings.push(`${dir}: no ${name} file; left out`);
      continue;
    }
    shapes[name] = await boundaries(file, name, report.signal);
  }
  const points: Record<string, PointsElement> = {};
  if (opts.transcripts !== false) {
    report.progress?.(0.5, "reading the transcripts");
    const file = partFile(dir, "transcripts");
    if (file) points.transcripts = await readTranscripts(file, report.signal);
    else warnings.push(`${dir}: no transcripts file; left out`);
  }
  report.progress?.(0.8, "opening the morphology images");
  const px = await pixelSize(dir);
  report.log?.(`pixel size ${px.size} µm (${px.from})`);
  const images: Record<string, ImageElement> = {};
  const recipes: ImageRecipes = {};
  for (const [part, name, on] of [
    ["morphologyFocus", "morphology_focus", opts.morphology_focus],
    ["morphologyMip", "morphology_mip", opts.morphology_mip],
  ] as const) {
    if (on === false) continue;
    const file = partFile(dir, part);
    if (!file) continue;
    images[name] = await openImage(
      { opener: "ome-tiff", file },
      name,
      (axes) => ({ [GLOBAL]: scaleOn(axes, name, GLOBAL, px.size, px.size) }),
      recipes,
    );
  }
  report.progress?.(1, "read");
  return {
    reader: "io.xenium",
    warnings,
    images: recipes,
    sdata: makeSpatialData({
      tables: { table },
      shapes,
      points,
      images,
      source: { path: dir, format: "xenium" },
    }),
  };
}

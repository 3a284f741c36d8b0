/**
 * CosMx (NanoString) flat-file exports as SpatialData: the expression matrix (`*_exprMat_file.csv`:
 * fov, cell_ID, one column per target; the background cell 0 of each FOV dropped, as spatialdata-io
 * does), cell metadata joined by (fov, cell_ID), cell polygons (`*-polygons.csv`) and transcripts
 * (`*_tx_file.csv`, columnar) in the stitched global pixel coordinates (system `global`), with both
 * global and FOV-local centres in obsm (`spatial` = `global`, `local`). Cell names are `<fov>_<cell_ID>`.
 * Per-FOV label masks (`CellLabels/CellLabels_F*.tif`) become labels `<fov>_labels` (`labels.ts`).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { dense, strings } from "../../../data/arrays.js";
import { type Column, dataFrame } from "../../../data/dataframe.js";
import type { LabelsElement, PointsElement, ShapesElement } from "../../../data/elements.js";
import { makeSpatialData } from "../../../data/spatialdata.js";
import { geometryRows } from "../../../data/subset.js";
import { makeTable } from "../../../data/table.js";
import { DataError } from "../../data-error.js";
import { polygonsFromVertices } from "../boundaries.js";
import { asCategorical } from "../categorize.js";
import { type ReaderReport, rangeIds, regionTable, type VendorResult, xyMatrix } from "../common.js";
import { numericColumn, readFrameFile, textColumn } from "../frame-file.js";
import { type ImageRecipes, openLabels } from "../image-recipe.js";
import { identityXY } from "../placement.js";
import { csrFromTextColumns, readDelimited } from "../text.js";
import { fitAffine, fovPlacement, labelFiles } from "./labels.js";

/** Options of {@link readCosmx} (spatialdata-io's names). */
export interface CosmxOptions {
  /** Names the run (default: the prefix of the exprMat file). */
  readonly dataset_id?: string | null;
  /** Expression matrix inside the folder (default `*_exprMat_file.csv[.gz]`). */
  readonly counts_file?: string | null;
  /** Cell metadata inside the folder (default `*_metadata_file.csv[.gz]`). */
  readonly meta_file?: string | null;
  readonly transcripts?: boolean;
  readonly polygons?: boolean;
  /** Read the per-FOV label masks (`CellLabels/CellLabels_F*.tif`) when the export has them. */
  readonly labels?: boolean;
}

const GLOBAL = "global";

/** The one file in `dir` whose name matches `re`, or null; several are an error. */
export function findOne(dir: string, re: RegExp, what: string): string | null {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => re.test(n));
  } catch {
    return null;
  }
  if (names.length > 1) throw new DataError(`${dir}: several ${what} files (${names.join(", ")}); name one`);
  return names.length ? join(dir, names[0]!) : null;
}

/** File-name patterns of a CosMx export. */
export const COSMX_FILES = {
  counts: /_exprMat_file\.csv(\.gz)?$/i,
  meta: /_metadata_file\.csv(\.gz)?$/i,
  tx: /_tx_file\.csv(\.gz)?$/i,
  polygons: /-polygons\.csv(\.gz)?$/i,
} as const;

/** Read a CosMx export folder. */
export async function readCosmx(
  dir: string,
  opts: CosmxOptions = {},
  report: ReaderReport = {},
): Promise<VendorResult> {
  const warnings: string[] = [];
  report.progress?.(0, "reading the expression matrix");
  const countsFile = opts.counts_file
    ? join(dir, opts.counts_file)
    : findOne(dir, COSMX_FILES.counts, "exprMat");
  if (!countsFile || !existsSync(countsFile)) throw new DataError(`${dir}: no *_exprMat_file.csv`);
  const counts = await readDelimited(countsFile, { sep: "," });
  const header = counts.header ?? [];
  const fovCol = header.indexOf("fov");
  const cellCol = header.indexOf("cell_ID");
  if (fovCol < 0 || cellCol < 0)
    throw new DataError(
      `${countsFile}: needs "fov" and "cell_ID" columns (has ${header.slice(0, 5).join(", ")} …)`,
    );
  const targets = header.flatMap((_h, i) => (i === fovCol || i === cellCol ? [] : [i]));
  const keepRows: number[] = [];
  for (let r = 0; r < counts.nRows; r++) if (Number(counts.columns[cellCol]![r]) !== 0) keepRows.push(r);
  const names = keepRows.map((r) => `${counts.columns[fovCol]![r]}_${counts.columns[cellCol]![r]}`);
  const n = keepRows.length;
  const X = csrFromTextColumns(counts, keepRows, targets, countsFile);
  report.log?.(`${n} cells (background cell 0 of each FOV dropped), ${targets.length} targets`);

  report.progress?.(0.2, "reading the cell metadata");
  const metaFile = opts.meta_file ? join(dir, opts.meta_file) : findOne(dir, COSMX_FILES.meta, "metadata");
  if (!metaFile || !existsSync(metaFile)) throw new DataError(`${dir}: no *_metadata_file.csv`);
  const meta = await readFrameFile(metaFile);
  const metaKey = (i: number, fov: string[], cell: string[]) => `${fov[i]}_${cell[i]}`;
  const mFov = textColumn(meta, "fov");
  const mCell = textColumn(meta, "cell_ID");
  const row = new Map<string, number>();
  for (let i = 0; i < mFov.length; i++) row.set(metaKey(i, mFov, mCell), i);
  const pos = Int32Array.from(names, (nm) => {
    const r = row.get(nm);
    if (r === undefined) throw new DataError(`${metaFile}: cell ${nm} of ${countsFile} has no row`);
    return r;
  });
  const obs: Record<string, Column> = {};
  for (const name of meta.order) {
    const c = meta.columns[name]!;
    if (c.kind === "dense") obs[name] = dense(Float64Array.from(pos, (r) => Number(c.data[r]!)));
    else if (c.kind === "string") obs[name] = strings(Array.from(pos, (r) => c.values[r] ?? null));
  }
  const pick = (name: string) => {
    const a = numericColumn(meta, name);
    return Float64Array.from(pos, (r) => a[r]!);
  };
  const gx = pick("CenterX_global_px");
  const gy = pick("CenterY_global_px");
  const global = xyMatrix(gx, gy);
  const local = xyMatrix(pick("CenterX_local_px"), pick("CenterY_local_px"));
  let table = makeTable({
    X,
    obs: dataFrame(strings(names), obs, "_index"),
    var: dataFrame(
      targets.map((c) => header[c]!),
      {},
      "_index",
    ),
    obsm: { global, local },
  });
  const region = "cell_boundaries";
  table = regionTable(
    table,
    region,
    "cell_index",
    dense(Int32Array.from({ length: n }, (_, i) => i)),
    global,
  );

  const shapes: Record<string, ShapesElement> = {};
  const polyFile = findOne(dir, COSMX_FILES.polygons, "polygons");
  if (opts.polygons !== false && polyFile) {
    report.progress?.(0.4, "reading the polygons");
    const pc = await readFrameFile(polyFile);
    const pf = textColumn(pc, "fov");
    const cellKey = pc.order.includes("cellID") ? "cellID" : "cell_ID";
    const pcell = textColumn(pc, cellKey);
    const ids = pf.map((f, i) => `${f}_${pcell[i]}`);
    const poly = polygonsFromVertices(
      region,
      ids,
      numericColumn(pc, "x_global_px"),
      numericColumn(pc, "y_global_px"),
      {
        [GLOBAL]: identityXY(region, GLOBAL),
      },
      polyFile,
    );
    // In the table's order, indexed by table row (the instance ids); cells without a polygon left out.
    const at = new Map(poly.frame.index.values.map((v, i) => [v ?? "", i]));
    const rows: number[] = [];
    const src: number[] = [];
    names.forEach((nm, r) => {
      const i = at.get(nm);
      if (i !== undefined) {
        rows.push(r);
        src.push(i);
      }
    });
    if (src.length < n) warnings.push(`${polyFile}: ${n - src.length} of ${n} cells have no polygon`);
    shapes[region] = {
      ...poly,
      geometry: geometryRows(poly.geometry, Int32Array.from(src)),
      frame: dataFrame(rows.map(String), { cell: strings(rows.map((r) => names[r]!)) }, "_index"),
    };
  } else warnings.push(`${dir}: no *-polygons.csv; cell boundaries left out`);

  const points: Record<string, PointsElement> = {};
  const txFile = findOne(dir, COSMX_FILES.tx, "transcripts");
  if (opts.transcripts !== false && txFile) {
    report.progress?.(0.6, "reading the transcripts");
    const tx = await readFrameFile(txFile, { textColumns: ["target", "CellComp"] });
    const cols: Record<string, Column> = {};
    for (const name of tx.order) {
      const to = name === "x_global_px" ? "x" : name === "y_global_px" ? "y" : name;
      const c = tx.columns[name]!;
      cols[to] =
        to === "x" || to === "y"
          ? dense(Float32Array.from(numericColumn(tx, name)))
          : name === "target" || name === "CellComp"
            ? asCategorical(c)
            : c;
    }
    if (!cols.x || !cols.y) throw new DataError(`${txFile}: no x_global_px/y_global_px columns`);
    points.transcripts = {
      kind: "points",
      name: "transcripts",
      axes: ["x", "y"],
      frame: dataFrame(rangeIds(tx.nRows), cols, "_index"),
      featureKey: "target",
      transformations: { [GLOBAL]: identityXY("transcripts", GLOBAL) },
    };
  }
  const labels: Record<string, LabelsElement> = {};
  const recipes: ImageRecipes = {};
  const masks = opts.labels === false ? new Map<string, string>() : labelFiles(dir);
  if (masks.size) {
    report.progress?.(0.9, "opening the label masks");
    const fovOf = textColumn(meta, "fov");
    const lx = numericColumn(meta, "CenterX_local_px");
    const ly = numericColumn(meta, "CenterY_local_px");
    const gxAll = numericColumn(meta, "CenterX_global_px");
    const gyAll = numericColumn(meta, "CenterY_global_px");
    for (const [fov, file] of [...masks].sort((a, b) => Number(a[0]) - Number(b[0]))) {
      const local: [number, number][] = [];
      const glob: [number, number][] = [];
      for (let r = 0; r < fovOf.length; r++)
        if (fovOf[r] === fov && Number.isFinite(lx[r]! + ly[r]! + gxAll[r]! + gyAll[r]!)) {
          local.push([lx[r]!, ly[r]!]);
          glob.push([gxAll[r]!, gyAll[r]!]);
        }
      if (!local.length) {
        warnings.push(`${file}: FOV ${fov} has no cells in the metadata to place it by; left out`);
        continue;
      }
      const affine = fitAffine(local, glob);
      const name = `${fov}_labels`;
      labels[name] = await openLabels(
        { opener: "label-tiff", file },
        name,
        fovPlacement(name, fov, GLOBAL, affine),
        recipes,
      );
      report.log?.(
        `${name}: ${file}, local → global ${JSON.stringify(affine)} (fitted on ${local.length} cells)`,
      );
    }
  }
  report.progress?.(1, "read");
  return {
    reader: "io.cosmx",
    warnings,
    images: recipes,
    sdata: makeSpatialData({
      tables: { table },
      shapes,
      points,
      labels,
      source: { path: dir, format: "cosmx" },
    }),
  };
}

/**
 * Space Ranger spot positions: `tissue_positions_list.csv` (1.x, no header, six columns),
 * `tissue_positions.csv` (≥ 2.0, with a header) or `tissue_positions.parquet` (Visium HD bins).
 * Columns: barcode, in_tissue, array_row, array_col, pxl_row_in_fullres, pxl_col_in_fullres.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DataError } from "../../data-error.js";
import { readParquetColumns } from "../../parquet/columns.js";
import { openParquet } from "../../parquet/source.js";
import { FsStore } from "../../store/fs-store.js";
import { asNumbers, readDelimited } from "../text.js";

/** Spot positions keyed by barcode. */
export interface SpotPositions {
  readonly file: string;
  readonly barcodes: readonly string[];
  readonly inTissue: Float64Array;
  readonly arrayRow: Float64Array;
  readonly arrayCol: Float64Array;
  /** Full-resolution pixel row (y) and column (x). */
  readonly pxlRow: Float64Array;
  readonly pxlCol: Float64Array;
}

/** The column names, in the order of the headerless 1.x file. */
export const POSITION_COLUMNS = [
  "barcode",
  "in_tissue",
  "array_row",
  "array_col",
  "pxl_row_in_fullres",
  "pxl_col_in_fullres",
] as const;

/** Default position files, newest layout first (relative to the `spatial` folder). */
export const POSITION_FILES = [
  "tissue_positions.parquet",
  "tissue_positions.csv",
  "tissue_positions_list.csv",
];

/** The positions file of a `spatial` folder, or null. */
export function findPositionsFile(spatialDir: string): string | null {
  for (const f of POSITION_FILES) if (existsSync(join(spatialDir, f))) return join(spatialDir, f);
  return null;
}

function numbersOf(values: readonly string[], file: string, col: string): Float64Array {
  const n = asNumbers(values);
  if (!n) throw new DataError(`${file}: column "${col}" is not numeric`);
  return n;
}

/** Read a positions file (CSV with or without header, or parquet). */
export async function readPositions(file: string): Promise<SpotPositions> {
  if (/\.parquet$/i.test(file)) return readPositionsParquet(file);
  const t = await readDelimited(file, { header: false, sep: "," });
  if (t.columns.length < 6)
    throw new DataError(
      `${file}: ${t.columns.length} columns, a positions file has 6 (${POSITION_COLUMNS.join(", ")})`,
    );
  const first = t.columns.map((c) => c[0] ?? "");
  const hasHeader = Number.isNaN(Number(first[1])) || first[0] === "barcode";
  const cols = t.columns.map((c) => (hasHeader ? c.slice(1) : c));
  const at = (name: (typeof POSITION_COLUMNS)[number]): number => {
    if (!hasHeader) return POSITION_COLUMNS.indexOf(name);
    const i = first.indexOf(name);
    if (i < 0) throw new DataError(`${file}: no column "${name}" in the header (${first.join(", ")})`);
    return i;
  };
  return {
    file,
    barcodes: cols[at("barcode")]!,
    inTissue: numbersOf(cols[at("in_tissue")]!, file, "in_tissue"),
    arrayRow: numbersOf(cols[at("array_row")]!, file, "array_row"),
    arrayCol: numbersOf(cols[at("array_col")]!, file, "array_col"),
    pxlRow: numbersOf(cols[at("pxl_row_in_fullres")]!, file, "pxl_row_in_fullres"),
    pxlCol: numbersOf(cols[at("pxl_col_in_fullres")]!, file, "pxl_col_in_fullres"),
  };
}

async function readPositionsParquet(file: string): Promise<SpotPositions> {
  const slash = file.lastIndexOf("/");
  const store = new FsStore(file.slice(0, slash));
  const src = await openParquet(store, `/${file.slice(slash + 1)}`);
  const cols = await readParquetColumns([src], [...POSITION_COLUMNS]);
  const num = (name: string): Float64Array => {
    const c = cols[name]!;
    if (c.kind !== "dense") throw new DataError(`${file}: column "${name}" is not numeric`);
    return Float64Array.from(c.data as ArrayLike<number>, Number);
  };
  const bc = cols.barcode!;
  if (bc.kind !== "string") throw new DataError(`${file}: column "barcode" is not text`);
  return {
    file,
    barcodes: bc.values.map((v) => v ?? ""),
    inTissue: num("in_tissue"),
    arrayRow: num("array_row"),
    arrayCol: num("array_col"),
    pxlRow: num("pxl_row_in_fullres"),
    pxlCol: num("pxl_col_in_fullres"),
  };
}

/**
 * `custom.identify_tmas`: tissue-microarray cores. A TMA slide holds a grid of round tissue cores
 * separated by empty glass, so along each axis of the (rotated) grid the cells' coordinates fall in
 * runs separated by wide gaps: the widest gaps cut the rows and the columns.
 */
import type { Change } from "../../sdk/data/change.js";
import { dataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { float64Column, int32Column } from "./frames.js";
import { activeTable, categoricalOf, spatialCoordinates } from "./inputs.js";

/** Params of `identify_tmas`. */
export interface IdentifyTmasParams {
  /**
   * Rotation of the core grid in degrees (counter-clockwise); the coordinates are turned back by it
   * so that rows run along x.
   * @default 0
   * @minimum -360
   * @maximum 360
   */
  angle?: number;
  /**
   * Rows of cores; default found from the gaps (wider than 2% of the extent and 20× the median gap).
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  nrows?: number | null;
  /**
   * Columns of cores; default found from the gaps, as for rows.
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  ncols?: number | null;
  /**
   * Cores holding fewer than this proportion of all cells are dropped (their cells get no core).
   * @default 0.001
   * @minimum 0
   * @maximum 1
   */
  min_prop_cells?: number;
  /**
   * How cores are named: rows by letter and columns by number (`A-1`), or the reverse (`1-A`); the
   * row comes first either way.
   * @default "Row=Letter;Column=Number"
   */
  naming?: "Row=Letter;Column=Number" | "Row=Number;Column=Letter";
  /**
   * Where the first row is: `Top` is the smallest y (image convention, y down).
   * @default "Top"
   */
  row_start?: "Top" | "Bottom";
  /**
   * Where the first column is.
   * @default "Left"
   */
  col_start?: "Left" | "Right";
  /**
   * obsm key of the coordinates.
   * @default "spatial"
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * obs key of the core labels (and the uns key of the core table).
   * @default "tma_core"
   * @maxLength 256
   */
  key_added?: string;
}

/** Spreadsheet-style letters: 0 → A, 25 → Z, 26 → AA. */
export function letters(i: number): string {
  let s = "";
  let v = i + 1;
  while (v > 0) {
    const r = (v - 1) % 26;
    s = String.fromCharCode(65 + r) + s;
    v = Math.floor((v - 1) / 26);
  }
  return s;
}

/**
 * Cut points along one axis: the midpoints of the `parts − 1` widest gaps between consecutive sorted
 * values, or (parts null) of every gap wider than 2% of the extent and 20× the median gap. Ascending.
 */
export function gapCuts(values: Float64Array, parts: number | null): number[] {
  const s = Float64Array.from(values).sort();
  const n = s.length;
  if (n < 2) return [];
  const gaps: { at: number; width: number }[] = [];
  for (let i = 1; i < n; i++) gaps.push({ at: (s[i - 1]! + s[i]!) / 2, width: s[i]! - s[i - 1]! });
  let chosen: typeof gaps;
  if (parts !== null) {
    if (parts - 1 > gaps.length) throw new Error(`asked for ${parts} parts of ${n} cells`);
    chosen = [...gaps].sort((a, b) => b.width - a.width || a.at - b.at).slice(0, parts - 1);
  } else {
    const widths = gaps.map((g) => g.width).sort((a, b) => a - b);
    const median = widths[widths.length >> 1]!;
    const extent = s[n - 1]! - s[0]!;
    chosen = gaps.filter((g) => g.width > 0.02 * extent && g.width > 20 * median);
  }
  return chosen.map((g) => g.at).sort((a, b) => a - b);
}

/** Index of the part a value falls in, given ascending cut points. */
function partOf(v: number, cuts: readonly number[]): number {
  let lo = 0;
  let hi = cuts.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (v > cuts[m]!) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/**
 * Detect tissue-microarray cores: the coordinates are rotated back by `angle`, rows are cut at the
 * widest gaps along y and columns at the widest gaps along x (`nrows` − 1 and `ncols` − 1 of them, or
 * every wide gap when not given), and each occupied row × column cell of the grid is a core. Cores
 * with fewer than `min_prop_cells` of all cells are dropped.
 *
 * Writes obs `<key_added>` (categorical core names such as `A-1`, ordered row by row; cells of
 * dropped cores are missing) and uns `<key_added>`: `cores` (a frame per core: `row`, `column`,
 * `n_cells`, the centre `x`, `y` in the original coordinates) and `params`.
 */
export async function identify_tmas(
  sd: SpatialData,
  params: IdentifyTmasParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "identify_tmas";
  const t = activeTable(sd, ctx.table);
  const coords = await spatialCoordinates(t, ctx.table, params.spatial_key ?? "spatial");
  const n = coords.n;
  const angle = params.angle ?? 0;
  const minProp = params.min_prop_cells ?? 0.001;
  const naming = params.naming ?? "Row=Letter;Column=Number";
  const key = params.key_added ?? "tma_core";
  const th = (-angle * Math.PI) / 180;
  const cos = Math.cos(th);
  const sin = Math.sin(th);
  const rx = new Float64Array(n);
  const ry = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const x = coords.xy[2 * i]!;
    const y = coords.xy[2 * i + 1]!;
    rx[i] = x * cos - y * sin;
    ry[i] = x * sin + y * cos;
  }
  let rowCuts: number[];
  let colCuts: number[];
  try {
    rowCuts = gapCuts(ry, params.nrows ?? null);
    colCuts = gapCuts(rx, params.ncols ?? null);
  } catch (err) {
    throw new Error(`${op}: ${(err as Error).message}`);
  }
  const nRows = rowCuts.length + 1;
  const nCols = colCuts.length + 1;
  const rowStart = params.row_start ?? "Top";
  const colStart = params.col_start ?? "Left";
  const cellRow = new Int32Array(n);
  const cellCol = new Int32Array(n);
  const size = new Int32Array(nRows * nCols);
  for (let i = 0; i < n; i++) {
    let r = partOf(ry[i]!, rowCuts);
    let c = partOf(rx[i]!, colCuts);
    if (rowStart === "Bottom") r = nRows - 1 - r;
    if (colStart === "Right") c = nCols - 1 - c;
    cellRow[i] = r;
    cellCol[i] = c;
    size[r * nCols + c]!++;
  }
  const minCells = minProp * n;
  const name = (r: number, c: number) =>
    naming === "Row=Letter;Column=Number" ? `${letters(r)}-${c + 1}` : `${r + 1}-${letters(c)}`;
  const coreOf = new Int32Array(nRows * nCols).fill(-1);
  const names: string[] = [];
  const rowOut: number[] = [];
  const colOut: number[] = [];
  const nOut: number[] = [];
  for (let r = 0; r < nRows; r++)
    for (let c = 0; c < nCols; c++) {
      const s = size[r * nCols + c]!;
      if (s === 0 || s < minCells) continue;
      coreOf[r * nCols + c] = names.length;
      names.push(name(r, c));
      rowOut.push(r);
      colOut.push(c);
      nOut.push(s);
    }
  if (names.length === 0) throw new Error(`${op}: no core holds ${minProp} of the cells`);
  const codes = Int32Array.from({ length: n }, (_, i) => coreOf[cellRow[i]! * nCols + cellCol[i]!]!);
  const cx = new Float64Array(names.length);
  const cy = new Float64Array(names.length);
  for (let i = 0; i < n; i++) {
    const k = codes[i]!;
    if (k < 0) continue;
    cx[k]! += coords.xy[2 * i]! / nOut[k]!;
    cy[k]! += coords.xy[2 * i + 1]! / nOut[k]!;
  }
  const cores = dataFrame(names, {
    row: int32Column(rowOut),
    column: int32Column(colOut),
    n_cells: int32Column(nOut),
    x: float64Column(cx),
    y: float64Column(cy),
  });
  const dropped = codes.reduce((s, k) => s + (k < 0 ? 1 : 0), 0);
  ctx.log(
    `${op}: ${names.length} cores on a ${nRows} × ${nCols} grid${dropped ? `, ${dropped} cells in dropped cores` : ""}; added obs["${key}"]`,
  );
  return {
    tables: {
      [ctx.table]: {
        obs: { [key]: categoricalOf(codes, names) },
        uns: {
          [key]: unsDict({
            cores,
            params: unsDict({
              angle,
              nrows: nRows,
              ncols: nCols,
              min_prop_cells: minProp,
              naming,
              row_start: rowStart,
              col_start: colStart,
            }),
          }),
        },
      },
    },
  };
}

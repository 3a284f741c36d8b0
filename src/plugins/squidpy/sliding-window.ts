/**
 * `tl.sliding_window`: divide the tissue into square windows and record which window each cell lies in,
 * as squidpy's `tl.sliding_window` stores it. Windows start at the lowest x and y of the cells (of each
 * library) every `window_size - overlap` units, x outer and y inner, and end `window_size` later, clipped
 * to the cells' extent (or dropped when `drop_partial_windows`). Bounds are inclusive on both sides.
 *
 * - `overlap == 0`: one ordered categorical obs column `{sliding_window_key}` with `{library}_window_{i}`
 *   (no prefix without a library key); a cell on a shared edge goes to the later window, as squidpy's
 *   loop assigns it last; categories are the windows that hold cells, ordered by `i` (ties between
 *   libraries in the order cells first show them).
 * - `overlap > 0`: one boolean obs column per window, `{sliding_window_key}_{library}_window_{i}`.
 *
 * The coordinates used are also written as obs `{x}` and `{y}` (`coord_columns`), as squidpy does.
 */
import { strings } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import { type Column, columnValue } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { spatialCoords, tableOf } from "./inputs.js";

/** An obs column name. @maxLength 256 */
export type ObsColumnName = string;

/** Parameters of `sliding_window`. */
export interface SlidingWindowParams {
  /**
   * Categorical obs column of the libraries (slides): windows are laid out per library.
   * @widget obs_categorical
   * @maxLength 256
   */
  library_key?: string | null;
  /**
   * Side of a window in coordinate units; by default the larger side of the cells' extent // 3.95
   * (squidpy's choice), at least 1.
   * @exclusiveMinimum 0
   */
  window_size?: number | null;
  /**
   * Overlap of consecutive windows (0: each cell in one window; less than window_size).
   * @default 0
   * @minimum 0
   */
  overlap?: number;
  /**
   * obs columns (x, y) holding the coordinates; when absent, the first two columns of obsm
   * `spatial_key` are used (and written to these columns).
   * @default ["globalX", "globalY"]
   * @minItems 2
   * @maxItems 2
   */
  coord_columns?: ObsColumnName[];
  /**
   * Name (overlap 0) or prefix (overlap > 0) of the obs column(s) written.
   * @default "sliding_window_assignment"
   * @maxLength 256
   */
  sliding_window_key?: string;
  /**
   * obsm key of the spatial coordinates.
   * @default "spatial"
   * @widget obsm_key
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * Drop the border windows smaller than window_size instead of clipping them.
   * @default false
   */
  drop_partial_windows?: boolean;
}

/** One window: inclusive bounds. */
interface Window {
  readonly x0: number;
  readonly x1: number;
  readonly y0: number;
  readonly y1: number;
}

/** numpy's `arange(start, stop, step)` for floats: ceil((stop - start) / step) values start + k·step. */
function arange(start: number, stop: number, step: number): number[] {
  const n = Math.max(0, Math.ceil((stop - start) / step));
  return Array.from({ length: n }, (_, k) => start + k * step);
}

/** The windows covering [minX, maxX] × [minY, maxY] in squidpy's order (x outer, y inner). */
export function windowCorners(
  minX: number,
  maxX: number,
  minY: number,
  maxY: number,
  size: number,
  overlap: number,
  dropPartial: boolean,
): Window[] {
  const step = size - overlap;
  const out: Window[] = [];
  for (const x0 of arange(minX, maxX, step))
    for (const y0 of arange(minY, maxY, step)) {
      const x1 = x0 + size;
      const y1 = y0 + size;
      if (dropPartial) {
        if (x1 <= maxX && y1 <= maxY) out.push({ x0, x1, y0, y1 });
      } else out.push({ x0, x1: Math.min(x1, maxX), y0, y1: Math.min(y1, maxY) });
    }
  return out;
}

/**
 * Assign every cell to square windows over the tissue (squidpy's `tl.sliding_window`), for analyses of
 * local composition that need spatially contiguous regions of a fixed size.
 */
export async function sliding_window(
  sd: SpatialData,
  params: SlidingWindowParams,
  ctx: OpContext,
): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  const overlap = params.overlap ?? 0;
  if (!(overlap >= 0)) throw new Error("sliding_window: overlap must be non-negative");
  const [xCol, yCol] = (params.coord_columns ?? ["globalX", "globalY"]) as [string, string];
  const key = params.sliding_window_key ?? "sliding_window_assignment";
  const n = t.obs.index.values.length;
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  const obsX = Object.hasOwn(t.obs.columns, xCol) ? t.obs.columns[xCol] : undefined;
  const obsY = Object.hasOwn(t.obs.columns, yCol) ? t.obs.columns[yCol] : undefined;
  if (obsX && obsY) {
    for (let i = 0; i < n; i++) {
      xs[i] = Number(columnValue(obsX, i));
      ys[i] = Number(columnValue(obsY, i));
    }
  } else {
    const { coords, dim } = await spatialCoords(t, ctx.table, params.spatial_key ?? "spatial");
    for (let i = 0; i < n; i++) {
      xs[i] = coords[i * dim] as number;
      ys[i] = coords[i * dim + 1] as number;
    }
  }
  let size = params.window_size ?? null;
  if (size === null) {
    let x0 = Infinity;
    let x1 = -Infinity;
    let y0 = Infinity;
    let y1 = -Infinity;
    for (let i = 0; i < n; i++) {
      x0 = Math.min(x0, xs[i]!);
      x1 = Math.max(x1, xs[i]!);
      y0 = Math.min(y0, ys[i]!);
      y1 = Math.max(y1, ys[i]!);
    }
    size = Math.max(Math.floor(Math.max(x1 - x0, y1 - y0) / 3.95), 1);
  }
  if (!(size > 0)) throw new Error("sliding_window: window_size must be larger than 0");
  if (overlap >= size)
    throw new Error(`sliding_window: overlap (${overlap}) must be less than window_size (${size})`);

  // Libraries in the order their first cell appears (pandas' unique()).
  let libOf: (i: number) => string | null = () => null;
  const libraries: (string | null)[] = [];
  if (params.library_key != null) {
    const lk = params.library_key;
    const col = Object.hasOwn(t.obs.columns, lk) ? t.obs.columns[lk] : undefined;
    if (!col) throw new Error(`sliding_window: library key "${lk}" is not an obs column`);
    libOf = (i) => String(columnValue(col, i));
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const l = libOf(i)!;
      if (!seen.has(l)) {
        seen.add(l);
        libraries.push(l);
      }
    }
  } else libraries.push(null);

  const obs: Record<string, Column> = {};
  const assigned = new Int32Array(n).fill(-1); // overlap 0: label index per cell
  const labels: string[] = [];
  const labelWindow: number[] = [];
  for (const lib of libraries) {
    const rows: number[] = [];
    for (let i = 0; i < n; i++) if (lib === null || libOf(i) === lib) rows.push(i);
    let minX = Infinity;
    let maxX = -Infinity;
    let minY = Infinity;
    let maxY = -Infinity;
    for (const i of rows) {
      minX = Math.min(minX, xs[i]!);
      maxX = Math.max(maxX, xs[i]!);
      minY = Math.min(minY, ys[i]!);
      maxY = Math.max(maxY, ys[i]!);
    }
    const windows = windowCorners(
      minX,
      maxX,
      minY,
      maxY,
      size,
      overlap,
      params.drop_partial_windows ?? false,
    );
    const prefix = lib === null ? "" : `${lib}_`;
    windows.forEach((w, idx) => {
      const label = `${prefix}window_${idx}`;
      const inside = (i: number) => xs[i]! >= w.x0 && xs[i]! <= w.x1 && ys[i]! >= w.y0 && ys[i]! <= w.y1;
      if (overlap === 0) {
        const li = labels.length;
        labels.push(label);
        labelWindow.push(idx);
        for (const i of rows) if (inside(i)) assigned[i] = li;
      } else {
        const flags = new Uint8Array(n);
        for (const i of rows) if (inside(i)) flags[i] = 1;
        obs[`${key}_${label}`] = { kind: "dense", dtype: "bool", shape: [n], data: flags };
      }
    });
  }
  if (overlap === 0) {
    // Categories: windows holding cells, in order of first appearance, then stably by window number.
    const order: number[] = [];
    const seen = new Set<number>();
    for (let i = 0; i < n; i++) {
      const li = assigned[i]!;
      if (li >= 0 && !seen.has(li)) {
        seen.add(li);
        order.push(li);
      }
    }
    order.sort((a, b) => labelWindow[a]! - labelWindow[b]!);
    const code = new Map(order.map((li, c) => [li, c]));
    const codes = Int32Array.from(assigned, (li) => (li >= 0 ? code.get(li)! : -1));
    obs[key] = {
      kind: "categorical",
      codes,
      categories: strings(order.map((li) => labels[li]!)),
      ordered: true,
    };
  }
  obs[xCol] = { kind: "dense", dtype: "float64", shape: [n], data: xs };
  obs[yCol] = { kind: "dense", dtype: "float64", shape: [n], data: ys };
  return { tables: { [ctx.table]: { obs } } };
}

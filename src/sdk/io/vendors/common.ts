/** What every vendor reader shares: the result shape, progress/log callbacks, region tables and circles. */
import { dense, type StringArray, strings } from "../../data/arrays.js";
import { type Column, dataFrame, nRows, withColumn } from "../../data/dataframe.js";
import type { ShapesElement } from "../../data/elements.js";
import { rangeStrings, stringCount } from "../../data/lazy-strings.js";
import type { SpatialData } from "../../data/spatialdata.js";
import { makeTable, type Table } from "../../data/table.js";
import type { Transformation } from "../../data/transforms.js";
import type { ImageRecipes } from "./image-recipe.js";

/** Progress (fraction 0–1, message) and log lines a reader reports; both optional. */
export interface ReaderReport {
  readonly progress?: (fraction: number, message?: string) => void;
  readonly log?: (line: string) => void;
  readonly signal?: AbortSignal;
}

/** What a vendor reader gives. */
export interface VendorResult {
  readonly sdata: SpatialData;
  readonly warnings: string[];
  /** Reader that read it (`io.visium` …). */
  readonly reader: string;
  /** How each image was opened, so a copy read in a worker can reopen them on the main thread. */
  readonly images?: ImageRecipes;
}

/** A one-category categorical column of `n` rows (the `region` column of a single-region table). */
export function constantCategorical(value: string, n: number): Column {
  return { kind: "categorical", codes: new Int32Array(n), categories: strings([value]), ordered: false };
}

/** Rows × 2 float64 matrix from x and y columns (obsm `spatial`). */
export function xyMatrix(x: ArrayLike<number>, y: ArrayLike<number>) {
  const n = x.length;
  const out = new Float64Array(n * 2);
  for (let i = 0; i < n; i++) {
    out[2 * i] = x[i]!;
    out[2 * i + 1] = y[i]!;
  }
  return dense(out, [n, 2]);
}

/**
 * Annotate `table` as SpatialData's region table of element `region`: a `region` categorical column,
 * an integer instance column `instanceKey` (unless present) and obsm `spatial`.
 */
export function regionTable(
  table: Table,
  region: string,
  instanceKey: string,
  instanceIds: Column,
  spatial: ReturnType<typeof xyMatrix> | null,
): Table {
  let obs = withColumn(table.obs, "region", constantCategorical(region, nRows(table.obs)));
  if (!(instanceKey in obs.columns)) obs = withColumn(obs, instanceKey, instanceIds);
  return makeTable({
    X: table.X,
    obs,
    var: table.var,
    obsm: spatial ? { ...table.obsm, spatial } : table.obsm,
    annotation: { region, regionKey: "region", instanceKey },
  });
}

/** A circles shapes element: centres `x,y`, radii, an index of instance ids. */
export function circles(
  name: string,
  ids: readonly string[] | StringArray,
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  radius: Float64Array,
  transformations: Record<string, Transformation>,
): ShapesElement {
  const n = Array.isArray(ids) ? ids.length : stringCount(ids as StringArray);
  const coords = new Float64Array(n * 2);
  for (let i = 0; i < n; i++) {
    coords[2 * i] = x[i]!;
    coords[2 * i + 1] = y[i]!;
  }
  return {
    kind: "shapes",
    name,
    transformations,
    geometry: { type: "point", coords },
    frame: dataFrame(ids, { radius: dense(radius) }, "_index"),
  };
}

/**
 * `0 … n-1` as a string index (pandas' RangeIndex, written as integers): a range-backed array, no
 * string per row (50 M transcripts would otherwise be 50 M strings).
 */
export function rangeIds(n: number): StringArray {
  return rangeStrings(n);
}

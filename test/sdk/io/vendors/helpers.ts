/** Test helpers for the vendor readers: a dense row of a CSR table, an element's bounds in a system. */
import { applyToPoint } from "../../../../src/sdk/data/affine.js";
import type { SparseMatrix } from "../../../../src/sdk/data/arrays.js";
import type { SpatialElement } from "../../../../src/sdk/data/elements.js";
import { levelSize } from "../../../../src/sdk/data/elements.js";
import { type SpatialData, transformTo } from "../../../../src/sdk/data/spatialdata.js";
import type { Table } from "../../../../src/sdk/data/table.js";

/** Value of X[row, col] of a CSR table. */
export function xAt(t: Table, row: number, col: number): number {
  const X = t.X as SparseMatrix;
  for (let p = X.indptr[row]!; p < X.indptr[row + 1]!; p++)
    if (X.indices[p] === col) return Number(X.data[p]);
  return 0;
}

/** Sum of row `row` of a CSR table. */
export function rowSum(t: Table, row: number): number {
  const X = t.X as SparseMatrix;
  let s = 0;
  for (let p = X.indptr[row]!; p < X.indptr[row + 1]!; p++) s += Number(X.data[p]);
  return s;
}

/** Where a point in element `from`'s own space lands in image `image`'s pixel space (through `system`). */
export function toImagePixels(
  sd: SpatialData,
  from: SpatialElement,
  image: SpatialElement,
  system: string,
  x: number,
  y: number,
): [number, number] {
  const fwd = transformTo(sd, from, system, ["x", "y"]);
  const img = transformTo(sd, image, system, ["x", "y"]);
  const [wx, wy] = applyToPoint(fwd, x, y);
  // Invert the image's (axis-aligned) placement.
  const sx = img[0]![0]!;
  const sy = img[1]![1]!;
  return [(wx - img[0]![2]!) / sx, (wy - img[1]![2]!) / sy];
}

/** Width and height of an image's finest level. */
export function imageSize(el: SpatialElement): { width: number; height: number } {
  if (el.kind !== "image" && el.kind !== "labels") throw new Error("not a raster");
  return levelSize(el.axes, el.levels[0]!.shape);
}

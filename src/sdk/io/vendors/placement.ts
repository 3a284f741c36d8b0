/**
 * Coordinate transformations the vendor readers give their elements, always with named input and
 * output systems (as spatialdata writes them), over the `x,y` axes for shapes and points and the
 * image's own axes (`c,y,x`) for rasters, so a checkpoint written from them reads back the same.
 */
import { defaultAxes, type Transformation } from "../../data/transforms.js";

const XY = defaultAxes(["x", "y"]);

/** Identity from an element's own `x,y` space into system `cs`. */
export function identityXY(element: string, cs: string): Transformation {
  return { type: "identity", input: { name: element, axes: XY }, output: { name: cs, axes: XY } };
}

/**
 * A 2-D affine `[[a, b, tx], [c, d, ty]]` (x' = a·x + b·y + tx) from `x,y` space into `cs`, stored as
 * NGFF writes it: one row per output axis, without the homogeneous `[0, 0, 1]` row (spatialdata adds
 * it when reading, and refuses a matrix that already has it).
 */
export function affineXY(element: string, cs: string, m: readonly (readonly number[])[]): Transformation {
  return {
    type: "affine",
    affine: [[...m[0]!], [...m[1]!]],
    input: { name: element, axes: XY },
    output: { name: cs, axes: XY },
  };
}

/**
 * A 2-D affine `[[a, b, tx], [c, d, ty]]` (x' = a·x + b·y + tx) of an element with axes `axes` (a
 * raster's `c,y,x` or `y,x`) into `cs`, written over the element's own axes — other axes pass through —
 * so readers that check the matrix against the element's axes (spatialdata) accept it.
 */
export function affineOn(
  axes: readonly string[],
  element: string,
  cs: string,
  m: readonly (readonly number[])[],
): Transformation {
  const own = defaultAxes(axes);
  const n = axes.length;
  const xi = axes.indexOf("x");
  const yi = axes.indexOf("y");
  const rows: number[][] = [];
  // One row per output axis, no homogeneous last row: NGFF's (and spatialdata's) on-disk form.
  for (let i = 0; i < n; i++) {
    const row = new Array<number>(n + 1).fill(0);
    if (i === xi || i === yi) {
      const r = m[i === xi ? 0 : 1]!;
      row[xi] = r[0]!;
      row[yi] = r[1]!;
      row[n] = r[2]!;
    } else row[i] = 1;
    rows.push(row);
  }
  return {
    type: "affine",
    affine: rows,
    input: { name: element, axes: own },
    output: { name: cs, axes: own },
  };
}

/** A per-axis scale (`sx`, `sy`; 1 on any other axis) of an element with axes `axes` into `cs`. */
export function scaleOn(
  axes: readonly string[],
  element: string,
  cs: string,
  sx: number,
  sy: number,
): Transformation {
  const own = defaultAxes(axes);
  return {
    type: "scale",
    scale: axes.map((a) => (a === "x" ? sx : a === "y" ? sy : 1)),
    input: { name: element, axes: own },
    output: { name: cs, axes: own },
  };
}

/** Identity of an element with axes `axes` into `cs`. */
export function identityOn(axes: readonly string[], element: string, cs: string): Transformation {
  const own = defaultAxes(axes);
  return { type: "identity", input: { name: element, axes: own }, output: { name: cs, axes: own } };
}

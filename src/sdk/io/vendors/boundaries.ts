/**
 * Segmentation boundaries written as vertex lists (one row per vertex: id, x, y; rows of one polygon
 * consecutive), as Xenium and CosMx write them, into polygon shapes. A polygon is closed if its file
 * did not close it.
 */
import { strings } from "../../data/arrays.js";
import { dataFrame } from "../../data/dataframe.js";
import type { ShapesElement } from "../../data/elements.js";
import type { Transformation } from "../../data/transforms.js";
import { DataError } from "../data-error.js";

/** Build polygons from per-vertex rows grouped by consecutive equal ids. */
export function polygonsFromVertices(
  name: string,
  ids: readonly string[],
  x: Float64Array,
  y: Float64Array,
  transformations: Record<string, Transformation>,
  where: string,
): ShapesElement {
  const n = ids.length;
  const starts: number[] = [];
  const names: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    if (i === 0 || ids[i] !== ids[i - 1]) {
      if (seen.has(ids[i]!))
        throw new DataError(`${where}: the vertices of "${ids[i]}" are not consecutive (row ${i + 1})`);
      seen.add(ids[i]!);
      starts.push(i);
      names.push(ids[i]!);
    }
  }
  starts.push(n);
  const nPoly = names.length;
  // Room for closing every ring.
  const coords = new Float64Array((n + nPoly) * 2);
  const ringOffsets = new Int32Array(nPoly + 1);
  let at = 0;
  for (let p = 0; p < nPoly; p++) {
    const s = starts[p]!;
    const e = starts[p + 1]!;
    if (e - s < 3) throw new DataError(`${where}: polygon "${names[p]}" has ${e - s} vertices (at least 3)`);
    for (let i = s; i < e; i++) {
      coords[2 * at] = x[i]!;
      coords[2 * at + 1] = y[i]!;
      at++;
    }
    if (x[s] !== x[e - 1] || y[s] !== y[e - 1]) {
      coords[2 * at] = x[s]!;
      coords[2 * at + 1] = y[s]!;
      at++;
    }
    ringOffsets[p + 1] = at;
  }
  const geomOffsets = Int32Array.from({ length: nPoly + 1 }, (_, i) => i);
  return {
    kind: "shapes",
    name,
    transformations,
    geometry: { type: "polygon", coords: coords.slice(0, at * 2), geomOffsets, ringOffsets },
    frame: dataFrame(strings(names), {}, "cell_id"),
  };
}

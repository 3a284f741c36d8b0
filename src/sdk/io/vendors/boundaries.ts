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
import { openParquetStream, putNumbers, textOf } from "./parquet-stream.js";

/** Build polygons from per-vertex rows grouped by consecutive equal ids. */
export function polygonsFromVertices(
  name: string,
  ids: readonly string[],
  x: Float64Array,
  y: Float64Array,
  transformations: Record<string, Transformation>,
  where: string,
): ShapesElement {
  const runs = new RunBuilder(where);
  for (let i = 0; i < ids.length; i++) if (i === 0 || ids[i] !== ids[i - 1]) runs.start(i, ids[i]!);
  return polygonsFromRuns(name, runs, ids.length, x, y, transformations, where);
}

/**
 * Polygons from a parquet vertex file (`id`, `x`, `y` columns) read a row group at a time: the ids
 * are compared as bytes and decoded only where a polygon starts, so no string per vertex is kept.
 */
export async function polygonsFromVertexFile(
  name: string,
  file: string,
  columns: { readonly id: string; readonly x: string; readonly y: string },
  transformations: Record<string, Transformation>,
  signal?: AbortSignal,
): Promise<ShapesElement> {
  const stream = await openParquetStream(file);
  const n = stream.nRows;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  const runs = new RunBuilder(file);
  let prev: unknown;
  await stream.forEachChunk(
    [columns.id, columns.x, columns.y],
    (col, values, rowStart) => {
      if (col === columns.x) putNumbers(x, values, rowStart);
      else if (col === columns.y) putNumbers(y, values, rowStart);
      else {
        for (let i = 0; i < values.length; i++) {
          const v = (values as ArrayLike<unknown>)[i];
          if (rowStart + i === 0 || !sameValue(v, prev)) runs.start(rowStart + i, textOf(v));
          prev = v;
        }
      }
    },
    signal,
  );
  return polygonsFromRuns(name, runs, n, x, y, transformations, file);
}

/** Whether two decoded values (UTF-8 bytes, strings, numbers) are equal. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  return false;
}

/** Where each polygon's rows start and its id, checking that a polygon's rows are consecutive. */
class RunBuilder {
  readonly starts: number[] = [];
  readonly names: string[] = [];
  private readonly seen = new Set<string>();
  constructor(private readonly where: string) {}

  start(row: number, id: string): void {
    if (this.seen.has(id))
      throw new DataError(`${this.where}: the vertices of "${id}" are not consecutive (row ${row + 1})`);
    this.seen.add(id);
    this.starts.push(row);
    this.names.push(id);
  }
}

/** Polygons (closed where the file did not close them) from runs of vertex rows. */
function polygonsFromRuns(
  name: string,
  runs: RunBuilder,
  n: number,
  x: Float64Array,
  y: Float64Array,
  transformations: Record<string, Transformation>,
  where: string,
): ShapesElement {
  const starts = runs.starts;
  const names = runs.names;
  const nPoly = names.length;
  // Room for closing every ring.
  const coords = new Float64Array((n + nPoly) * 2);
  const ringOffsets = new Int32Array(nPoly + 1);
  let at = 0;
  for (let p = 0; p < nPoly; p++) {
    const s = starts[p]!;
    const e = p + 1 < nPoly ? starts[p + 1]! : n;
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

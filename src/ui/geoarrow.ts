/**
 * GeoArrow boundary payloads (`geoarrow.polygon` or `geoarrow.multipolygon`, separated x/y
 * coordinates) flattened for deck.gl's binary polygon and path layers: the outer ring of every
 * polygon, interleaved, with the cell row of its feature.
 */
import { type Data, type Table, tableFromIPC } from "apache-arrow";
import type { PolygonData } from "./data-source.js";

function offsets(d: Data): Int32Array {
  return d.valueOffsets as unknown as Int32Array;
}

/** Flatten a GeoArrow boundary table. */
export function polygonsFromTable(t: Table): PolygonData {
  const geomVec = t.getChild("geometry");
  const cellVec = t.getChild("cell_index");
  const n = t.numRows;
  if (!geomVec || n === 0)
    return {
      length: 0,
      startIndices: new Int32Array(1),
      positions: new Float64Array(0),
      cellIndex: new Int32Array(0),
      features: 0,
    };
  const cells = cellVec ? (cellVec.toArray() as Int32Array) : new Int32Array(n).fill(-1);
  const field = t.schema.fields.find((f) => f.name === "geometry");
  const isMulti = field?.metadata.get("ARROW:extension:name") === "geoarrow.multipolygon";
  const ringStarts: number[] = [];
  const ringCells: number[] = [];
  const coords: number[] = [];
  let features = 0;
  for (const data of geomVec.data) {
    const featOff = offsets(data);
    const lvl1 = data.children[0]!;
    const off1 = offsets(lvl1);
    const lvl2 = lvl1.children[0]!;
    // lvl2 is rings (multi) or the vertex struct (polygon).
    const ringOff = isMulti ? offsets(lvl2) : off1;
    const verts = isMulti ? lvl2.children[0]! : lvl2;
    const xs = verts.children[0]!.values as Float64Array;
    const ys = verts.children[1]!.values as Float64Array;
    const rowBase = features;
    for (let f = 0; f < data.length; f++) {
      const cell = cells[rowBase + f] ?? -1;
      const p0 = featOff[data.offset + f]!;
      const p1 = featOff[data.offset + f + 1]!;
      const polys: number[] = [];
      if (isMulti) {
        for (let p = p0; p < p1; p++) polys.push(off1[p]!);
      } else if (p1 > p0) polys.push(p0);
      for (const ring of polys) {
        const v0 = ringOff[ring]!;
        const v1 = ringOff[ring + 1]!;
        if (v1 - v0 < 3) continue;
        ringStarts.push(coords.length / 2);
        ringCells.push(cell);
        for (let v = v0; v < v1; v++) coords.push(xs[v]!, ys[v]!);
      }
    }
    features += data.length;
  }
  ringStarts.push(coords.length / 2);
  return {
    length: ringCells.length,
    startIndices: Int32Array.from(ringStarts),
    positions: Float64Array.from(coords),
    cellIndex: Int32Array.from(ringCells),
    features,
  };
}

/** Flatten GeoArrow IPC bytes. */
export function polygonsFromIpc(bytes: Uint8Array): PolygonData {
  return polygonsFromTable(tableFromIPC(bytes));
}

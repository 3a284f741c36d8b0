/**
 * Boundary polygons as a GeoArrow table of one RecordBatch: `geometry` (extension `geoarrow.polygon`
 * or `geoarrow.multipolygon`, separated coordinates `struct<x: float64, y: float64>`, GeoArrow's
 * `ARROW:extension:name` / `ARROW:extension:metadata` field metadata) and `cell_index` (int32, the
 * cell's row in the active table or -1). The nested list fields are named `polygons`, `rings` and
 * `vertices` as in GeoArrow's examples.
 */
import {
  type Data,
  Field,
  Float64,
  Int32,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
} from "apache-arrow";
import type { CanvasShapes } from "../../data/shape-index.js";

const POINT = () => new Struct([new Field("x", new Float64(), false), new Field("y", new Float64(), false)]);

/** Gather `ids`' parts: new offsets into compacted children, and the child ids in order. */
function gather(offsets: Int32Array, ids: ArrayLike<number>): { offsets: Int32Array; children: Int32Array } {
  const out = new Int32Array(ids.length + 1);
  let total = 0;
  for (let i = 0; i < ids.length; i++) {
    total += offsets[ids[i]! + 1]! - offsets[ids[i]!]!;
    out[i + 1] = total;
  }
  const children = new Int32Array(total);
  for (let i = 0, o = 0; i < ids.length; i++)
    for (let k = offsets[ids[i]!]!; k < offsets[ids[i]! + 1]!; k++) children[o++] = k;
  return { offsets: out, children };
}

/** The features `ids` of `s` (in that order) as a GeoArrow table. */
export function geoArrowTable(s: CanvasShapes, ids: Int32Array, crs?: string): Table {
  const point = POINT();
  const ring = new List(new Field("vertices", point, false));
  const poly = new List(new Field("rings", ring, false));
  const multi = new List(new Field("polygons", poly, false));
  // Feature → polygons → rings → vertices, each level compacted to the chosen features.
  let polyIds: Int32Array = ids;
  let featureOffsets: Int32Array | null = null;
  if (s.polygonOffsets) {
    const g = gather(s.geomOffsets, ids);
    featureOffsets = g.offsets;
    polyIds = g.children;
  }
  const r = gather(s.polygonOffsets ?? s.geomOffsets, polyIds);
  const v = gather(s.ringOffsets, r.children);
  const nv = v.children.length;
  const xs = new Float64Array(nv);
  const ys = new Float64Array(nv);
  const src = s.coords;
  for (let k = 0; k < nv; k++) {
    const at = 2 * v.children[k]!;
    xs[k] = src[at]!;
    ys[k] = src[at + 1]!;
  }
  const pointData = makeData({
    type: point,
    length: nv,
    nullCount: 0,
    children: [
      makeData({ type: new Float64(), length: nv, nullCount: 0, data: xs }),
      makeData({ type: new Float64(), length: nv, nullCount: 0, data: ys }),
    ],
  });
  const ringData = makeData({
    type: ring,
    length: r.children.length,
    nullCount: 0,
    valueOffsets: v.offsets,
    child: pointData,
  });
  const polyData = makeData({
    type: poly,
    length: polyIds.length,
    nullCount: 0,
    valueOffsets: r.offsets,
    child: ringData,
  });
  const geometry: Data = featureOffsets
    ? makeData({
        type: multi,
        length: ids.length,
        nullCount: 0,
        valueOffsets: featureOffsets,
        child: polyData,
      })
    : polyData;
  const cell = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) cell[i] = s.cellIndex[ids[i]!]!;
  const meta = new Map([
    ["ARROW:extension:name", s.polygonOffsets ? "geoarrow.multipolygon" : "geoarrow.polygon"],
    ["ARROW:extension:metadata", crs ? JSON.stringify({ crs }) : "{}"],
  ]);
  const schema = new Schema([
    new Field("geometry", geometry.type, false, meta),
    new Field("cell_index", new Int32(), false),
  ]);
  const batch = makeData({
    type: new Struct(schema.fields),
    length: ids.length,
    nullCount: 0,
    children: [geometry, makeData({ type: new Int32(), length: ids.length, nullCount: 0, data: cell })],
  });
  return new Table(schema, [new RecordBatch(schema, batch)]);
}

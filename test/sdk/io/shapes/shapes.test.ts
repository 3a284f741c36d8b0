import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import { afterAll, describe, expect, it } from "vitest";
import { allocArray, type DenseArray, dense, strings } from "../../../../src/sdk/data/arrays.js";
import { columnValue, dataFrame } from "../../../../src/sdk/data/dataframe.js";
import type { ShapesElement } from "../../../../src/sdk/data/elements.js";
import { openParquet } from "../../../../src/sdk/io/parquet/source.js";
import { readGeoParquet, readShapes } from "../../../../src/sdk/io/shapes/read.js";
import { writeShapes } from "../../../../src/sdk/io/shapes/write.js";
import { fixture } from "../../../fixtures.js";

const BLOBS = fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr");

async function attrsOf(root: string, path: string): Promise<Record<string, unknown>> {
  const v3 = join(root, path, "zarr.json");
  if (existsSync(v3)) return JSON.parse(await readFile(v3, "utf8")).attributes ?? {};
  return JSON.parse(await readFile(join(root, path, ".zattrs"), "utf8"));
}

async function load(root: string, path: string, name: string): Promise<ShapesElement> {
  return readShapes(new FileSystemStore(root), path, await attrsOf(root, path), name);
}

const temps: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "tessera-shapes-"));
  temps.push(d);
  return d;
}
afterAll(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
});

describe("readShapes: GeoParquet (spatialdata 0.2/0.3)", () => {
  it("reads blobs_circles: 5 points with a radius column", async () => {
    const s = await load(BLOBS, "/shapes/blobs_circles", "blobs_circles");
    expect(s.geometry.type).toBe("point");
    expect(s.frame.index.values).toEqual(["0", "1", "2", "3", "4"]);
    expect([...s.geometry.coords.subarray(0, 2)]).toEqual([291.0621919542923, 197.0653987235508]);
    expect([...s.geometry.coords.subarray(8, 10)]).toEqual([369.4223630265261, 258.89985352047654]);
    const r = s.frame.columns.radius as DenseArray;
    expect(r.dtype).toBe("int64");
    expect([...r.data]).toEqual([51n, 51n, 51n, 51n, 51n]);
    expect(s.transformations.global?.type).toBe("identity");
  });

  it("reads blobs_polygons: 5 closed polygons", async () => {
    const s = await load(BLOBS, "/shapes/blobs_polygons", "blobs_polygons");
    const g = s.geometry;
    expect(g.type).toBe("polygon");
    expect(g.geomOffsets!.length).toBe(6);
    expect(s.frame.columnOrder).toEqual([]);
    const c = g.coords;
    expect([c[0], c[1]]).toEqual([340.19706792551693, 258.2137207064104]);
    const end0 = g.ringOffsets![g.geomOffsets![1]!]!;
    expect([c[2 * end0 - 2], c[2 * end0 - 1]]).toEqual([340.19706792551693, 258.2137207064104]);
    const start4 = g.ringOffsets![g.geomOffsets![4]!]!;
    expect([c[2 * start4], c[2 * start4 + 1]]).toEqual([446.7026437060826, 349.43323965542385]);
    expect([c[c.length - 2], c[c.length - 1]]).toEqual([446.7026437060826, 349.43323965542385]);
  });

  it("reads blobs_multipolygons: 2 multipolygons", async () => {
    const s = await load(BLOBS, "/shapes/blobs_multipolygons", "blobs_multipolygons");
    const g = s.geometry;
    expect(g.type).toBe("multipolygon");
    expect(g.geomOffsets!.length).toBe(3);
    expect(g.polygonOffsets!.length - 1).toBeGreaterThanOrEqual(2);
    expect([g.coords[0], g.coords[1]]).toEqual([340.19706792551693, 258.2137207064104]);
    const p1 = g.polygonOffsets![g.geomOffsets![1]!]!;
    const v1 = g.ringOffsets![p1]!;
    expect([g.coords[2 * v1], g.coords[2 * v1 + 1]]).toEqual([338.447515414522, 287.94124284032443]);
    expect([g.coords[g.coords.length - 2], g.coords[g.coords.length - 1]]).toEqual([
      360.6845468257139, 348.29683359695593,
    ]);
  });

  it("reads MERSCOPE GeoParquet 0.1.0 (sfarrow) with exact int64 EntityIDs", async () => {
    const dir = fixture("sfe-toy/vizgen_cellbound");
    const {
      geometry: g,
      frame,
      geo,
    } = await readGeoParquet(new FileSystemStore(dir), "/cell_boundaries.parquet");
    expect(geo.version).toBe("0.1.0");
    expect(geo.primaryColumn).toBe("Geometry");
    expect(g.type).toBe("polygon");
    expect(frame.index.values.length).toBe(1058);
    expect(frame.index.values[0]).toBe("802"); // R-mangled X__index_level_0__
    const ids = frame.columns.EntityID as DenseArray<BigInt64Array>;
    expect(ids.data[0]!.toString()).toBe("112824700230101249");
    expect(ids.data[1057]).toBe(112824700330100974n);
    // Cross-checked with h5py on cell_boundaries/feature_data_z2_z3_1.hdf5 (zIndex_3/p_0/coordinates):
    expect(g.ringOffsets![g.geomOffsets![1]!]! - g.ringOffsets![0]!).toBe(6);
    expect([g.coords[0], g.coords[1], g.coords[2], g.coords[3]]).toEqual([
      6767.242898810655, 1200.7751910534614, 6765.898615435415, 1201.0733677690582,
    ]);
    const last = g.ringOffsets![g.geomOffsets![1057]!]!;
    expect(g.ringOffsets![g.geomOffsets![1058]!]! - last).toBe(7);
    expect([g.coords[g.coords.length - 4], g.coords[g.coords.length - 3]]).toEqual([6795.592761807188, 1500]);
    expect(columnValue(frame.columns.Type!, 0)).toBe("cell");
  });

  it("reads the Cellpose MultiPolygon GeoParquet", async () => {
    const dir = fixture("sfe-toy/vizgen_cellbound_Cellpose/Cellpose");
    const { geometry: g, frame } = await readGeoParquet(
      new FileSystemStore(dir),
      "/cellpose_micron_space.parquet",
    );
    expect(g.type).toBe("multipolygon");
    expect(g.geomOffsets!.length).toBe(1059);
    expect(g.polygonOffsets!.length - 1).toBe(1059); // one feature has two polygons
    expect([g.coords[0], g.coords[1]]).toEqual([6767.242898810655, 1200.7751910534614]);
    expect((frame.columns.EntityID as DenseArray).data[0]).toBe(112824700230101249n);
  });

  it("rejects non-GeoParquet and geoarrow-encoded files clearly", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "shapes/x"), { recursive: true });
    const pts = await readFile(join(BLOBS, "points/blobs_points/points.parquet/part.0.parquet"));
    await writeFile(join(dir, "shapes/x/shapes.parquet"), pts);
    await expect(
      readShapes(new FileSystemStore(dir), "/shapes/x", { spatialdata_attrs: { version: "0.3" } }, "x"),
    ).rejects.toThrow(/\/shapes\/x\/shapes\.parquet: not GeoParquet/);
  });
});

/** Write a zarr v2 array as zarr-python 2 does (one uncompressed chunk). */
async function v2Array(
  dir: string,
  name: string,
  shape: number[],
  dtype: string,
  bytes: Uint8Array,
  filters: unknown = null,
) {
  await mkdir(join(dir, name), { recursive: true });
  const zarray = {
    chunks: shape,
    compressor: null,
    dtype,
    fill_value: dtype === "|O" ? 0 : 0.0,
    filters,
    order: "C",
    shape,
    zarr_format: 2,
  };
  await writeFile(join(dir, name, ".zarray"), JSON.stringify(zarray));
  await writeFile(join(dir, name, shape.map(() => "0").join(".")), bytes);
}
const f8 = (v: number[]) => new Uint8Array(new Float64Array(v).buffer);
const i8 = (v: number[]) => new Uint8Array(new BigInt64Array(v.map(BigInt)).buffer);
function vlen(values: string[]): Uint8Array {
  const enc = values.map((s) => new TextEncoder().encode(s));
  const out = new Uint8Array(4 + enc.reduce((n, e) => n + 4 + e.length, 0));
  const view = new DataView(out.buffer);
  view.setUint32(0, values.length, true);
  let o = 4;
  for (const e of enc) {
    view.setUint32(o, e.length, true);
    out.set(e, o + 4);
    o += 4 + e.length;
  }
  return out;
}

describe("readShapes: format 0.1 (zarr arrays, spatialdata ≤ 0.0.15)", () => {
  // Layout from spatialdata 0.0.x io_shapes.py: shapely.to_ragged_array → coords (n,2) f8,
  // offset0 = ring→vertex, offset1 = polygon→ring (or feature→ring), offset2 = feature→polygon (i8),
  // Index (int or vlen-utf8 strings), radius for points; attrs spatialdata_attrs.geos {name, type}.
  const ct = [
    {
      type: "identity",
      input: { name: "xy", axes: [{ name: "x" }, { name: "y" }] },
      output: { name: "global", axes: [{ name: "x" }, { name: "y" }] },
    },
  ];
  const attrs = (name: string, type: number) => ({
    axes: ["x", "y"],
    coordinateTransformations: ct,
    "encoding-type": "ngff:shapes",
    spatialdata_attrs: { geos: { name, type }, version: "0.1" },
  });

  it("reads circles, polygons (with a hole, string index) and multipolygons", async () => {
    const root = await tempDir();
    await writeFile(join(root, ".zgroup"), JSON.stringify({ zarr_format: 2 }));
    const c = join(root, "shapes/circles");
    await v2Array(c, "coords", [3, 2], "<f8", f8([1, 2, 3.5, 4.5, -1, 0]));
    await v2Array(c, "Index", [3], "<i8", i8([10, 20, 30]));
    await v2Array(c, "radius", [3], "<f8", f8([1, 2, 0.5]));
    const p = join(root, "shapes/polys");
    const pc = [0, 0, 4, 0, 4, 4, 0, 4, 0, 0, 1, 1, 2, 1, 2, 2, 1, 1, 10, 10, 11, 10, 11, 11, 10, 10];
    await v2Array(p, "coords", [13, 2], "<f8", f8(pc));
    await v2Array(p, "offset0", [4], "<i8", i8([0, 5, 9, 13]));
    await v2Array(p, "offset1", [3], "<i8", i8([0, 2, 3]));
    await v2Array(p, "Index", [2], "|O", vlen(["a", "b"]), [{ id: "vlen-utf8" }]);
    const m = join(root, "shapes/multi");
    const mc = [0, 0, 1, 0, 1, 1, 0, 0, 5, 5, 6, 5, 6, 6, 5, 5, 9, 9, 8, 9, 8, 8, 9, 9];
    await v2Array(m, "coords", [12, 2], "<f8", f8(mc));
    await v2Array(m, "offset0", [4], "<i8", i8([0, 4, 8, 12]));
    await v2Array(m, "offset1", [4], "<i8", i8([0, 1, 2, 3]));
    await v2Array(m, "offset2", [3], "<i8", i8([0, 2, 3]));
    await v2Array(m, "Index", [2], "<i8", i8([0, 1]));
    for (const [dir, a] of [
      [c, attrs("POINT", 0)],
      [p, attrs("POLYGON", 3)],
      [m, attrs("MULTIPOLYGON", 6)],
    ] as const) {
      await writeFile(join(dir, ".zgroup"), JSON.stringify({ zarr_format: 2 }));
      await writeFile(join(dir, ".zattrs"), JSON.stringify(a));
    }
    const store = new FileSystemStore(root);
    const circles = await readShapes(store, "/shapes/circles", attrs("POINT", 0), "circles");
    expect(circles.geometry).toEqual({ type: "point", coords: new Float64Array([1, 2, 3.5, 4.5, -1, 0]) });
    expect(circles.frame.index.values).toEqual(["10", "20", "30"]);
    expect([...(circles.frame.columns.radius as DenseArray).data]).toEqual([1, 2, 0.5]);
    const polys = await readShapes(store, "/shapes/polys", attrs("POLYGON", 3), "polys");
    expect(polys.geometry.type).toBe("polygon");
    expect([...polys.geometry.coords]).toEqual(pc);
    expect([...polys.geometry.geomOffsets!]).toEqual([0, 2, 3]);
    expect([...polys.geometry.ringOffsets!]).toEqual([0, 5, 9, 13]);
    expect(polys.frame.index.values).toEqual(["a", "b"]);
    const multi = await readShapes(store, "/shapes/multi", attrs("MULTIPOLYGON", 6), "multi");
    expect([...multi.geometry.geomOffsets!]).toEqual([0, 2, 3]);
    expect([...multi.geometry.polygonOffsets!]).toEqual([0, 1, 2, 3]);
    expect([...multi.geometry.ringOffsets!]).toEqual([0, 4, 8, 12]);
    expect(multi.transformations.global?.type).toBe("identity");
    // Broken offsets and unknown types are clear errors.
    await expect(readShapes(store, "/shapes/multi", attrs("LINESTRING", 1), "m")).rejects.toThrow(
      /unsupported shapes geometry LineString/,
    );
    await v2Array(m, "offset2", [3], "<i8", i8([0, 2, 9]));
    await expect(readShapes(store, "/shapes/multi", attrs("MULTIPOLYGON", 6), "m")).rejects.toThrow(
      /\/shapes\/multi\/offset2: offsets/,
    );
  });
});

describe("writeShapes", () => {
  for (const name of ["blobs_circles", "blobs_polygons", "blobs_multipolygons"]) {
    it(`round-trips ${name} deep-equal as GeoParquet 1.0.0 (format 0.3)`, async () => {
      const src = await load(BLOBS, `/shapes/${name}`, name);
      const dir = await tempDir();
      const store = new FileSystemStore(dir);
      const key = await writeShapes(store, `/shapes/${name}`, src);
      expect(key).toBe(`/shapes/${name}/shapes.parquet`);
      const zj = JSON.parse(await readFile(join(dir, `shapes/${name}/zarr.json`), "utf8"));
      expect(zj.attributes["encoding-type"]).toBe("ngff:shapes");
      expect(zj.attributes.axes).toEqual(["x", "y"]);
      expect(zj.attributes.spatialdata_attrs).toEqual({ version: "0.3" });
      const pq = await openParquet(store, key);
      const geo = JSON.parse(pq.kv.geo!);
      expect(geo.version).toBe("1.0.0");
      expect(geo.primary_column).toBe("geometry");
      expect(geo.columns.geometry.encoding).toBe("WKB");
      expect(geo.columns.geometry.crs).toBe(null);
      expect(geo.columns.geometry.geometry_types).toEqual([
        { point: "Point", polygon: "Polygon", multipolygon: "MultiPolygon" }[src.geometry.type],
      ]);
      expect(JSON.parse(pq.kv.pandas!).index_columns[0].kind).toBe("range");
      const back = await readShapes(store, `/shapes/${name}`, zj.attributes, name);
      expect(back).toEqual(src);
    });
  }

  it("round-trips a non-range string index and extra columns", async () => {
    const ids = allocArray("int64", 2) as BigInt64Array;
    ids.set([112824700230101249n, 2n]);
    const el: ShapesElement = {
      kind: "shapes",
      name: "cells",
      transformations: { global: { type: "translation", translation: [5, -5] } },
      geometry: {
        type: "polygon",
        coords: new Float64Array([0, 0, 1, 0, 1, 1, 0, 0, 5, 5, 6, 5, 6, 6, 5, 5]),
        geomOffsets: new Int32Array([0, 1, 2]),
        ringOffsets: new Int32Array([0, 4, 8]),
      },
      frame: dataFrame(
        strings(["cell-a", "cell-b"]),
        { EntityID: dense(ids), kind: strings(["x", "y"]) },
        "cell_id",
      ),
    };
    const dir = await tempDir();
    const store = new FileSystemStore(dir);
    await writeShapes(store, "/shapes/cells", el);
    const zj = JSON.parse(await readFile(join(dir, "shapes/cells/zarr.json"), "utf8"));
    const back = await readShapes(store, "/shapes/cells", zj.attributes, "cells");
    expect(back.frame).toEqual(el.frame);
    expect([...back.geometry.coords]).toEqual([...el.geometry.coords]);
    expect(back.transformations.global).toMatchObject({ type: "translation", translation: [5, -5] });
  });
});

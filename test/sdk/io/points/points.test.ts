import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import { afterAll, describe, expect, it } from "vitest";
import {
  allocArray,
  type Categorical,
  type DenseArray,
  dense,
  type StringArray,
  strings,
} from "../../../../src/sdk/data/arrays.js";
import { columnValue, dataFrame } from "../../../../src/sdk/data/dataframe.js";
import type { PointsElement } from "../../../../src/sdk/data/elements.js";
import { rangeStrings, stringAt } from "../../../../src/sdk/data/lazy-strings.js";
import { readPoints } from "../../../../src/sdk/io/points/read.js";
import { writePoints } from "../../../../src/sdk/io/points/write.js";
import { fixture } from "../../../fixtures.js";

/** Group attrs of a v2 (`.zattrs`) or v3 (`zarr.json`) group. */
async function attrsOf(root: string, path: string): Promise<Record<string, unknown>> {
  const v3 = join(root, path, "zarr.json");
  if (existsSync(v3)) return JSON.parse(await readFile(v3, "utf8")).attributes ?? {};
  return JSON.parse(await readFile(join(root, path, ".zattrs"), "utf8"));
}

async function load(root: string, path: string, name: string): Promise<PointsElement> {
  return readPoints(new FileSystemStore(root), path, await attrsOf(root, path), name);
}

const temps: string[] = [];
afterAll(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
});

describe("readPoints", () => {
  it("reads blobs points (spatialdata 0.3, zarr v2, 200 points)", async () => {
    const p = await load(
      fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr"),
      "/points/blobs_points",
      "blobs_points",
    );
    expect(p.kind).toBe("points");
    expect(p.axes).toEqual(["x", "y"]);
    expect(p.featureKey).toBe("genes");
    expect(p.instanceKey).toBe("instance_id");
    expect(p.frame.index.values.length).toBe(200);
    const x = p.frame.columns.x as DenseArray;
    const y = p.frame.columns.y as DenseArray;
    expect([x.data[0], y.data[0], x.data[199], y.data[199]]).toEqual([46n, 395n, 144n, 159n]);
    const genes = p.frame.columns.genes as Categorical;
    expect(genes.categories).toEqual(strings(["gene_a", "gene_b"]));
    expect(Object.keys(p.transformations)).toEqual(["global"]);
    expect(p.transformations.global!.type).toBe("identity");
    expect(p.transformations.global!.input?.name).toBe("xy");
  });

  it("reads the cropped blobs points in v2 (0.3) and v3 (0.7) stores alike", async () => {
    const a = await load(
      fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr"),
      "/points/blobs_points",
      "blobs_points",
    );
    const b = await load(
      fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"),
      "/points/blobs_points",
      "blobs_points",
    );
    for (const p of [a, b]) {
      expect(p.frame.index.values.length).toBe(6);
      expect(p.frame.index.values[0]).toBe("58");
      expect(p.frame.index.values[5]).toBe("192");
      const x = p.frame.columns.x as DenseArray;
      expect([x.data[0], x.data[5]]).toEqual([20n, 17n]);
      expect([columnValue(p.frame.columns.genes!, 0), columnValue(p.frame.columns.genes!, 5)]).toEqual([
        "gene_a",
        "gene_b",
      ]);
      expect(p.featureKey).toBe("genes");
    }
    // These cropped stores name no instance_key (the column is still there).
    expect(a.instanceKey).toBeUndefined();
    expect(b.instanceKey).toBeUndefined();
    expect(b.frame.columnOrder).toEqual(["x", "y", "genes", "instance_id"]);
  });

  it("reads 213 191 Xenium transcripts (x,y,z float32, scale transform)", async () => {
    const root = fixture("vitessce-python-xenium-points/xenium_rep1_io.points_only.spatialdata.zarr");
    const p = await load(root, "/points/transcripts", "transcripts");
    expect(p.axes).toEqual(["x", "y", "z"]);
    expect(p.frame.index.values.length).toBe(213191);
    expect(p.featureKey).toBe("feature_name");
    expect(p.instanceKey).toBe("cell_id");
    const z = p.frame.columns.z as DenseArray;
    expect(z.dtype).toBe("float32");
    expect(z.data[0]).toBeCloseTo(12.019493103027344, 6);
    const t = p.transformations.global!;
    expect(t.type === "scale" && t.scale).toEqual([4.705882352941177, 4.705882352941177, 1.0]);
  });

  it("reads legacy v0.0.12 points (axes null, nested sequence transform)", async () => {
    const root = fixture("sdata-storage-format-v0.0.12/transformation_sequence.zarr");
    const p = await load(root, "/points/blobs_points", "blobs_points");
    expect(p.axes).toEqual(["x", "y"]);
    expect(p.frame.index.values.length).toBe(200);
    const x = p.frame.columns.x as DenseArray;
    expect([x.data[0], x.data[199]]).toEqual([11n, 13n]);
    expect((p.frame.columns.genes as Categorical).categories).toEqual(strings(["a", "b"]));
    const t = p.transformations.global!;
    expect(t.type).toBe("sequence");
    expect(t.type === "sequence" && t.transformations.map((s) => s.type)).toEqual(["translation", "scale"]);
  });

  it("errors naming the group when the parquet data is missing", async () => {
    const root = fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr");
    await expect(readPoints(new FileSystemStore(root), "/points/nope", {}, "nope")).rejects.toThrow(
      /\/points\/nope\/points\.parquet: no parquet data/,
    );
  });
});

describe("writePoints", () => {
  it("round-trips read → write → read deep-equal, in spatialdata 0.6+ layout", async () => {
    const src = await load(
      fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr"),
      "/points/blobs_points",
      "blobs_points",
    );
    const dir = await mkdtemp(join(tmpdir(), "tessera-points-"));
    temps.push(dir);
    const store = new FileSystemStore(dir);
    const key = await writePoints(store, "/points/blobs_points", src);
    expect(key).toBe("/points/blobs_points/points.parquet/part.0.parquet");
    const zj = JSON.parse(await readFile(join(dir, "points/blobs_points/zarr.json"), "utf8"));
    expect(zj.zarr_format).toBe(3);
    expect(zj.node_type).toBe("group");
    expect(zj.attributes["encoding-type"]).toBe("ngff:points");
    expect(zj.attributes.axes).toEqual(["x", "y"]);
    expect(zj.attributes.spatialdata_attrs).toEqual({
      version: "0.2",
      feature_key: "genes",
      instance_key: "instance_id",
    });
    expect(zj.attributes.coordinateTransformations[0].output.name).toBe("global");
    const back = await readPoints(store, "/points/blobs_points", zj.attributes, "blobs_points");
    // Categories come back in order of first appearance: make that the expected order.
    const genes = src.frame.columns.genes as Categorical;
    expect(back.frame.index).toEqual(src.frame.index);
    expect(back.frame.columnOrder).toEqual(src.frame.columnOrder);
    for (const c of ["x", "y", "instance_id"]) expect(back.frame.columns[c]).toEqual(src.frame.columns[c]);
    for (let i = 0; i < 200; i++)
      expect(columnValue(back.frame.columns.genes!, i)).toBe(columnValue(genes, i));
    expect(back.transformations).toEqual(src.transformations);
    expect(back.featureKey).toBe("genes");
  });

  it("writes a range index as the same __null_dask_index__ column as its strings, and reads it back as a range", async () => {
    const n = 30_000;
    const x = allocArray("float32", n) as Float32Array;
    const y = allocArray("float32", n) as Float32Array;
    for (let i = 0; i < n; i++) {
      x[i] = i * 0.5;
      y[i] = n - i;
    }
    const element = (index: StringArray): PointsElement => ({
      kind: "points",
      name: "tx",
      axes: ["x", "y"],
      transformations: {},
      frame: dataFrame(index, { x: dense(x), y: dense(y) }, "_index"),
    });
    const plain = strings(Array.from({ length: n }, (_, i) => String(i)));
    const dir = await mkdtemp(join(tmpdir(), "tessera-points-range-"));
    temps.push(dir);
    const store = new FileSystemStore(dir);
    await writePoints(store, "/points/a", element(plain));
    await writePoints(store, "/points/b", element(rangeStrings(n)));
    const file = (g: string) => readFile(join(dir, `points/${g}/points.parquet/part.0.parquet`));
    expect(Buffer.compare(await file("a"), await file("b"))).toBe(0);
    const zj = JSON.parse(await readFile(join(dir, "points/b/zarr.json"), "utf8"));
    const back = await readPoints(store, "/points/b", zj.attributes, "tx");
    expect(back.frame.index.backing).toEqual({ kind: "range", start: 0, step: 1 });
    expect(stringAt(back.frame.index, n - 1)).toBe(String(n - 1));
  });

  it("round-trips every column kind exactly (int64 > 2^53, nulls, float32 xyz, named index)", async () => {
    const n = 4;
    const f32 = (vs: number[]) => {
      const a = allocArray("float32", n) as Float32Array;
      a.set(vs);
      return dense(a);
    };
    const ids = allocArray("int64", n) as BigInt64Array;
    ids.set([112824700230101249n, -5n, 0n, 9007199254740993n]);
    const i8 = allocArray("int8", n) as Int8Array;
    i8.set([-3, 0, 7, 127]);
    const flags = allocArray("bool", n) as Uint8Array;
    flags.set([1, 0, 0, 1]);
    const nullData = allocArray("int32", n) as Int32Array;
    nullData.set([1, 0, 3, 4]);
    const nullMask = allocArray("uint8", n) as Uint8Array;
    nullMask.set([0, 1, 0, 0]);
    const codes = allocArray("int32", n) as Int32Array;
    codes.set([0, 1, 0, -1]);
    const frame = dataFrame(
      strings(["t1", "t2", "t3", "t4"]),
      {
        x: f32([1.5, 2.5, 3.5, 4.5]),
        y: f32([-1, -2, -3, -4]),
        z: f32([0, 0, 1, 1]),
        gene: { kind: "categorical", codes, categories: strings(["MYC", "ACTB"]), ordered: false },
        id: dense(ids),
        small: dense(i8, undefined, "int8"),
        flag: dense(flags, undefined, "bool"),
        count: { kind: "nullable", dtype: "int32", data: nullData, mask: nullMask },
        note: strings(["a", null, "ü", ""]),
      },
      "transcript",
    );
    const el: PointsElement = {
      kind: "points",
      name: "tx",
      axes: ["x", "y", "z"],
      frame,
      featureKey: "gene",
      transformations: { global: { type: "scale", scale: [2, 2, 1] } },
    };
    const dir = await mkdtemp(join(tmpdir(), "tessera-points-"));
    temps.push(dir);
    const store = new FileSystemStore(dir);
    await writePoints(store, "/points/tx", el);
    const attrs = JSON.parse(await readFile(join(dir, "points/tx/zarr.json"), "utf8")).attributes;
    expect(attrs.spatialdata_attrs).toEqual({ version: "0.2", feature_key: "gene" });
    expect(attrs.coordinateTransformations[0].input.name).toBe("xyz");
    const back = await readPoints(store, "/points/tx", attrs, "tx");
    expect(back.frame).toEqual(el.frame);
    expect(back.axes).toEqual(el.axes);
    expect(back.featureKey).toBe("gene");
    expect(back.transformations.global).toMatchObject({
      type: "scale",
      scale: [2, 2, 1],
      output: { name: "global" },
    });
  });
});

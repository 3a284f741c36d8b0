import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, describe, expect, it } from "vitest";
import { toAffine6 } from "../../../../src/sdk/data/affine.js";
import { allocArray } from "../../../../src/sdk/data/arrays.js";
import type {
  AxisSelection,
  ImageElement,
  LabelsElement,
  RasterSource,
} from "../../../../src/sdk/data/elements.js";
import { makeSpatialData, transformTo } from "../../../../src/sdk/data/spatialdata.js";
import { openOmeZarr, readOmeZarrImage, readOmeZarrLabels } from "../../../../src/sdk/io/ome/read.js";
import { writeRasterElement } from "../../../../src/sdk/io/ome/write.js";
import { fixture } from "../../../fixtures.js";
import { values } from "./helpers.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tempStore(): Promise<{ dir: string; store: FileSystemStore }> {
  const dir = await mkdtemp(join(tmpdir(), "ome-write-"));
  dirs.push(dir);
  return { dir, store: new FileSystemStore(dir) };
}
const readJson = async (p: string) => JSON.parse(await readFile(p, "utf8")) as Record<string, unknown>;

/** Every level of `a` and `b` holds the same shape, dtype and values. */
async function expectSamePixels(
  a: ImageElement | LabelsElement,
  b: ImageElement | LabelsElement,
): Promise<void> {
  expect(b.levels.length).toBe(a.levels.length);
  for (let i = 0; i < a.levels.length; i++) {
    const x = await a.levels[i]!.source.read();
    const y = await b.levels[i]!.source.read();
    expect(y.shape).toEqual(x.shape);
    expect(y.dtype).toBe(x.dtype);
    expect(values(y.data)).toEqual(values(x.data));
  }
}

describe("writeRasterElement", () => {
  it("writes the spatialdata ≥ 0.6 layout, matching the 0.7 blobs image attributes", async () => {
    const src = new FileSystemStore(fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr"));
    const el = await readOmeZarrImage(src, "images/blobs_multiscale_image", "blobs_multiscale_image");
    const { dir, store } = await tempStore();
    await writeRasterElement(el, store, "images/blobs_multiscale_image");
    const ours = await readJson(join(dir, "images/blobs_multiscale_image/zarr.json"));
    const theirs = await readJson(
      fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr/images/blobs_multiscale_image/zarr.json"),
    );
    // Same attributes except the channel labels, which we hold as strings.
    const ome = (theirs.attributes as { ome: { omero: { channels: { label: unknown }[] } } }).ome;
    ome.omero.channels = ome.omero.channels.map((c) => ({ label: String(c.label) }));
    expect(ours).toEqual(theirs);
    const arr = await readJson(join(dir, "images/blobs_multiscale_image/s1/zarr.json"));
    expect(arr.shape).toEqual([3, 50, 50]);
    expect(arr.data_type).toBe("float64");
    expect(arr.dimension_names).toEqual(["c", "y", "x"]);
    expect(arr.chunk_grid).toEqual({ name: "regular", configuration: { chunk_shape: [1, 64, 64] } });
    expect(arr.codecs).toEqual([
      { name: "bytes", configuration: { endian: "little" } },
      { name: "zstd", configuration: { level: 0, checksum: false } },
    ]);
    const back = await readOmeZarrImage(store, "images/blobs_multiscale_image", "blobs_multiscale_image");
    expect(back.levels.map((l) => l.path)).toEqual(["s0", "s1", "s2"]);
    expect(back.channels).toEqual(el.channels);
    expect(back.levels.map((l) => l.levelTransform)).toEqual(el.levels.map((l) => l.levelTransform));
    expect(back.transformations).toEqual(el.transformations);
    await expectSamePixels(el, back);
  });

  it("labels carry image-label and match the 0.7 blobs labels attributes", async () => {
    const src = new FileSystemStore(fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr"));
    const el = await readOmeZarrLabels(src, "labels/blobs_multiscale_labels", "blobs_multiscale_labels");
    const { dir, store } = await tempStore();
    await writeRasterElement(el, store, "labels/blobs_multiscale_labels", { tileSize: 128 });
    const ours = await readJson(join(dir, "labels/blobs_multiscale_labels/zarr.json"));
    const theirs = await readJson(
      fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr/labels/blobs_multiscale_labels/zarr.json"),
    );
    // spatialdata 0.7 left "image-label" off this one (blobs_labels has it); we always write it.
    (theirs.attributes as { ome: Record<string, unknown> }).ome["image-label"] = { version: "0.5" };
    expect(ours).toEqual(theirs);
    const s0 = await readJson(join(dir, "labels/blobs_multiscale_labels/s0/zarr.json"));
    expect(s0.chunk_grid).toEqual({ name: "regular", configuration: { chunk_shape: [128, 128] } });
    const back = await readOmeZarrLabels(store, "labels/blobs_multiscale_labels", "blobs_multiscale_labels");
    expect(back.axes).toEqual(["y", "x"]);
    expect(back.dtype).toBe("int16");
    expect(back.transformations).toEqual(el.transformations);
    await expectSamePixels(el, back);
  });

  it("round-trips the exemplar (non-integer level factors, omero colours) and validates as NGFF 0.5", async () => {
    const el = (
      await openOmeZarr(
        new FileSystemStore(fixture("vitessce-exemplar-001-crop/exemplar-001.crop.image.ome.zarr")),
      )
    ).image!;
    const { dir, store } = await tempStore();
    await writeRasterElement(el, store, "", { flavor: "ngff", tileSize: 64 });
    const attrs = (await readJson(join(dir, "zarr.json"))).attributes as Record<string, unknown>;
    const ajv = new Ajv2020({ strict: false });
    const schemaDir = fixture("ngff-spec-json/0.5/schemas");
    for (const f of ["_version.schema", "image.schema"]) ajv.addSchema(await readJson(join(schemaDir, f)));
    const validate = ajv.getSchema("https://ngff.openmicroscopy.org/0.5/schemas/image.schema")!;
    expect(validate(attrs), JSON.stringify(validate.errors)).toBe(true);
    const omero = (attrs.ome as { omero: { channels: { label: string; color: string }[] } }).omero;
    expect(omero.channels.map((c) => [c.label, c.color])).toEqual([
      ["DNA", "FFFFFF"],
      ["FDX1", "FFFFFF"],
      ["CD1D", "FFFFFF"],
      ["CD357", "FFFFFF"],
    ]);
    const c = await openOmeZarr(store);
    expect(c.zarrFormat).toBe(3);
    expect(c.ngffVersion).toBe("0.5");
    const back = c.image!;
    expect(back.channels).toEqual(["DNA", "FDX1", "CD1D", "CD357"]);
    expect(back.levels.map((l) => l.shape[1])).toEqual([250, 125, 62, 31, 15]);
    expect(back.levels.map((l) => l.chunks)).toEqual([
      [1, 64, 64],
      [1, 64, 64],
      [1, 64, 64],
      [1, 32, 32],
      [1, 16, 16],
    ]);
    expect(back.levels.map((l) => l.levelTransform)).toEqual(el.levels.map((l) => l.levelTransform));
    await expectSamePixels(el, back);
  });

  it("round-trips the bioformats2raw image (5-D on disk, c,y,x exposed)", async () => {
    const el = (
      await openOmeZarr(new FileSystemStore(fixture("viv-fixtures/loaders-tests/bioformats-zarr/data.zarr")))
    ).image!;
    const { store } = await tempStore();
    await writeRasterElement(el, store, "images/bf");
    const back = await readOmeZarrImage(store, "images/bf", "bf");
    expect(back.dtype).toBe("int8");
    expect(back.levels.map((l) => l.shape)).toEqual([
      [3, 167, 439],
      [3, 83, 219],
    ]);
    await expectSamePixels(el, back);
  });

  it("streams band by band: never reads more than one band of chunk rows at a time", async () => {
    // A synthetic 2 × 1000 × 700 uint16 image whose source records each read.
    const shape = [2, 1000, 700];
    const reads: number[][] = [];
    const source: RasterSource = {
      shape,
      dtype: "uint16",
      chunks: [1, 100, 700],
      async read(sel?: readonly AxisSelection[]) {
        const r = shape.map((n, i): [number, number] => {
          const s = sel?.[i] ?? null;
          return s === null ? [0, n] : typeof s === "number" ? [s, s + 1] : [s[0], s[1]];
        });
        reads.push(r.map(([a, b]) => b - a));
        const out = allocArray(
          "uint16",
          r.reduce((p, [a, b]) => p * (b - a), 1),
        );
        let k = 0;
        for (let c = r[0]![0]; c < r[0]![1]; c++)
          for (let y = r[1]![0]; y < r[1]![1]; y++)
            for (let x = r[2]![0]; x < r[2]![1]; x++) out[k++] = (c * 7 + y * 3 + x) % 65536;
        return { kind: "dense", dtype: "uint16", shape: r.map(([a, b]) => b - a), data: out };
      },
    };
    const el: ImageElement = {
      kind: "image",
      name: "synthetic",
      axes: ["c", "y", "x"],
      channels: ["a", "b"],
      dtype: "uint16",
      levels: [{ path: "0", shape, chunks: source.chunks, dtype: "uint16", levelTransform: [], source }],
      transformations: { global: { type: "identity" } },
    };
    const { store } = await tempStore();
    await writeRasterElement(el, store, "images/synthetic", { tileSize: 256 });
    // 2 channels × ceil(1000 / 256) bands of 256 rows (the 100-row source chunks fit in one band).
    expect(reads).toHaveLength(8);
    expect(Math.max(...reads.map((r) => r[0]! * r[1]! * r[2]!))).toBe(256 * 700);
    const back = await readOmeZarrImage(store, "images/synthetic", "synthetic");
    expect(back.levels[0]!.chunks).toEqual([1, 256, 256]);
    expect(back.channels).toEqual(["a", "b"]);
    const win = await back.levels[0]!.source.read([1, [998, 1000], [698, 700]]);
    expect(values(win.data)).toEqual([
      (7 + 998 * 3 + 698) % 65536,
      (7 + 998 * 3 + 699) % 65536,
      (7 + 999 * 3 + 698) % 65536,
      (7 + 999 * 3 + 699) % 65536,
    ]);
    // An element transformation without coordinate systems gets the intrinsic and target systems.
    const attrs = (await readJson(join(dirs[dirs.length - 1]!, "images/synthetic/zarr.json"))).attributes as {
      ome: {
        multiscales: { coordinateTransformations: { input: { name: string }; output: { name: string } }[] }[];
      };
    };
    const ct = attrs.ome.multiscales[0]!.coordinateTransformations[0]!;
    expect([ct.input.name, ct.output.name]).toEqual(["cyx", "global"]);
  });

  it("strict NGFF flavor writes the global transformation as scale + translation, and reads back the same affine", async () => {
    const src = new FileSystemStore(fixture("sdata-storage-format-v0.0.12/transformation_sequence.zarr"));
    const el = await readOmeZarrImage(src, "images/blobs_image", "blobs_image");
    const { dir, store } = await tempStore();
    await writeRasterElement(el, store, "img", { flavor: "ngff" });
    const attrs = (await readJson(join(dir, "img/zarr.json"))).attributes as {
      ome: { multiscales: { coordinateTransformations: unknown }[] };
      spatialdata_attrs?: unknown;
    };
    expect(attrs.spatialdata_attrs).toBeUndefined();
    expect(attrs.ome.multiscales[0]!.coordinateTransformations).toEqual([
      { type: "scale", scale: [1, 0.5, 2] },
      { type: "translation", translation: [0, 15, 20] },
    ]);
    const back = await readOmeZarrImage(store, "img", "blobs_image");
    const m = (x: ImageElement) =>
      toAffine6(transformTo(makeSpatialData({ images: { [x.name]: x } }), x, "global"));
    expect(m(back)).toEqual(m(el));
    expect(m(back)).toEqual([2, 0, 20, 0, 0.5, 15]);
    const affine = await readOmeZarrImage(
      new FileSystemStore(fixture("sdata-storage-format-v0.0.12/transformation_affine.zarr")),
      "images/blobs_image",
      "a",
    );
    await expect(writeRasterElement(affine, store, "aff", { flavor: "ngff" })).rejects.toThrow(
      /"affine" transformation cannot be written/,
    );
  });

  it("rejects a tile size that is not a power of two", async () => {
    const el = await readOmeZarrImage(
      new FileSystemStore(fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr")),
      "images/blobs_image",
      "b",
    );
    const { store } = await tempStore();
    await expect(writeRasterElement(el, store, "images/b", { tileSize: 300 })).rejects.toThrow(
      /power of two/,
    );
  });
});

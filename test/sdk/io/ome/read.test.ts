import { cp, mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import { afterAll, describe, expect, it } from "vitest";
import { toAffine6 } from "../../../../src/sdk/data/affine.js";
import type { ImageElement, LabelsElement } from "../../../../src/sdk/data/elements.js";
import { makeSpatialData, transformTo } from "../../../../src/sdk/data/spatialdata.js";
import { openOmeZarr, readOmeZarrImage, readOmeZarrLabels } from "../../../../src/sdk/io/ome/read.js";
import { fixture } from "../../../fixtures.js";
import { stats, values } from "./helpers.js";

const store = (rel: string) => new FileSystemStore(fixture(rel));
const BLOB_CHANNELS = ["0", "1", "2"];

/** Expected level-0 numbers of the cropped blobs image (identical in 0.3 and 0.7). */
const BLOBS_IMAGE_L0 = { first: 0.9543543938645033, last: 0.13466935926895302, sum: 2888.33343052485 };

function globalOf(el: ImageElement | LabelsElement) {
  return toAffine6(
    transformTo(
      makeSpatialData({ [el.kind === "image" ? "images" : "labels"]: { [el.name]: el } }),
      el,
      "global",
    ),
  );
}

describe("SpatialData 0.3 (zarr v2, NGFF 0.4)", () => {
  const s = store("vitessce-sdata-blobs-0.3/blobs.sdata.zarr");

  it("reads blobs_image lazily with its metadata", async () => {
    const el = await readOmeZarrImage(s, "images/blobs_image", "blobs_image");
    expect(el.kind).toBe("image");
    expect(el.axes).toEqual(["c", "y", "x"]);
    expect(el.channels).toEqual(BLOB_CHANNELS);
    expect(el.dtype).toBe("float64");
    expect(el.levels.map((l) => [l.path, l.shape])).toEqual([["0", [3, 100, 100]]]);
    expect(el.levels[0]!.chunks).toEqual([3, 100, 100]);
    expect(Object.keys(el.transformations)).toEqual(["global"]);
    expect(el.transformations.global!.type).toBe("identity");
    expect(el.transformations.global!.input?.name).toBe("cyx");
    expect(globalOf(el)).toEqual([1, 0, 0, 0, 1, 0]);
    expect(el.omero).toEqual({ channels: [{ label: 0 }, { label: 1 }, { label: 2 }] });
    const px = await el.levels[0]!.source.read();
    expect(px.shape).toEqual([3, 100, 100]);
    expect(px.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    const st = stats(px.data);
    expect(st.first).toBe(BLOBS_IMAGE_L0.first);
    expect(st.last).toBe(BLOBS_IMAGE_L0.last);
    expect(st.sum).toBeCloseTo(BLOBS_IMAGE_L0.sum, 8);
  });

  it("reads blobs_multiscale_image with three levels", async () => {
    const el = await readOmeZarrImage(s, "images/blobs_multiscale_image", "blobs_multiscale_image");
    expect(el.levels.map((l) => l.shape)).toEqual([
      [3, 100, 100],
      [3, 50, 50],
      [3, 25, 25],
    ]);
    expect(el.levels.map((l) => l.levelTransform)).toEqual([
      [{ type: "scale", scale: [1, 1, 1] }],
      [{ type: "scale", scale: [1, 2, 2] }],
      [{ type: "scale", scale: [1, 4, 4] }],
    ]);
    const l2 = stats((await el.levels[2]!.source.read()).data);
    expect(l2.first).toBe(0.9504738367630946);
    expect(l2.last).toBe(0.1465085335132263);
  });

  it("reads labels (int16, y,x)", async () => {
    const el = await readOmeZarrLabels(s, "labels/blobs_multiscale_labels", "blobs_multiscale_labels");
    expect(el.kind).toBe("labels");
    expect(el.axes).toEqual(["y", "x"]);
    expect(el.dtype).toBe("int16");
    expect(el.levels.map((l) => l.shape)).toEqual([
      [100, 100],
      [50, 50],
      [25, 25],
    ]);
    expect(el.transformations.global!.input?.name).toBe("yx");
    const st = stats((await el.levels[0]!.source.read()).data);
    expect(st).toEqual({ first: 0, last: 0, sum: 24926, max: 19, firstNonZero: [40, 19] });
    expect(stats((await el.levels[1]!.source.read()).data).sum).toBe(6175);
    const single = await readOmeZarrLabels(s, "labels/blobs_labels", "blobs_labels");
    expect(single.levels).toHaveLength(1);
  });
});

describe("SpatialData 0.3-full (512², chunked 256)", () => {
  const s = store("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr");

  it("reads every level of the image", async () => {
    const el = await readOmeZarrImage(s, "images/blobs_multiscale_image", "blobs_multiscale_image");
    expect(el.levels.map((l) => [l.shape, l.chunks])).toEqual([
      [
        [3, 512, 512],
        [3, 256, 256],
      ],
      [
        [3, 256, 256],
        [3, 256, 256],
      ],
      [
        [3, 128, 128],
        [3, 128, 128],
      ],
    ]);
    const st = stats((await el.levels[0]!.source.read()).data);
    expect(st.first).toBe(0.9543543938645033);
    expect(st.last).toBe(0.0012670617594630375);
    expect(st.sum).toBeCloseTo(104470.21786474487, 6);
  });

  it("reads both label elements", async () => {
    for (const n of ["blobs_labels", "blobs_multiscale_labels"]) {
      const el = await readOmeZarrLabels(s, `labels/${n}`, n);
      expect(el.levels[0]!.shape).toEqual([512, 512]);
      const st = stats((await el.levels[0]!.source.read()).data);
      expect(st).toEqual({ first: 0, last: 0, sum: 512978, max: 30, firstNonZero: [40, 19] });
    }
    const ms = await readOmeZarrLabels(s, "labels/blobs_multiscale_labels", "m");
    expect(ms.levels.map((l) => l.shape[0])).toEqual([512, 256, 128]);
    expect(stats((await ms.levels[2]!.source.read()).data).sum).toBe(32090);
  });

  it("a window read crossing chunk borders equals the full read there", async () => {
    const el = await readOmeZarrImage(s, "images/blobs_multiscale_image", "x");
    const full = await el.levels[0]!.source.read();
    const win = await el.levels[0]!.source.read([1, [250, 262], [240, 270]]);
    expect(win.shape).toEqual([12, 30]);
    for (let y = 0; y < 12; y++) {
      for (let x = 0; x < 30; x++) {
        expect(win.data[y * 30 + x]).toBe(full.data[1 * 512 * 512 + (250 + y) * 512 + 240 + x]);
      }
    }
  });
});

describe("SpatialData 0.7 (zarr v3, NGFF 0.5-dev-spatialdata)", () => {
  const s = store("vitessce-sdata-blobs-0.7/blobs.sdata.zarr");

  it("reads images under attributes.ome with s0/s1/s2 levels", async () => {
    const el = await readOmeZarrImage(s, "images/blobs_multiscale_image", "blobs_multiscale_image");
    expect(el.levels.map((l) => [l.path, l.shape])).toEqual([
      ["s0", [3, 100, 100]],
      ["s1", [3, 50, 50]],
      ["s2", [3, 25, 25]],
    ]);
    expect(el.channels).toEqual(BLOB_CHANNELS);
    expect(el.transformations.global!.output?.name).toBe("global");
    const st = stats((await el.levels[0]!.source.read()).data);
    expect(st.first).toBe(BLOBS_IMAGE_L0.first);
    expect(st.last).toBe(BLOBS_IMAGE_L0.last);
    expect(st.sum).toBeCloseTo(BLOBS_IMAGE_L0.sum, 8);
    const single = await readOmeZarrImage(s, "images/blobs_image", "blobs_image");
    expect(single.levels.map((l) => l.path)).toEqual(["s0"]);
  });

  it("reads labels with image-label metadata", async () => {
    const el = await readOmeZarrLabels(s, "labels/blobs_multiscale_labels", "blobs_multiscale_labels");
    expect(el.levels.map((l) => l.shape)).toEqual([
      [100, 100],
      [50, 50],
      [25, 25],
    ]);
    const sums = [];
    for (const l of el.levels) sums.push(stats((await l.source.read()).data).sum);
    // The 0.7 store was re-written by spatialdata 0.7: its coarser label levels differ from 0.3's.
    expect(sums).toEqual([24926, 6304, 1621]);
    const one = await readOmeZarrLabels(s, "labels/blobs_labels", "blobs_labels");
    expect(stats((await one.levels[0]!.source.read()).data).firstNonZero).toEqual([40, 19]);
  });
});

describe("SpatialData v0.0.12 transformations", () => {
  const cases: [string, [number, number, number, number, number, number], string][] = [
    ["identity", [1, 0, 0, 0, 1, 0], "identity"],
    ["scale", [2, 0, 0, 0, 1, 0], "scale"],
    ["translation", [1, 0, 100, 0, 1, 0], "translation"],
    // translation [0,30,10] (c,y,x) then scale [1,0.5,2]: x' = 2(x+10), y' = 0.5(y+30)
    ["sequence", [2, 0, 20, 0, 0.5, 15], "sequence"],
    // affine rows for output (c, x, y) over input (c, y, x, 1): x' = x + 2y + 3, y' = 4x + 5y + 6
    ["affine", [1, 2, 3, 4, 5, 6], "affine"],
  ];
  for (const [name, expected, type] of cases) {
    it(`${name}: composes to the expected affine to global`, async () => {
      const s = store(`sdata-storage-format-v0.0.12/transformation_${name}.zarr`);
      const el = await readOmeZarrImage(s, "images/blobs_image", "blobs_image");
      expect(el.transformations.global!.type).toBe(type);
      expect(el.channels).toEqual(BLOB_CHANNELS); // from the legacy `channels_metadata`
      expect(el.levels[0]!.shape).toEqual([3, 32, 32]);
      expect(globalOf(el)).toEqual(expected);
      const st = stats((await el.levels[0]!.source.read()).data);
      expect(st.first).toBe(1);
      expect(st.last).toBe(0.03331464483293745);
    });
  }
});

describe("standalone OME-Zarr", () => {
  it("exemplar-001 image: NGFF 0.4, 5 levels with non-integer factors, 4 named channels", async () => {
    const c = await openOmeZarr(store("vitessce-exemplar-001-crop/exemplar-001.crop.image.ome.zarr"));
    expect(c.layout).toBe("multiscale");
    expect(c.ngffVersion).toBe("0.4");
    expect(c.zarrFormat).toBe(2);
    const el = c.image!;
    expect(el.name).toBe("image");
    expect(el.channels).toEqual(["DNA", "FDX1", "CD1D", "CD357"]);
    expect(el.dtype).toBe("uint16");
    expect(el.levels.map((l) => l.shape[1])).toEqual([250, 125, 62, 31, 15]);
    expect(el.levels[0]!.chunks).toEqual([1, 256, 256]);
    expect(el.levels[2]!.levelTransform).toEqual([
      { type: "scale", scale: [1, 4.032258064516129, 4.032258064516129] },
    ]);
    expect(el.levels[4]!.levelTransform).toEqual([
      { type: "scale", scale: [1, 16.666666666666668, 16.666666666666668] },
    ]);
    expect(globalOf(el)).toEqual([1, 0, 0, 0, 1, 0]);
    const expected = [
      [4466, 394, 1668509842],
      [4177, 394, 417164275],
      [3702, 365, 102715130],
      [4533, 365, 25459862],
      [57314, 677, 6019771],
    ];
    for (let i = 0; i < 5; i++) {
      const st = stats((await el.levels[i]!.source.read()).data);
      expect([st.first, st.last, st.sum]).toEqual(expected[i]);
    }
  });

  it("exemplar-001 region read: one channel, a window", async () => {
    const el = (await openOmeZarr(store("vitessce-exemplar-001-crop/exemplar-001.crop.image.ome.zarr")))
      .image!;
    const win = await el.levels[0]!.source.read([2, [10, 13], [20, 24]]);
    expect(win.shape).toEqual([3, 4]);
    expect(values(win.data)).toEqual([319, 317, 298, 314, 276, 316, 278, 321, 299, 325, 321, 320]);
    const keep = await el.levels[0]!.source.read([
      [2, 3],
      [10, 13],
      [20, 24],
    ]);
    expect(keep.shape).toEqual([1, 3, 4]);
    expect(values(keep.data)).toEqual(values(win.data));
    await expect(el.levels[0]!.source.read([4])).rejects.toThrow(/index 4 out of range for axis "c"/);
    await expect(el.levels[0]!.source.read([0, [0, 251]])).rejects.toThrow(/out of bounds for axis "y"/);
  });

  it("exemplar-001 segmentations: image-style multiscale of uint16 ids", async () => {
    const el = (
      await openOmeZarr(store("vitessce-exemplar-001-crop/exemplar-001.crop.segmentations.ome.zarr"))
    ).image!;
    expect(el.channels).toEqual(["cell", "circle"]);
    expect(el.levels.map((l) => l.shape)).toEqual([
      [2, 250, 250],
      [2, 125, 125],
      [2, 62, 62],
      [2, 31, 31],
      [2, 15, 15],
    ]);
    const st = stats((await el.levels[0]!.source.read()).data);
    expect(st).toEqual({ first: 0, last: 0, sum: 32716866, max: 2024, firstNonZero: [26, 1021] });
  });

  it("viv blobs_image_v04 (0.4-dev-spatialdata) and v05 (0.5-dev-spatialdata, zarr v3)", async () => {
    for (const [dir, version, fmt] of [
      ["blobs_image_v04.ome.zarr", "0.4-dev-spatialdata", 2],
      ["blobs_image_v05.ome.zarr", "0.5-dev-spatialdata", 3],
    ] as const) {
      const c = await openOmeZarr(store(`viv-fixtures/loaders-tests/ome-zarr/${dir}`));
      expect(c.ngffVersion).toBe(version);
      expect(c.zarrFormat).toBe(fmt);
      const el = c.image!;
      expect(el.levels[0]!.shape).toEqual([3, 12, 12]);
      expect(Object.keys(el.transformations)).toEqual(["global"]);
      const st = stats((await el.levels[0]!.source.read()).data);
      expect(st.first).toBe(0.9961637412008311);
      expect(st.last).toBe(0.003806937088505119);
      expect(st.sum).toBeCloseTo(234.00014717314764, 9);
    }
  });

  it("bioformats2raw (NGFF 0.1, 5-D t,c,z,y,x without axes) exposes c,y,x", async () => {
    const c = await openOmeZarr(store("viv-fixtures/loaders-tests/bioformats-zarr/data.zarr"));
    expect(c.layout).toBe("bioformats2raw");
    expect(c.ngffVersion).toBe("0.1");
    const el = c.image!;
    expect(el.axes).toEqual(["c", "y", "x"]);
    expect(el.dtype).toBe("int8");
    expect(el.levels.map((l) => [l.shape, l.chunks])).toEqual([
      [
        [3, 167, 439],
        [1, 167, 439],
      ],
      [
        [3, 83, 219],
        [1, 83, 219],
      ],
    ]);
    // No per-level transformations in 0.1: derived from the size ratio.
    expect(el.levels[1]!.levelTransform).toEqual([{ type: "scale", scale: [1, 167 / 83, 439 / 219] }]);
    const l0 = stats((await el.levels[0]!.source.read()).data);
    expect(l0).toEqual({ first: 0, last: 96, sum: 10445323, max: 96, firstNonZero: [439, 1] });
    const l1 = stats((await el.levels[1]!.source.read()).data);
    expect([l1.first, l1.last, l1.sum]).toEqual([0, 95, 2557074]);
  });

  it("reads a labels/ subgroup next to a root image", async () => {
    // Build an OME-Zarr whose labels/ subgroup points at a copy of the blobs labels.
    const dir = await mkdtemp(join(tmpdir(), "ome-labels-"));
    try {
      await cp(fixture("viv-fixtures/loaders-tests/ome-zarr/blobs_image_v04.ome.zarr"), dir, {
        recursive: true,
      });
      await cp(fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr/labels"), join(dir, "labels"), {
        recursive: true,
      });
      const c = await openOmeZarr(new FileSystemStore(dir));
      expect(Object.keys(c.labels).sort()).toEqual(["blobs_labels", "blobs_multiscale_labels"]);
      expect(c.labels.blobs_multiscale_labels!.levels).toHaveLength(3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("corrupt and missing input", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  async function copyBlobs(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "ome-corrupt-"));
    dirs.push(dir);
    await cp(fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr/images"), join(dir, "images"), {
      recursive: true,
    });
    return dir;
  }

  it("a garbled .zarray fails at open, naming the key", async () => {
    const dir = await copyBlobs();
    await writeFile(join(dir, "images/blobs_multiscale_image/1/.zarray"), '{"chunks": [3, 256, ');
    await expect(
      readOmeZarrImage(new FileSystemStore(dir), "images/blobs_multiscale_image", "x"),
    ).rejects.toThrow(/\/images\/blobs_multiscale_image\/1\/\.zarray/);
  });

  it("a garbled .zattrs fails naming the key", async () => {
    const dir = await copyBlobs();
    await writeFile(join(dir, "images/blobs_multiscale_image/.zattrs"), "{not json");
    await expect(
      readOmeZarrImage(new FileSystemStore(dir), "images/blobs_multiscale_image", "x"),
    ).rejects.toThrow(/\/images\/blobs_multiscale_image\/\.zattrs: invalid JSON/);
  });

  it("a missing chunk reads as the fill value", async () => {
    const dir = await copyBlobs();
    await rm(join(dir, "images/blobs_multiscale_image/0/0/1/1"));
    const el = await readOmeZarrImage(new FileSystemStore(dir), "images/blobs_multiscale_image", "x");
    const px = await el.levels[0]!.source.read([0, [300, 302], [300, 302]]);
    expect(values(px.data)).toEqual([0, 0, 0, 0]);
    const kept = await el.levels[0]!.source.read([0, [0, 1], [0, 1]]);
    expect(kept.data[0]).toBe(0.9543543938645033);
  });

  it("a garbled chunk fails naming its key", async () => {
    const dir = await copyBlobs();
    const p = join(dir, "images/blobs_multiscale_image/0/0/1/0");
    const bytes = await readFile(p);
    await writeFile(p, bytes.subarray(0, 40));
    const el = await readOmeZarrImage(new FileSystemStore(dir), "images/blobs_multiscale_image", "x");
    await expect(el.levels[0]!.source.read()).rejects.toThrow(/\/images\/blobs_multiscale_image\/0\/0\/1\/0/);
    // Chunks elsewhere still read.
    const ok = await el.levels[0]!.source.read([0, [0, 2], [0, 2]]);
    expect(ok.data[0]).toBe(0.9543543938645033);
  });

  it("a missing group or wrong path names the path", async () => {
    const dir = await copyBlobs();
    await expect(readOmeZarrImage(new FileSystemStore(dir), "images/nope", "x")).rejects.toThrow(
      /no zarr group at "\/images\/nope"/,
    );
    await truncate(join(dir, "images/blobs_multiscale_image/.zattrs"), 0);
    await expect(
      readOmeZarrImage(new FileSystemStore(dir), "images/blobs_multiscale_image", "x"),
    ).rejects.toThrow(/blobs_multiscale_image/);
    await expect(openOmeZarr(new FileSystemStore(join(dir, "images")))).rejects.toThrow(
      /not an OME-Zarr image/,
    );
  });
});

/**
 * The served raster store on the real fixtures: every image and labels element gets a zarr v3 store
 * with the 2× pyramid (images) or its own levels (labels), one plane per chunk, the same pixels as
 * the source; a checkpoint's images are served from the checkpoint itself; image info; composites;
 * a rebuild stops when its session closes.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { allocArray, type TypedArray } from "../../../src/sdk/data/arrays.js";
import type { ImageElement, LabelsElement } from "../../../src/sdk/data/elements.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";
import { openCheckpoint } from "../../../src/sdk/io/checkpoint/read.js";
import { writeCheckpoint } from "../../../src/sdk/io/checkpoint/write.js";
import { openData } from "../../../src/sdk/io/open.js";
import { RasterHub, type SessionRasters } from "../../../src/sdk/raster/hub.js";
import { memoryRasterSource } from "../../../src/sdk/raster/memory-source.js";
import { compositeRgb, parseChannelsQuery } from "../../../src/sdk/raster/render.js";
import { fixture } from "../../fixtures.js";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "tessera-served-"));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

function rasters(
  sd: SpatialData,
  basePx = 64,
  id = "s",
): { hub: RasterHub; r: SessionRasters; events: object[] } {
  const hub = new RasterHub({ workDir: work, rasterBasePx: basePx, rasterRebuildWorkers: 2 });
  const events: object[] = [];
  const r = hub.forSession(id, {
    data: () => sd,
    activeTable: () => null,
    display: () => undefined,
    emit: (event, data) => events.push({ event, ...data }),
  });
  return { hub, r, events };
}

/** The exact 2×2 mean of the pyramid builder (integers rounded half up). */
function mean2x2(a: ArrayLike<number>, h: number, w: number, integer: boolean): number[] {
  const oh = Math.floor(h / 2);
  const ow = Math.floor(w / 2);
  const out: number[] = [];
  for (let y = 0; y < oh; y++)
    for (let x = 0; x < ow; x++) {
      const s =
        a[2 * y * w + 2 * x]! +
        a[2 * y * w + 2 * x + 1]! +
        a[(2 * y + 1) * w + 2 * x]! +
        a[(2 * y + 1) * w + 2 * x + 1]!;
      out.push(integer ? Math.floor((s + 2) / 4) : s / 4);
    }
  return out;
}

/** Count of positions where two arrays differ (or the length difference). */
function mismatches(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Math.abs(a.length - b.length) || 1;
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) n++;
  return n;
}

const CASES: [string, string][] = [
  ["vitessce-sdata-blobs-0.7/blobs.sdata.zarr", "spatialdata zarr v3"],
  ["vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr", "spatialdata zarr v2"],
  ["viv-fixtures/loaders-tests/ome-zarr/blobs_image_v04.ome.zarr", "OME-Zarr 0.4"],
  ["viv-fixtures/loaders-tests/ome-zarr/blobs_image_v05.ome.zarr", "OME-Zarr 0.5"],
  ["viv-fixtures/loaders-tests/bioformats-zarr/data.zarr", "bioformats2raw"],
  ["vitessce-exemplar-001-crop/exemplar-001.crop.image.ome.zarr", "exemplar 5 levels"],
  ["vitessce-exemplar-001-crop/exemplar-001.crop.segmentations.ome.zarr", "exemplar segmentations"],
  ["sfe-toy/xenium/morphology_focus.ome.tif", "Xenium morphology OME-TIFF"],
  ["viv-fixtures/avivator-data/multifile.companion.ome", "multi-file OME-TIFF"],
  ["viv-fixtures/avivator-data/multi-channel.ome.tif", "multi-channel OME-TIFF (int8)"],
];

describe("served raster stores of the fixtures", () => {
  for (const [rel, what] of CASES) {
    it(`${what}: levels, chunks, pixels`, async () => {
      const { sdata } = await openData(fixture(rel));
      const { r } = rasters(sdata, 64, `fx-${what.replace(/\W+/g, "-")}`);
      const elements: (ImageElement | LabelsElement)[] = [
        ...Object.values(sdata.images),
        ...Object.values(sdata.labels),
      ];
      expect(elements.length).toBeGreaterThan(0);
      for (const el of elements) {
        const info = await r.info(el.name);
        const store = await r.store(el.name);
        const nd = el.axes.length;
        const l0 = el.levels[0]!;
        expect(info.levels[0]).toEqual({ level: 0, width: l0.shape[nd - 1], height: l0.shape[nd - 2] });
        expect(info.dtype).toBe(el.dtype);
        expect(info.zarr_group_path).toBe(`${el.kind === "image" ? "images" : "labels"}/${el.name}`);
        if (el.kind === "image") {
          expect(info.channel_names).toEqual(el.channels);
          expect(info.channels).toBe(el.channels.length);
          // Every level exactly 2× smaller (floor) down to ≤ 64 px.
          for (let k = 1; k < info.levels.length; k++) {
            expect(info.levels[k]!.width).toBe(Math.floor(info.levels[k - 1]!.width / 2));
            expect(info.levels[k]!.height).toBe(Math.floor(info.levels[k - 1]!.height / 2));
          }
          const last = info.levels[info.levels.length - 1]!;
          expect(Math.max(last.width, last.height) <= 64 || Math.min(last.width, last.height) < 2).toBe(true);
        } else {
          expect(info.levels.length).toBe(el.levels.length);
        }
        expect(info.contrast_limits.length).toBe(info.channels);
        expect(info.contrast_range.length).toBe(info.channels);
        for (const [lo, hi] of info.contrast_limits) expect(lo === 0 && hi > 0).toBe(true);
        // One plane per chunk, T × T (or one chunk for a small level).
        for (const lv of store.levels) {
          expect(lv.chunks.slice(0, nd - 2).every((c) => c === 1)).toBe(true);
          const cy = lv.chunks[nd - 2]!;
          expect(cy === info.tile_size || (cy >= lv.height && cy >= lv.width)).toBe(true);
        }
        // Every plane: level 0 equals the source; a level the element has in the planned shape equals
        // it; any other level is the 2×2 mean of the served level above (images).
        const outerShape = l0.shape.slice(0, nd - 2);
        const planes = outerShape.reduce((a, b) => a * b, 1);
        for (let p = 0; p < planes; p++) {
          const outer: number[] = [];
          let rem = p;
          for (let a = outerShape.length - 1; a >= 0; a--) {
            outer.unshift(rem % outerShape[a]!);
            rem = Math.floor(rem / outerShape[a]!);
          }
          let above: ArrayLike<number> | null = null;
          for (let k = 0; k < store.levels.length; k++) {
            const lv = store.levels[k]!;
            const got = (await store.region(
              k,
              outer,
              0,
              lv.height,
              0,
              lv.width,
            )) as unknown as ArrayLike<number>;
            const own = el.levels[k];
            let want: ArrayLike<number>;
            if (own?.shape.every((s, i) => s === lv.shape[i])) {
              want = (await own.source.read([...outer, null, null])).data as unknown as ArrayLike<number>;
            } else {
              const up = store.levels[k - 1]!;
              want = mean2x2(above!, up.height, up.width, !el.dtype.startsWith("float"));
            }
            expect(mismatches(got, want), `${el.name} level ${k} plane ${p}`).toBe(0);
            above = got;
            if (["int64", "uint64"].includes(el.dtype)) break;
          }
        }
      }
      await r.dispose();
    });
  }
});

describe("a served store read with zarrita", () => {
  it("holds zarr v3 groups and arrays with the served chunk layout", async () => {
    const { sdata } = await openData(fixture("vitessce-exemplar-001-crop/exemplar-001.crop.image.ome.zarr"));
    const { r } = rasters(sdata, 64, "zarrita");
    const name = Object.keys(sdata.images)[0]!;
    const store = await r.store(name);
    const reader = {
      async get(key: string) {
        return (await store.get(key.replace(/^\//, "")))?.bytes;
      },
    };
    const root = zarr.root(reader);
    const group = await zarr.open.v3(root.resolve(store.groupPath), { kind: "group" });
    const ms = (group.attrs.ome as { multiscales: { datasets: { path: string }[] }[] }).multiscales[0]!;
    expect(ms.datasets.map((d) => d.path)).toEqual(store.levels.map((l) => l.path));
    const arr = await zarr.open.v3(root.resolve(`${store.groupPath}/s0`), { kind: "array" });
    expect(arr.chunks).toEqual([1, 256, 256]);
    const el = sdata.images[name]!;
    const got = await zarr.get(arr, [2, null, null]);
    const src = await el.levels[0]!.source.read([2, null, null]);
    expect(mismatches(got.data as ArrayLike<number>, src.data as unknown as ArrayLike<number>)).toBe(0);
    // Keys outside the served shape are absent.
    for (const bad of [
      "images/zarr.json/..",
      `${store.groupPath}/../zarr.json`,
      `${store.groupPath}/s0/c/0/0/99`,
      `${store.groupPath}/s0/c/0/0`,
      `${store.groupPath}/s0/c/00/0/0`,
      `${store.groupPath}/s9/zarr.json`,
      `${store.groupPath}/s0/.zarray`,
      "labels/zarr.json",
      "__proto__",
    ])
      expect(await store.get(bad), bad).toBeNull();
    await r.dispose();
  });
});

describe("checkpoint images", () => {
  it("are served from the checkpoint itself, with no rebuild", async () => {
    const demo = generateDemo({ nCells: 200, nGenes: 30, imageSize: 1200, nTranscripts: 100 });
    // Only level 0: the checkpoint writer must build the served pyramid itself.
    const img = Object.values(demo.images)[0]!;
    const sd = makeSpatialData({ ...demo, images: { [img.name]: { ...img, levels: [img.levels[0]!] } } });
    const path = join(work, "demo.sdata.zarr.zip");
    await writeCheckpoint(sd, path);
    const cp = await openCheckpoint(path);
    const name = Object.keys(cp.sdata.images)[0]!;
    // The checkpoint writer built the pyramid: 1200 → 600 levels.
    expect(cp.sdata.images[name]!.levels.map((l) => l.shape[2])).toEqual([1200, 600]);
    const { r, events } = rasters(cp.sdata, 1024, "cp");
    const info = await r.info(name);
    expect(info.store).toBe("source");
    expect(events).toEqual([]);
    expect(info.levels.map((l) => l.width)).toEqual([1200, 600]);
    const store = await r.store(name);
    const src = await sd.images[name]!.levels[0]!.source.read([0, [0, 512], [0, 512]]);
    const got = await store.region(0, [0], 0, 512, 0, 512);
    expect(mismatches(got as unknown as ArrayLike<number>, src.data as unknown as ArrayLike<number>)).toBe(0);
    await r.dispose();
  });
});

describe("composites", () => {
  it("a tile is the additive composite of its channels", async () => {
    const { sdata } = await openData(fixture("vitessce-exemplar-001-crop/exemplar-001.crop.image.ome.zarr"));
    const { r } = rasters(sdata, 64, "composite");
    const name = Object.keys(sdata.images)[0]!;
    const el = sdata.images[name]!;
    const q = "0:blue:0:2000,3:ff8000:100:5000,2:green";
    const got = await r.tileRgb(name, 0, 0, 0, { channels: q });
    expect([got.width, got.height]).toEqual([250, 250]);
    const info = await r.info(name);
    // Reference: straight from the source pixels.
    const chans = [
      { i: 0, c: [0, 0, 255], lo: 0, hi: 2000 },
      { i: 3, c: [255, 128, 0], lo: 100, hi: 5000 },
      { i: 2, c: [0, 255, 0], lo: info.contrast_limits[2]![0], hi: info.contrast_limits[2]![1] },
    ];
    const planes = await Promise.all(chans.map((c) => el.levels[0]!.source.read([c.i, null, null])));
    const n = 250 * 250;
    let maxDiff = 0;
    for (let p = 0; p < n; p++) {
      for (let k = 0; k < 3; k++) {
        let v = 0;
        chans.forEach((c, j) => {
          const t = Math.min(1, Math.max(0, (Number(planes[j]!.data[p]) - c.lo) / (c.hi - c.lo)));
          v += t * c.c[k]!;
        });
        maxDiff = Math.max(maxDiff, Math.abs(Math.min(255, Math.round(v)) - got.rgb[p * 3 + k]!));
      }
    }
    expect(maxDiff).toBeLessThanOrEqual(1);
    await r.dispose();
  });

  it("parses the channels query and refuses malformed ones", () => {
    const d = {
      channelNames: ["DAPI", "CD3", "CD8"],
      contrastLimits: [
        [0, 10],
        [0, 20],
        [0, 30],
      ] as [number, number][],
      isRgb: false,
    };
    expect(parseChannelsQuery("CD8", d)).toEqual([{ index: 2, color: [255, 255, 255], lo: 0, hi: 30 }]);
    expect(parseChannelsQuery("0:red,CD3:#00ff00:5:15", d)).toEqual([
      { index: 0, color: [255, 0, 0], lo: 0, hi: 10 },
      { index: 1, color: [0, 255, 0], lo: 5, hi: 15 },
    ]);
    for (const bad of [
      "",
      "9",
      "nope",
      "0:purplish",
      "0:red:5",
      "0:red:5:2",
      "0:red:a:b",
      "0,1,2,0,1,2,0",
      "0,,1",
    ])
      expect(() => parseChannelsQuery(bad, d), bad).toThrow();
    const rgb = compositeRgb(
      [Uint16Array.of(0, 5, 10, 20)],
      [{ index: 0, color: [255, 255, 255], lo: 0, hi: 10 }],
      4,
    );
    expect(Array.from(rgb)).toEqual([0, 0, 0, 128, 128, 128, 255, 255, 255, 255, 255, 255]);
  });
});

describe("RGB images", () => {
  it("an interleaved uint8 r,g,b image is rebuilt one plane per chunk and shown as is", async () => {
    const [h, w] = [600, 700];
    const data = allocArray("uint8", 3 * h * w) as Uint8Array;
    for (let i = 0; i < data.length; i++) data[i] = (i * 37 + (i >> 9)) & 0xff;
    // One chunk holds all three samples, as an RGB TIFF strip does.
    const source = memoryRasterSource({ kind: "dense", dtype: "uint8", shape: [3, h, w], data }, [3, 64, w]);
    const el: ImageElement = {
      kind: "image",
      name: "he",
      axes: ["c", "y", "x"],
      channels: ["r", "g", "b"],
      dtype: "uint8",
      levels: [
        { path: "0", shape: source.shape, chunks: source.chunks, dtype: "uint8", levelTransform: [], source },
      ],
      transformations: {},
    };
    const { r } = rasters(makeSpatialData({ images: { he: el } }), 256, "rgb");
    const info = await r.info("he");
    expect(info.is_rgb).toBe(true);
    expect(info.contrast_limits).toEqual([
      [0, 255],
      [0, 255],
      [0, 255],
    ]);
    expect(info.levels.map((l) => l.width)).toEqual([700, 350, 175]);
    const tile = await r.tileRgb("he", 0, 1, 0);
    expect([tile.width, tile.height]).toEqual([188, 512]);
    let bad = 0;
    for (let y = 0; y < 512; y++)
      for (let x = 0; x < 188; x++)
        for (let c = 0; c < 3; c++)
          if (tile.rgb[(y * 188 + x) * 3 + c] !== data[c * h * w + y * w + 512 + x]) bad++;
    expect(bad).toBe(0);
    await r.dispose();
  });
});

describe("64-bit labels", () => {
  it("int64 label ids are rebuilt exactly", async () => {
    const [h, w] = [600, 530];
    const data = allocArray("int64", h * w) as BigInt64Array;
    for (let i = 0; i < data.length; i++)
      data[i] = i % 7 === 0 ? 0n : BigInt(1 + Math.floor(i / 900)) * 1_000_000_007n;
    const source = memoryRasterSource({ kind: "dense", dtype: "int64", shape: [h, w], data });
    const el: LabelsElement = {
      kind: "labels",
      name: "ids",
      axes: ["y", "x"],
      dtype: "int64",
      levels: [
        { path: "0", shape: source.shape, chunks: source.chunks, dtype: "int64", levelTransform: [], source },
      ],
      transformations: {},
    };
    const { r } = rasters(makeSpatialData({ labels: { ids: el } }), 256, "labels-64");
    const store = await r.store("ids");
    const got = (await store.region(0, [], 0, h, 0, w)) as BigInt64Array;
    let bad = 0;
    for (let i = 0; i < data.length; i++) if (got[i] !== data[i]) bad++;
    expect(bad).toBe(0);
    const th = await r.thumbnail("ids", 100);
    expect([th.width, th.height]).toEqual([88, 100]);
    await r.dispose();
  });
});

describe("large single-scale labels", () => {
  it("a thumbnail samples the level chunk by chunk instead of compositing it whole", async () => {
    const [h, w] = [300, 5000];
    const data = allocArray("int32", h * w) as Int32Array;
    for (let i = 0; i < data.length; i++)
      data[i] = 1 + (Math.floor(i / w / 50) * 100 + Math.floor((i % w) / 50));
    const source = memoryRasterSource({ kind: "dense", dtype: "int32", shape: [h, w], data });
    const el: LabelsElement = {
      kind: "labels",
      name: "cells",
      axes: ["y", "x"],
      dtype: "int32",
      levels: [
        { path: "0", shape: source.shape, chunks: source.chunks, dtype: "int32", levelTransform: [], source },
      ],
      transformations: {},
    };
    const { r } = rasters(makeSpatialData({ labels: { cells: el } }), 1024, "labels-big");
    const store = await r.store("cells");
    expect(store.levels.length).toBe(1);
    const step = 5;
    const got = (await store.sampled(0, [], step)) as Int32Array;
    expect(got.length).toBe(Math.ceil(h / step) * Math.ceil(w / step));
    let bad = 0;
    for (let y = 0; y < h; y += step)
      for (let x = 0; x < w; x += step)
        if (got[(y / step) * (w / step) + x / step] !== data[y * w + x]) bad++;
    expect(bad).toBe(0);
    const th = await r.thumbnail("cells", 64);
    expect([th.width, th.height]).toEqual([64, 4]);
    await r.dispose();
  });
});

describe("rebuild lifecycle", () => {
  it("a rebuild stops when its session closes, and the cache folder goes", async () => {
    const size = 3000;
    const data = allocArray("uint16", 4 * size * size) as TypedArray;
    for (let i = 0; i < data.length; i += 7) (data as Uint16Array)[i] = i & 0xffff;
    const source = memoryRasterSource({ kind: "dense", dtype: "uint16", shape: [4, size, size], data }, [
      1,
      64,
      size,
    ]);
    const el: ImageElement = {
      kind: "image",
      name: "big",
      axes: ["c", "y", "x"],
      channels: ["a", "b", "c", "d"],
      dtype: "uint16",
      levels: [
        {
          path: "0",
          shape: source.shape,
          chunks: source.chunks,
          dtype: "uint16",
          levelTransform: [],
          source,
        },
      ],
      transformations: {},
    };
    const sd = makeSpatialData({ images: { big: el } });
    const { r, events } = rasters(sd, 256, "cancel");
    const pending = r.store("big");
    pending.catch(() => undefined);
    // Let it start writing, then close.
    for (
      let i = 0;
      i < 200 && !(events as { state?: string; pct?: number }[]).some((e) => (e.pct ?? 0) > 0);
      i++
    )
      await new Promise((res) => setTimeout(res, 20));
    await r.dispose();
    await expect(pending).rejects.toThrow();
    expect(existsSync(r.cacheDir)).toBe(false);
    expect((events as { state: string }[]).map((e) => e.state)).toContain("cancelled");
    const left = existsSync(join(work, "rasters")) ? await readdir(join(work, "rasters")) : [];
    expect(left).not.toContain("cancel");
  });

  it("a replaced element gets a new store and the old rebuild is removed", async () => {
    const { sdata } = await openData(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    let sd = sdata;
    const hub = new RasterHub({ workDir: work, rasterBasePx: 64 });
    const r = hub.forSession("replace", {
      data: () => sd,
      activeTable: () => null,
      display: () => undefined,
      emit: () => undefined,
    });
    const a = await r.store("blobs_image");
    expect(existsSync(a.backing.location)).toBe(true);
    sd = makeSpatialData({
      ...sdata,
      images: { ...sdata.images, blobs_image: { ...sdata.images.blobs_image! } },
    });
    const b = await r.store("blobs_image");
    expect(b.id).not.toBe(a.id);
    await new Promise((res) => setTimeout(res, 100));
    expect(existsSync(a.backing.location)).toBe(false);
    await r.dispose();
  });
});

/**
 * The image routes against the real server: image info, the raw raster route read by zarrita's
 * FetchStore (pixels equal to the source), Range/HEAD/404, WebP tiles equal to a reference composite
 * (decoded back with sharp), thumbnail sizes, and hostile element names and keys answered 4xx.
 */
import { existsSync } from "node:fs";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { FetchStore } from "@zarrita/storage";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { toAffine6 } from "../../../src/sdk/data/affine.js";
import { allocArray } from "../../../src/sdk/data/arrays.js";
import type { ImageElement } from "../../../src/sdk/data/elements.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { elementToCanvas } from "../../../src/sdk/data/world-space.js";
import { writeCheckpoint } from "../../../src/sdk/io/checkpoint/write.js";
import type { ImageInfo } from "../../../src/sdk/raster/info.js";
import { memoryRasterSource } from "../../../src/sdk/raster/memory-source.js";
import { fixture } from "../../fixtures.js";
import { startTestServer, type TestServer } from "./harness.js";

let ts: TestServer;
let demoId: string;
let blobsId: string;
let sparseId: string;

async function open(path: string): Promise<string> {
  const s = await ts.server.service.createSession({ source: { kind: "load", path } });
  await s.ready;
  if (s.status !== "ready") throw new Error(`${path} did not load: ${s.summary().error}`);
  return s.id;
}

beforeAll(async () => {
  ts = await startTestServer({ demo: { nCells: 300, nGenes: 40, imageSize: 1200, nTranscripts: 200 } });
  demoId = await ts.openDemo();
  await cp(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"), join(ts.dataDir, "blobs.sdata.zarr"), {
    recursive: true,
  });
  blobsId = await open(join(ts.dataDir, "blobs.sdata.zarr"));
  // A 1100² image that is zero except its top-left 300²: chunk (1, 1) of level 0 holds only the fill value.
  const size = 1100;
  const data = allocArray("uint16", size * size) as Uint16Array;
  for (let y = 0; y < 300; y++)
    for (let x = 0; x < 300; x++) data[y * size + x] = 1 + ((x * 7 + y * 3) % 1000);
  const source = memoryRasterSource({ kind: "dense", dtype: "uint16", shape: [1, size, size], data });
  const el: ImageElement = {
    kind: "image",
    name: "sparse",
    axes: ["c", "y", "x"],
    channels: ["dapi"],
    dtype: "uint16",
    levels: [
      { path: "0", shape: source.shape, chunks: source.chunks, dtype: "uint16", levelTransform: [], source },
    ],
    transformations: { global: { type: "identity" } },
  };
  await writeCheckpoint(
    makeSpatialData({ images: { sparse: el } }),
    join(ts.dataDir, "sparse.sdata.zarr.zip"),
  );
  sparseId = await open(join(ts.dataDir, "sparse.sdata.zarr.zip"));
});
afterAll(async () => {
  await ts?.close();
});

async function info(id: string, element: string): Promise<ImageInfo> {
  const r = await ts.api(`/api/sessions/${id}/image/${element}/info`);
  expect(r.status, await r.clone().text()).toBe(200);
  return (await r.json()) as ImageInfo;
}

describe("image info", () => {
  it("describes a checkpoint image served from the checkpoint itself", async () => {
    const s = ts.server.service.session(demoId);
    const name = Object.keys(s.data.images)[0]!;
    const got = await info(demoId, name);
    expect(got.store).toBe("source");
    expect(got.levels).toEqual([
      { level: 0, width: 1200, height: 1200 },
      { level: 1, width: 600, height: 600 },
    ]);
    expect(got.tile_size).toBe(512);
    expect(got.raster_base_url).toBe(`/api/sessions/${demoId}/raster/${name}`);
    expect(got.zarr_group_path).toBe(`images/${name}`);
    expect(got.client_compositing).toBe(true);
    expect(got.channel_names).toEqual(s.data.images[name]!.channels);
    expect(got.channels).toBe(got.channel_names.length);
    // The same placement as the cells and boundaries.
    expect(got.pixel_to_world).toEqual(
      toAffine6(elementToCanvas(s.data, s.activeTable, s.data.images[name]!)),
    );
    const [a, , c, , e, f] = got.pixel_to_world!;
    expect(got.bounds[0]).toBeCloseTo(Math.min(c, c + a * 1200));
    expect(got.bounds[3]).toBeCloseTo(Math.max(f, f + e * 1200));
    expect(got.contrast_limits.every(([lo, hi]) => lo === 0 && hi > 0)).toBe(true);
    expect(got.contrast_range.length).toBe(got.channels);
    expect(got.is_rgb).toBe(false);
  });

  it("rebuilds a store that is not laid out for serving", async () => {
    const got = await info(blobsId, "blobs_image");
    expect(got.store).toBe("cache");
    expect(got.levels[0]).toEqual({ level: 0, width: 100, height: 100 });
    expect(got.dtype).toBe("float64");
    const labels = await info(blobsId, "blobs_labels");
    expect(labels.kind).toBe("labels");
    expect(labels.zarr_group_path).toBe("labels/blobs_labels");
  });
});

describe("raw raster route", () => {
  it("is read by zarrita's FetchStore: the same pixels as the source", async () => {
    const i = await info(blobsId, "blobs_image");
    const store = new FetchStore(`${ts.url}${i.raster_base_url}`);
    const arr = await zarr.open.v3(zarr.root(store).resolve(`${i.zarr_group_path}/s0`), { kind: "array" });
    const got = await zarr.get(arr, [1, null, null]);
    const el = ts.server.service.session(blobsId).data.images.blobs_image!;
    const src = await el.levels[0]!.source.read([1, null, null]);
    expect(Array.from(got.data as Float64Array)).toEqual(Array.from(src.data as Float64Array));
    // The group lists the levels.
    const group = await zarr.open.v3(zarr.root(store).resolve(i.zarr_group_path), { kind: "group" });
    const ms = (group.attrs.ome as { multiscales: { datasets: { path: string }[] }[] }).multiscales[0]!;
    expect(ms.datasets.length).toBe(i.levels.length);
  });

  it("answers JSON and chunks with Range, HEAD, no compression, 404 for a fill-value chunk", async () => {
    const base = `/api/sessions/${sparseId}/raster/sparse`;
    const meta = await ts.api(`${base}/images/sparse/s0/zarr.json`, {
      headers: { "accept-encoding": "gzip" },
    });
    expect(meta.status).toBe(200);
    expect(meta.headers.get("content-type")).toMatch(/^application\/json/);
    expect(meta.headers.get("accept-ranges")).toBe("bytes");
    expect(meta.headers.get("cache-control")).toBe("no-cache");
    expect(meta.headers.get("content-encoding")).toBeNull();
    const doc = (await meta.json()) as {
      shape: number[];
      chunk_grid: { configuration: { chunk_shape: number[] } };
    };
    expect(doc.shape).toEqual([1, 1100, 1100]);
    expect(doc.chunk_grid.configuration.chunk_shape).toEqual([1, 512, 512]);

    const key = `${base}/images/sparse/s0/c/0/0/0`;
    const whole = await ts.api(key, { headers: { "accept-encoding": "gzip" } });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("application/octet-stream");
    expect(whole.headers.get("content-encoding")).toBeNull();
    const bytes = new Uint8Array(await whole.arrayBuffer());
    const part = await ts.api(key, { headers: { range: "bytes=4-13" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 4-13/${bytes.length}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.subarray(4, 14));
    const head = await ts.api(key, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(bytes.length));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const past = await ts.api(key, { headers: { range: `bytes=${bytes.length + 10}-` } });
    expect(past.status).toBe(416);
    // Chunk (1, 1) holds only zeros: absent, 404, and zarrita reads it as the fill value.
    expect((await ts.api(`${base}/images/sparse/s0/c/0/1/1`)).status).toBe(404);
    expect((await ts.api(`${base}/images/sparse/s0/c/0/1/1`, { method: "HEAD" })).status).toBe(404);
    // Outside the grid, unknown level, unknown element, unknown session.
    for (const bad of [
      `${base}/images/sparse/s0/c/0/9/9`,
      `${base}/images/sparse/s7/zarr.json`,
      `${base}/images/other/zarr.json`,
      `/api/sessions/${sparseId}/raster/nope/zarr.json`,
      `/api/sessions/nope/raster/sparse/zarr.json`,
    ])
      expect((await ts.api(bad)).status, bad).toBe(404);
    const root = await ts.api(`${base}/zarr.json`);
    expect(await root.json()).toEqual({ zarr_format: 3, node_type: "group", attributes: {} });
  });

  it("answers hostile element names and keys with 4xx", async () => {
    const long = "x".repeat(5000);
    const paths = [
      `/api/sessions/${blobsId}/raster/..%2F..%2Fetc/zarr.json`,
      `/api/sessions/${blobsId}/raster/%2E%2E/zarr.json`,
      `/api/sessions/${blobsId}/raster/__proto__/zarr.json`,
      `/api/sessions/${blobsId}/raster/constructor/zarr.json`,
      `/api/sessions/${blobsId}/raster/blobs_image/..%2F..%2F..%2Fzarr.json`,
      `/api/sessions/${blobsId}/raster/blobs_image/images/blobs_image/s0/..%2F..%2F..%2F..%2Fzarr.json`,
      `/api/sessions/${blobsId}/raster/blobs_image/images/blobs_image/s0/c/0/0/0%2F..%2F..`,
      `/api/sessions/${blobsId}/raster/blobs_image/images/blobs_image/s0/c/-1/0/0`,
      `/api/sessions/${blobsId}/raster/blobs_image/images/blobs_image/s0/c/1e3/0/0`,
      `/api/sessions/${blobsId}/raster/blobs_image/${long}`,
      `/api/sessions/${blobsId}/raster/${long}/zarr.json`,
      `/api/sessions/${blobsId}/image/__proto__/info`,
      `/api/sessions/${blobsId}/image/%2E%2E%2Fblobs_image/info`,
      `/api/sessions/${blobsId}/image/${long}/info`,
      `/api/sessions/${blobsId}/image/blobs_image/tile/0/-1/0`,
      `/api/sessions/${blobsId}/image/blobs_image/tile/99/0/0`,
      `/api/sessions/${blobsId}/image/blobs_image/tile/0/5/0`,
      `/api/sessions/${blobsId}/image/blobs_image/tile/x/0/0`,
      `/api/sessions/${blobsId}/image/blobs_image/thumbnail?max_px=0`,
      `/api/sessions/${blobsId}/image/blobs_image/thumbnail?max_px=99999`,
      `/api/sessions/${blobsId}/image/blobs_image/thumbnail?channels=${encodeURIComponent("0:nocolour")}`,
      `/api/sessions/${blobsId}/image/blobs_image/tile/0/0/0?channels=0,1,2,0,1,2,0`,
      `/api/sessions/${blobsId}/image/blobs_image/tile/0/0/0?channels=${long}`,
    ];
    for (const p of paths) {
      const r = await ts.api(p);
      expect(r.status >= 400 && r.status < 500, `${p.slice(0, 150)} → ${r.status}`).toBe(true);
    }
  });
});

/** Decode a WebP response to raw RGB. */
async function rgbOf(r: Response): Promise<{ data: Uint8Array; width: number; height: number }> {
  expect(r.status, await r.clone().text()).toBe(200);
  expect(r.headers.get("content-type")).toBe("image/webp");
  const { data, info } = await sharp(Buffer.from(await r.arrayBuffer()))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

describe("WebP tiles and thumbnails", () => {
  it("a tile is the composite of its channels (lossless: exact; lossy: close)", async () => {
    const s = ts.server.service.session(demoId);
    const name = Object.keys(s.data.images)[0]!;
    const i = await info(demoId, name);
    const el = s.data.images[name]!;
    const q = `0:magenta:0:${i.contrast_limits[0]![1]},1:00ff00`;
    const hiG = i.contrast_limits[1]![1];
    // Tile (1, 1) of level 0: pixels [512, 1024) on both axes.
    const planes = await Promise.all(
      [0, 1].map((c) => el.levels[0]!.source.read([c, [512, 1024], [512, 1024]])),
    );
    const ref = new Uint8Array(512 * 512 * 3);
    const colours = [
      [255, 0, 255],
      [0, 255, 0],
    ];
    const his = [i.contrast_limits[0]![1], hiG];
    for (let p = 0; p < 512 * 512; p++)
      for (let k = 0; k < 3; k++) {
        let v = 0;
        for (let c = 0; c < 2; c++)
          v += Math.min(1, Math.max(0, Number(planes[c]!.data[p]) / his[c]!)) * colours[c]![k]!;
        ref[p * 3 + k] = Math.min(255, Math.round(v));
      }
    const exact = await rgbOf(
      await ts.api(
        `/api/sessions/${demoId}/image/${name}/tile/0/1/1?lossless=1&channels=${encodeURIComponent(q)}`,
      ),
    );
    expect([exact.width, exact.height]).toEqual([512, 512]);
    let maxExact = 0;
    for (let k = 0; k < ref.length; k++) maxExact = Math.max(maxExact, Math.abs(exact.data[k]! - ref[k]!));
    expect(maxExact).toBeLessThanOrEqual(1);
    const lossy = await rgbOf(
      await ts.api(`/api/sessions/${demoId}/image/${name}/tile/0/1/1?channels=${encodeURIComponent(q)}`),
    );
    let sum = 0;
    for (let k = 0; k < ref.length; k++) sum += Math.abs(lossy.data[k]! - ref[k]!);
    // Lossy WebP subsamples colour (4:2:0): a close, not exact, picture.
    expect(sum / ref.length).toBeLessThan(10);
    // An edge tile has its true size: level 0 is 1200 wide, tile column 2 holds 176 pixels.
    const edge = await rgbOf(await ts.api(`/api/sessions/${demoId}/image/${name}/tile/0/2/0`));
    expect([edge.width, edge.height]).toEqual([176, 512]);
  });

  it("thumbnails fit inside max_px and are never enlarged", async () => {
    const s = ts.server.service.session(demoId);
    const name = Object.keys(s.data.images)[0]!;
    const t = await rgbOf(await ts.api(`/api/sessions/${demoId}/image/${name}/thumbnail?max_px=384`));
    expect([t.width, t.height]).toEqual([384, 384]);
    const d = await rgbOf(await ts.api(`/api/sessions/${demoId}/image/${name}/thumbnail`));
    expect(Math.max(d.width, d.height)).toBe(384);
    const small = await rgbOf(
      await ts.api(`/api/sessions/${blobsId}/image/blobs_image/thumbnail?max_px=1000`),
    );
    expect([small.width, small.height]).toEqual([100, 100]);
    const half = await rgbOf(
      await ts.api(`/api/sessions/${blobsId}/image/blobs_image/thumbnail?max_px=50&channels=2`),
    );
    expect([half.width, half.height]).toEqual([50, 50]);
    const lbl = await rgbOf(await ts.api(`/api/sessions/${blobsId}/image/blobs_labels/thumbnail?max_px=64`));
    expect([lbl.width, lbl.height]).toEqual([64, 64]);
  });

  it("takes channel settings from a display's encoding", async () => {
    const s = ts.server.service.session(demoId);
    const name = Object.keys(s.data.images)[0]!;
    const d = s.addDisplay({
      type: "spatial_canvas",
      encoding: {
        coords: "obsm:spatial",
        image_layer: name,
        channels: { "0": { color: "#ff0000", contrast_limits: [0, 1] } },
      },
      viewport: { target: [0, 0], zoom: 0 },
    });
    const byDisplay = await rgbOf(
      await ts.api(`/api/sessions/${demoId}/image/${name}/tile/1/0/0?lossless=1&display=${d.id}`),
    );
    const byQuery = await rgbOf(
      await ts.api(`/api/sessions/${demoId}/image/${name}/tile/1/0/0?lossless=1&channels=0:red:0:1`),
    );
    expect(Buffer.compare(byDisplay.data, byQuery.data)).toBe(0);
    expect((await ts.api(`/api/sessions/${demoId}/image/${name}/tile/1/0/0?display=nope`)).status).toBe(404);
  });
});

describe("session close", () => {
  it("removes the session's raster cache", async () => {
    const id = await open(join(ts.dataDir, "blobs.sdata.zarr"));
    await info(id, "blobs_image");
    const dir = join(ts.dataDir, ".work", "rasters", `${process.pid}-${id}`);
    expect(existsSync(dir)).toBe(true);
    const r = await ts.api(`/api/sessions/${id}`, { method: "DELETE", json: {} });
    expect(r.status).toBe(200);
    expect(existsSync(dir)).toBe(false);
  });
});

/**
 * The serverless DataSource's images and cell boundaries, read from the demo checkpoint over HTTP
 * Range (a plain static server), agree with what the live server answers for the same data: the
 * image info (levels, channels, placement, default windows, is_rgb), the raw tiles, and the
 * boundary polygons (full and bbox-limited).
 */
import { basename, dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CheckpointDataSource, openCheckpointSource } from "../../src/ui/checkpoint-source.js";
import type { ImageInfo } from "../../src/ui/data-source.js";
import { polygonsFromIpc } from "../../src/ui/geoarrow.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { staticServer } from "./browser.js";

let ts: TestServer;
let sid: string;
let site: Awaited<ReturnType<typeof staticServer>>;
let src: CheckpointDataSource;

beforeAll(async () => {
  ts = await startTestServer({ demo: { nCells: 400, nGenes: 40, imageSize: 700, nTranscripts: 100 } });
  sid = await ts.openDemo();
  site = await staticServer(dirname(ts.demo));
  src = await openCheckpointSource(`${site.base}/${basename(ts.demo)}`);
}, 120_000);

afterAll(async () => {
  await site?.close();
  await ts?.close();
});

async function live<T>(path: string): Promise<T> {
  const r = await ts.api(`/api/sessions/${sid}${path}`);
  expect(r.status, await r.clone().text()).toBe(200);
  return (await r.json()) as T;
}

describe("the checkpoint DataSource: images", () => {
  it("lists the images and shapes the live session lists", async () => {
    const els = await live<{ images: { name: string; channels: string[] }[] }>("/elements");
    const mine = await src.getElements();
    expect(mine.images).toEqual(els.images.map((i) => ({ name: i.name, channels: i.channels })));
    expect(mine.shapes.length).toBeGreaterThan(0);
    expect((await src.getFields()).images).toEqual(els.images.map((i) => i.name));
  });

  it("computes the image info as the server does: levels, channels, placement, windows", async () => {
    const { images } = await src.getElements();
    expect(images.length).toBeGreaterThan(0);
    for (const { name } of images) {
      const want = await live<ImageInfo>(`/image/${encodeURIComponent(name)}/info`);
      const got = await src.getImageInfo(name);
      const same = [
        "element",
        "kind",
        "channels",
        "channel_names",
        "axes",
        "dtype",
        "bounds",
        "pixel_to_world",
        "coordinate_system",
        "tile_size",
        "zarr_group_path",
        "is_rgb",
      ] as const;
      for (const k of same) expect(got[k], k).toEqual(want[k]);
      expect(got.pixel_to_world).not.toBeNull();
      expect(got.levels[0]).toEqual(want.levels[0]);
      // The browser uses every level the checkpoint saved (the server stops at its base size), so
      // its windows come from a coarser level: close to the server's, not equal.
      const side = src.cp.sidecar.images.find((i) => i.name === name)!;
      expect(got.levels).toEqual(
        side.levels.map((l) => ({ level: l.level, width: l.width, height: l.height })),
      );
      expect(got.contrast_limits).toHaveLength(got.channels);
      got.contrast_limits.forEach(([lo, hi], c) => {
        expect(lo).toBe(0);
        expect(hi).toBeGreaterThan(0);
        expect(hi).toBeLessThanOrEqual(got.contrast_range[c]![1]);
        expect(Math.abs(hi - want.contrast_limits[c]![1]) / want.contrast_limits[c]![1]).toBeLessThan(0.5);
      });
    }
  });

  it("reads raw tiles out of the zip, one plane a chunk", async () => {
    const name = (await src.getElements()).images[0]!.name;
    const loader = await src.openImageLoader(name);
    const info = loader.info;
    const last = info.levels.length - 1;
    const t = await loader.getTile(last, 0, 0, 0);
    expect(t).not.toBeNull();
    expect(t!.width).toBeGreaterThan(0);
    let nonzero = 0;
    for (let i = 0; i < t!.data.length; i++) if (Number(t!.data[i]) !== 0) nonzero++;
    expect(nonzero).toBeGreaterThan(0);
    const t0 = await loader.getTile(0, 1, 1, 1);
    // Edge chunks come padded to the tile size, as from the live raster route.
    expect(t0!.width).toBe(info.tile_size);
    expect(t0!.data.length).toBe(info.tile_size * info.tile_size);
    // The zip was read in ranges, never whole.
    const zip = site.log.filter((x) => x.url.endsWith(".zip"));
    expect(zip.every((x) => x.status === 206)).toBe(true);
  });
});

describe("the checkpoint DataSource: cell boundaries", () => {
  it("answers the same polygons as the live GeoArrow route, whole and by bbox", async () => {
    const shapes = (await src.getElements()).shapes;
    const el = shapes[0]!.name;
    const bytes = async (q: string) => {
      const r = await ts.api(`/api/sessions/${sid}/shapes/${encodeURIComponent(el)}/geoarrow${q}`);
      expect(r.status).toBe(200);
      return polygonsFromIpc(new Uint8Array(await r.arrayBuffer()));
    };
    const whole = await src.getShapesGeoArrow(el, null);
    expect(whole.features).toBe(shapes[0]!.n);
    expect(whole.length).toBeGreaterThan(0);
    expect(whole).toEqual(await bytes(""));
    // Some boundaries sit on cells of the active table.
    expect(Array.from(whole.cellIndex).some((c) => c >= 0)).toBe(true);
    const xs = whole.positions.filter((_v, i) => i % 2 === 0);
    const ys = whole.positions.filter((_v, i) => i % 2 === 1);
    const mx = (Math.min(...xs) + Math.max(...xs)) / 2;
    const my = (Math.min(...ys) + Math.max(...ys)) / 2;
    const bbox = [Math.min(...xs), Math.min(...ys), mx, my];
    const part = await src.getShapesGeoArrow(el, bbox, 50);
    expect(part.features).toBeGreaterThan(0);
    expect(part.features).toBeLessThan(whole.features);
    expect(part).toEqual(await bytes(`?bbox=${bbox.join(",")}&limit=50`));
  });

  it("names an unknown element", async () => {
    await expect(src.getShapesGeoArrow("nope", null)).rejects.toThrow(/nope/);
    await expect(src.getImageInfo("nope")).rejects.toThrow(/nope/);
  });
});

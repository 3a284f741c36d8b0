/**
 * Reopen descriptors (`src/sdk/io/reopen.ts`): what a reader records beside a file-backed raster, and
 * opening it again as a worker does — the same pixels, paths checked inside the descriptor's folder.
 */
import { dirname } from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { portableReopen, reopenRaster } from "../../../src/sdk/io/reopen.js";
import { reopenDescriptor } from "../../../src/sdk/io/reopen-record.js";
import { readOmeTiff } from "../../../src/sdk/io/tiff/read.js";
import { readPictureImage } from "../../../src/sdk/io/vendors/raster-png.js";
import { attachRaster } from "../../../src/sdk/jobs/transfer.js";
import { fixture } from "../../fixtures.js";

describe("raster reopen descriptors", () => {
  it("a PNG reopens to the same window of pixels sharp decodes", async () => {
    const file = fixture("scanpy-visium/1.0.0/spatial/tissue_lowres_image.png");
    const img = await readPictureImage(file, "lowres", () => ({}));
    const how = portableReopen(img.levels[0]!.source)!;
    expect(how).toMatchObject({ kind: "picture", path: file, shape: [3, 600, 600] });
    const again = await reopenRaster(structuredClone(how));
    const win = await again.read([null, [100, 110], [200, 205]]);
    const raw = await sharp(file).extract({ left: 200, top: 100, width: 5, height: 10 }).raw().toBuffer();
    const channels = raw.length / 50;
    for (let c = 0; c < 3; c++)
      for (let p = 0; p < 50; p++) expect((win.data as Uint8Array)[c * 50 + p]).toBe(raw[p * channels + c]);
  });

  it("an OME-TIFF level reopens to the pixels the main thread reads", async () => {
    const file = fixture("sfe-toy/xenium/morphology_focus.ome.tif");
    const img = await readOmeTiff(file);
    const how = reopenDescriptor(img.levels[0]!.source)!;
    expect(how).toMatchObject({ kind: "ome-tiff", path: file, series: 0, level: 0 });
    const again = await reopenRaster(structuredClone(how));
    const sel = [0, [50, 90], [10, 70]] as const;
    expect(Array.from((await again.read([...sel])).data as Uint16Array)).toEqual(
      Array.from((await img.levels[0]!.source.read([...sel])).data as Uint16Array),
    );
  });

  it("refuses a path outside the descriptor's folder, and a marker that reopens to another shape", async () => {
    const file = fixture("scanpy-visium/1.0.0/spatial/tissue_lowres_image.png");
    const elsewhere = dirname(fixture("sfe-toy/xenium/cells.parquet"));
    await expect(
      reopenRaster({ kind: "picture", path: file, confine: elsewhere, shape: [3, 600, 600] }),
    ).rejects.toThrow(/outside/);
    await expect(reopenRaster({ kind: "nope" } as never)).rejects.toThrow(/unknown raster reopen kind/);
    const marker = {
      kind: "detached-raster" as const,
      shape: [3, 10, 10],
      dtype: "uint8" as const,
      chunks: [1, 10, 10],
      reopen: { kind: "picture" as const, path: file, confine: dirname(file), shape: [3, 600, 600] },
    };
    await expect(attachRaster(marker, "images.x").read()).rejects.toThrow(/reopened as \[3,600,600\]/);
  });
});

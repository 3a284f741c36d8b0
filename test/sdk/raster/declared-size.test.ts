/**
 * An image declaring more pixels than the work dir can hold once tiled (2 TB, as a hostile or broken
 * OME-Zarr can) is refused before its rebuild writes anything, with a DataError (422 over HTTP) naming the
 * element, its declared shape and the free space — instead of streaming for hours and filling the disk.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImageElement, RasterSource } from "../../../src/sdk/data/elements.js";
import { DataError } from "../../../src/sdk/io/data-error.js";
import { buildServedRaster } from "../../../src/sdk/raster/build.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tessera-declared-size-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a rebuild of an image larger than the work dir", () => {
  it("is refused up front with a DataError, and nothing is read or written", async () => {
    let reads = 0;
    const shape = [1, 1_000_000, 1_000_000];
    const source: RasterSource = {
      shape,
      dtype: "uint16",
      chunks: [1, 1024, 1024],
      read: async () => {
        reads++;
        throw new Error("must not be read");
      },
    };
    const el: ImageElement = {
      kind: "image",
      name: "huge",
      axes: ["c", "y", "x"],
      channels: ["0"],
      dtype: "uint16",
      levels: [{ path: "0", shape, chunks: source.chunks, dtype: "uint16", levelTransform: [], source }],
      transformations: {},
    };
    const out = join(dir, "huge");
    const err = await buildServedRaster(el, out, { basePx: 1024 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataError);
    expect((err as DataError).status).toBe(422);
    expect((err as Error).message).toMatch(
      /^huge: the image declares 1 × 1000000 × 1000000 uint16 \(\d+ GB once tiled\), more than the [\d.]+ GB free in the work dir/,
    );
    expect(reads).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  });
});

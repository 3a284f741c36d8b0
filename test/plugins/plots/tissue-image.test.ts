/**
 * `pl.spatial_scatter` draws the tissue image under the spots, as squidpy does: an RGB image (left
 * half red, right half blue) placed by a scale transform of 2 world units per pixel under four cells
 * at the corners of its world extent shows red at world x = 50 and blue at x = 150 in the figure's
 * PNG, the image element is among the plot's references, and `img: false` leaves the plot white there.
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import * as squidpy from "../../../src/plugins/plots/squidpy-spatial.js";
import { allocArray, dense, strings } from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import type { ImageElement } from "../../../src/sdk/data/elements.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import { defaultAxes } from "../../../src/sdk/data/transforms.js";
import { svgToPng } from "../../../src/sdk/figures/export.js";
import type { OpContext } from "../../../src/sdk/jobs/operation.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { memoryRasterSource } from "../../../src/sdk/raster/memory-source.js";

const ctx: OpContext = {
  table: "table",
  signal: new AbortController().signal,
  rng: new Rng(0),
  threads: 1,
  progress: () => {},
  log: () => {},
};

function data() {
  const w = 100;
  const h = 100;
  const px = allocArray("uint8", 3 * w * h) as Uint8Array;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      px[0 * w * h + y * w + x] = x < w / 2 ? 255 : 0; // red
      px[2 * w * h + y * w + x] = x < w / 2 ? 0 : 255; // blue
    }
  const source = memoryRasterSource({ kind: "dense", dtype: "uint8", shape: [3, h, w], data: px });
  const image: ImageElement = {
    kind: "image",
    name: "tissue",
    axes: ["c", "y", "x"],
    channels: ["r", "g", "b"],
    dtype: "uint8",
    levels: [
      { path: "0", shape: source.shape, chunks: source.chunks, dtype: "uint8", levelTransform: [], source },
    ],
    transformations: {
      global: {
        type: "scale",
        scale: [2, 2],
        input: { name: "xy", axes: defaultAxes(["x", "y"]) },
        output: { name: "global", axes: defaultAxes(["x", "y"]) },
      },
    },
  };
  const xy = Float64Array.from([2, 2, 198, 2, 2, 198, 198, 198]);
  const table = makeTable({
    obs: dataFrame(strings(["a", "b", "c", "d"])),
    var: dataFrame(strings(["g"])),
    X: dense(new Float32Array(4), [4, 1]),
    obsm: { spatial: dense(xy, [4, 2]) },
  });
  return makeSpatialData({ tables: { table }, images: { tissue: image } });
}

/** RGB of the figure PNG (144 dpi: 2 px per SVG unit) at world (wx, wy), through the image's rect. */
async function worldPixel(svg: string, wx: number, wy: number): Promise<number[]> {
  const m = /<image [^>]*class="background-image"[^>]*>/.exec(svg);
  const rectOf = (tag: string) =>
    ["x", "y", "width", "height"].map((k) => Number(new RegExp(`\\s${k}="([\\d.-]+)"`).exec(tag)![1]));
  // the plot window: the cells' extent (2 … 198) padded by 3 % on each side
  const lo = 2 - 0.03 * 196;
  const hi = 198 + 0.03 * 196;
  const [x, y, w, h] = rectOf(m![0]);
  const sx = x! + ((wx - lo) / (hi - lo)) * w!;
  const sy = y! + ((wy - lo) / (hi - lo)) * h!;
  const png = await svgToPng(svg, { dpi: 144 });
  const { data: d, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const o = (Math.floor(sy * 2) * info.width + Math.floor(sx * 2)) * info.channels;
  return [...d.subarray(o, o + 3)];
}

describe("spatial_scatter's tissue image", () => {
  it("draws the image under the spots through the element's placement", async () => {
    const r = await squidpy.spatial_scatter(data(), { color: null, size: 1 }, ctx);
    expect(r.svg).toContain('class="background-image"');
    expect(r.references).toContain("images:tissue");
    expect(await worldPixel(r.svg, 50, 100)).toEqual([255, 0, 0]);
    expect(await worldPixel(r.svg, 150, 100)).toEqual([0, 0, 255]);
  });

  it("leaves it out with img: false", async () => {
    const r = await squidpy.spatial_scatter(data(), { color: null, size: 1, img: false }, ctx);
    expect(r.svg).not.toContain("background-image");
    expect(r.references).not.toContain("images:tissue");
  });
});

/**
 * `im.segment` (threshold): Otsu's threshold against scikit-image 0.26's `threshold_otsu` (values below
 * computed with `/tmp/scverse/venv/bin/python` on a seeded image rounded to 4 decimals), and 8-connected
 * components on a hand-drawn image whose labels follow by hand.
 */
import { describe, expect, it } from "vitest";
import { labelComponents, otsuThreshold, segment } from "../../../src/plugins/spatial/segment.js";
import { dense } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import type { ImageElement } from "../../../src/sdk/data/elements.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { memoryRasterSource } from "../../../src/sdk/raster/memory-source.js";
import { testContext } from "../context.js";

// 12 × 16 image, threshold_otsu → 0.29891601562500003
const OTSU_VALUES =
  `0.1911,0.0809,0.0123,0.005,0.244,0.2738,0.182,0.2188,0.1631,0.2805,0.2448,0.0008,0.2572,0.0101,0.2189,0.0527,0.259,0.1624,0.0899,0.1268,0.0085,0.0373,0.2012,0.1942,0.1846,0.1151,0.2992,0.2943,0.8557,0.8451,0.8565,0.1167,0.0405,0.2164,0.7576,0.6931,0.7458,0.8668,0.2802,0.1073,0.1715,0.0966,0.1783,0.1014,0.7675,0.9171,0.7181,0.187,0.0252,0.2498,0.8361,0.6718,0.8629,0.6176,0.1008,0.0451,0.1351,0.2389,0.0692,0.0156,0.1214,0.0596,0.0272,0.1741,0.0896,0.2016,0.6599,0.8826,0.7095,0.6316,0.1887,0.2781,0.1321,0.2864,0.15,0.1276,0.1861,0.2985,0.2847,0.138,0.2273,0.1492,0.1588,0.2357,0.1244,0.2203,0.2133,0.2796,0.0345,0.2187,0.2782,0.2904,0.0044,0.2591,0.2944,0.2872,0.0446,0.2918,0.267,0.2467,0.144,0.0697,0.2406,0.2771,0.0798,0.1617,0.1328,0.2793,0.0122,0.2196,0.1843,0.0085,0.2158,0.0048,0.2274,0.1538,0.2787,0.0198,0.2524,0.02,0.1033,0.6291,0.7898,0.6687,0.5777,0.5725,0.2664,0.0678,0.0374,0.0865,0.1758,0.1662,0.2429,0.1681,0.0865,0.1239,0.2454,0.688,0.7877,0.6108,0.6658,0.6782,0.2545,0.0436,0.122,0.973,0.0129,0.2468,0.1246,0.2489,0.003,0.1095,0.0236,0.6958,0.5822,0.7108,0.7831,0.538,0.2594,0.0178,0.1142,0.1289,0.1467,0.2929,0.2327,0.0927,0.081,0.2589,0.2644,0.6532,0.6033,0.7985,0.5948,0.5548,0.264,0.2437,0.2004,0.2875,0.2777,0.2245,0.2582,0.0741,0.0424,0.201,0.2144,0.0501,0.1187,0.2731,0.1684,0.1735,0.0582,0.1578`
    .split(",")
    .map(Number);

function imageOf(values: number[], h: number, w: number): ImageElement {
  const arr = dense(Float32Array.from(values), [1, h, w], "float32");
  return {
    kind: "image",
    name: "img",
    transformations: { global: { type: "identity" } } as ImageElement["transformations"],
    axes: ["c", "y", "x"],
    channels: ["0"],
    dtype: "float32",
    levels: [
      {
        path: "0",
        shape: [1, h, w],
        chunks: [1, h, w],
        dtype: "float32",
        levelTransform: [],
        source: memoryRasterSource(arr),
      },
    ],
  };
}

describe("im.segment", () => {
  it("Otsu's threshold as scikit-image's", () => {
    expect(otsuThreshold(Float64Array.from(OTSU_VALUES))).toBeCloseTo(0.29891601562500003, 12);
  });

  it("8-connected components in raster order; the labels element keeps the image's transformations", async () => {
    // 8 × 10, background 0.1; A = (1,1) (1,2) (2,2); B = (2,5) (3,6) touching diagonally; C = (6,8).
    const h = 8;
    const w = 10;
    const v = new Array(h * w).fill(0.1);
    for (const [r, c] of [
      [1, 1],
      [1, 2],
      [2, 2],
      [2, 5],
      [3, 6],
      [6, 8],
    ] as const)
      v[r * w + c] = 0.9;
    const sd = makeSpatialData({ images: { img: imageOf(v, h, w) } });
    const { ctx, logs } = testContext();
    const change = await segment(sd, { method: "threshold" }, ctx);
    const out = applyChange(sd, change).sdata.labels.img_segmented_threshold!;
    expect(out.transformations).toBe(sd.images.img!.transformations);
    const labels = (await out.levels[0]!.source.read()).data as Uint32Array;
    const at = (r: number, c: number) => labels[r * w + c];
    expect([at(1, 1), at(1, 2), at(2, 2)]).toEqual([1, 1, 1]);
    expect([at(2, 5), at(3, 6)]).toEqual([2, 2]);
    expect(at(6, 8)).toBe(3);
    expect(at(0, 0)).toBe(0);
    expect(logs.join("\n")).toMatch(/3 objects/);
    // Below a given threshold: the background is one object.
    expect(
      labelComponents(
        Uint8Array.from(v, (x) => (x < 0.5 ? 1 : 0)),
        h,
        w,
      ).count,
    ).toBe(1);
    await expect(segment(sd, { channel: 2 }, testContext().ctx)).rejects.toThrow(/channel 2/);
    await expect(segment(makeSpatialData(), {}, testContext().ctx)).rejects.toThrow(/no image/);
  });
});

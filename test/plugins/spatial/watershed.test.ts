/**
 * The watershed kernels against SciPy / scikit-image 0.26 on a real crop: morphology_focus.ome.tif
 * (sfe-toy Xenium) rows and columns 96–143. Expected labels made once with `/tmp/scverse/venv`, squidpy
 * 1.8's SegmentationWatershed steps, run-length encoded as [label, run, label, run, …] in raster order:
 *
 *   a = tifffile.imread("morphology_focus.ome.tif")[96:144, 96:144]
 *   mask = a >= threshold_otsu(a)                                   # 109
 *   distance = ndi.distance_transform_edt(mask)
 *   coords = peak_local_max(distance, footprint=np.ones((5, 5)), labels=mask)
 *   markers, n = ndi.label(local_maxi_from(coords))                  # n = 115
 *   ws = watershed(-distance, markers, mask=mask)
 */
import { describe, expect, it } from "vitest";
import { otsuThreshold } from "../../../src/plugins/spatial/segment.js";
import { readOmeTiff } from "../../../src/sdk/io/tiff/read.js";
import {
  distanceTransformEdt,
  label4,
  peakLocalMax,
  watershedMask,
} from "../../../src/sdk/math/spatial/watershed.js";
import { fixture } from "../../fixtures.js";

const RLE: number[] = [
  1, 3, 0, 1, 2, 3, 0, 19, 4, 1, 0, 1, 4, 1, 0, 1, 4, 1, 0, 15, 5, 1, 0, 1, 1, 4, 0, 1, 2, 3, 0, 3, 3, 2, 0,
  13, 4, 5, 0, 15, 5, 2, 0, 1, 1, 1, 0, 3, 2, 3, 0, 1, 10, 1, 0, 4, 6, 1, 0, 2, 7, 1, 0, 2, 8, 2, 0, 24, 5, 1,
  0, 7, 2, 1, 0, 2, 10, 4, 6, 2, 0, 3, 9, 1, 0, 2, 8, 2, 0, 23, 5, 2, 0, 4, 2, 3, 0, 1, 10, 4, 0, 3, 13, 1, 0,
  3, 11, 2, 0, 19, 12, 1, 0, 6, 5, 1, 0, 9, 10, 3, 0, 2, 13, 4, 0, 2, 11, 3, 0, 3, 16, 2, 0, 2, 18, 1, 0, 6,
  14, 1, 0, 2, 12, 2, 0, 13, 17, 2, 0, 2, 10, 1, 0, 1, 20, 1, 0, 1, 13, 1, 0, 2, 15, 1, 0, 2, 11, 2, 0, 2, 16,
  2, 0, 1, 18, 3, 0, 8, 23, 1, 0, 1, 12, 1, 0, 14, 17, 2, 0, 1, 20, 3, 0, 13, 18, 5, 0, 3, 19, 1, 0, 3, 23, 2,
  0, 15, 17, 2, 0, 1, 20, 3, 21, 4, 0, 7, 22, 1, 0, 1, 18, 3, 0, 1, 25, 1, 0, 3, 19, 2, 0, 1, 23, 3, 0, 1, 27,
  1, 0, 17, 20, 1, 0, 2, 21, 1, 0, 1, 21, 2, 0, 7, 30, 1, 18, 2, 0, 2, 25, 1, 0, 3, 19, 1, 0, 2, 23, 2, 0, 1,
  27, 2, 0, 17, 28, 1, 0, 4, 21, 1, 0, 1, 24, 1, 0, 5, 30, 2, 0, 1, 18, 1, 25, 3, 0, 4, 26, 1, 0, 2, 23, 1,
  27, 3, 0, 17, 28, 1, 0, 2, 32, 1, 0, 1, 21, 1, 0, 2, 29, 1, 0, 4, 30, 4, 0, 8, 31, 2, 0, 1, 27, 3, 0, 1, 35,
  2, 0, 14, 28, 2, 32, 3, 0, 1, 33, 1, 0, 1, 29, 1, 0, 5, 30, 1, 0, 2, 34, 2, 0, 7, 31, 3, 0, 2, 35, 4, 0, 15,
  32, 2, 0, 1, 44, 1, 0, 2, 29, 1, 0, 1, 36, 3, 0, 18, 35, 1, 0, 1, 35, 1, 41, 1, 0, 4, 37, 1, 0, 10, 43, 1,
  32, 1, 44, 2, 0, 1, 38, 1, 0, 1, 36, 3, 0, 2, 39, 1, 0, 12, 40, 2, 0, 3, 41, 4, 0, 2, 42, 1, 0, 1, 42, 1, 0,
  9, 43, 1, 0, 2, 44, 2, 0, 2, 36, 1, 0, 1, 36, 1, 0, 2, 39, 2, 0, 12, 40, 3, 45, 2, 41, 3, 0, 2, 42, 3, 0,
  16, 36, 2, 0, 3, 39, 2, 0, 13, 40, 2, 0, 1, 45, 1, 0, 1, 41, 2, 0, 1, 46, 1, 0, 1, 42, 2, 0, 16, 36, 2, 0,
  1, 47, 1, 0, 2, 39, 1, 0, 12, 48, 1, 0, 3, 45, 1, 48, 1, 41, 1, 0, 3, 50, 1, 42, 2, 0, 17, 36, 1, 0, 1, 47,
  2, 0, 2, 49, 4, 0, 8, 48, 4, 0, 1, 48, 1, 0, 4, 50, 1, 0, 1, 52, 1, 0, 24, 49, 2, 0, 1, 51, 2, 0, 6, 48, 1,
  0, 2, 48, 4, 0, 1, 50, 4, 52, 1, 0, 19, 53, 1, 0, 1, 53, 1, 0, 1, 49, 2, 0, 1, 51, 3, 0, 5, 48, 2, 0, 2, 48,
  2, 0, 2, 48, 1, 50, 1, 0, 1, 50, 1, 52, 3, 0, 18, 53, 4, 49, 2, 0, 2, 51, 1, 0, 3, 48, 3, 0, 1, 48, 3, 0, 1,
  48, 4, 50, 2, 0, 2, 52, 2, 0, 2, 54, 2, 0, 16, 53, 1, 0, 2, 49, 2, 0, 1, 51, 2, 0, 1, 48, 2, 0, 1, 48, 3, 0,
  2, 48, 2, 0, 1, 48, 2, 0, 5, 55, 3, 0, 16, 60, 2, 0, 6, 51, 1, 0, 3, 48, 3, 0, 1, 48, 3, 0, 3, 48, 1, 0, 4,
  56, 2, 0, 3, 57, 1, 0, 1, 58, 2, 0, 2, 64, 2, 59, 4, 0, 4, 60, 1, 0, 5, 67, 2, 0, 2, 48, 3, 0, 1, 48, 1, 0,
  5, 61, 1, 0, 8, 62, 1, 0, 1, 63, 1, 0, 2, 58, 2, 0, 1, 64, 3, 0, 1, 59, 2, 0, 1, 65, 1, 0, 4, 66, 3, 0, 1,
  67, 3, 0, 2, 48, 1, 0, 1, 48, 1, 0, 1, 48, 4, 0, 1, 68, 1, 0, 9, 62, 2, 63, 2, 0, 2, 58, 1, 0, 2, 64, 1, 69,
  2, 0, 2, 70, 1, 0, 6, 66, 3, 67, 2, 0, 5, 48, 3, 0, 1, 48, 1, 0, 1, 71, 1, 0, 8, 72, 1, 0, 5, 79, 1, 0, 1,
  58, 1, 0, 1, 73, 2, 69, 1, 0, 1, 74, 2, 0, 1, 75, 1, 0, 14, 76, 1, 0, 2, 48, 3, 0, 1, 71, 1, 0, 9, 77, 1, 0,
  1, 78, 1, 0, 1, 79, 3, 0, 2, 73, 4, 0, 1, 74, 2, 0, 19, 48, 1, 0, 13, 80, 1, 0, 3, 79, 1, 0, 4, 73, 2, 0, 3,
  74, 2, 0, 2, 81, 1, 0, 1, 82, 1, 0, 1, 83, 1, 0, 35, 85, 1, 0, 3, 74, 1, 0, 2, 81, 2, 0, 2, 84, 1, 0, 36,
  85, 2, 0, 1, 85, 1, 0, 3, 86, 2, 0, 2, 84, 2, 0, 34, 85, 3, 0, 1, 85, 3, 0, 1, 86, 3, 0, 2, 84, 1, 0, 15,
  87, 3, 0, 18, 85, 5, 0, 2, 86, 1, 0, 1, 88, 2, 0, 14, 87, 4, 0, 2, 90, 1, 0, 17, 85, 1, 0, 6, 88, 2, 0, 14,
  89, 1, 0, 5, 90, 2, 91, 3, 0, 13, 92, 1, 0, 1, 93, 2, 0, 20, 89, 1, 0, 2, 94, 1, 0, 1, 95, 1, 0, 1, 90, 1,
  91, 1, 0, 2, 96, 1, 0, 36, 89, 1, 0, 4, 95, 1, 0, 1, 90, 1, 0, 1, 97, 1, 0, 2, 98, 1, 0, 35, 89, 2, 0, 3,
  95, 1, 0, 1, 95, 1, 0, 3, 98, 2, 0, 24, 101, 2, 0, 9, 102, 1, 0, 1, 99, 2, 0, 1, 95, 3, 100, 2, 0, 2, 98, 1,
  0, 24, 101, 3, 0, 7, 102, 3, 99, 3, 0, 1, 95, 2, 0, 2, 103, 1, 0, 1, 98, 1, 0, 3, 108, 3, 0, 1, 104, 1, 0,
  14, 105, 3, 101, 1, 0, 8, 102, 3, 0, 2, 99, 2, 0, 4, 103, 1, 0, 1, 98, 1, 0, 4, 108, 1, 0, 1, 104, 2, 0, 12,
  106, 3, 0, 1, 105, 1, 0, 10, 102, 1, 0, 8, 111, 1, 0, 2, 98, 1, 0, 1, 107, 1, 0, 1, 108, 4, 0, 1, 109, 2, 0,
  9, 106, 2, 0, 1, 106, 1, 105, 3, 0, 17, 111, 2, 0, 5, 108, 4, 110, 2, 0, 12, 113, 2, 0, 1, 113, 1, 0, 19,
  111, 4, 0, 5, 108, 1, 0, 3, 112, 1, 0, 10, 113, 5, 0, 20, 111, 2, 0, 3, 114, 1, 0, 1, 115, 1, 108, 3, 0, 13,
  113, 3, 0, 24, 114, 3, 0, 1, 115, 1, 0, 41, 114, 4, 0, 42,
];

function decode(rle: readonly number[], n: number): Int32Array {
  const out = new Int32Array(n);
  let k = 0;
  for (let i = 0; i < rle.length; i += 2) {
    out.fill(rle[i]!, k, k + rle[i + 1]!);
    k += rle[i + 1]!;
  }
  expect(k).toBe(n);
  return out;
}

describe("watershed kernels", () => {
  it("equal scikit-image's labels exactly on a real 48 × 48 crop", async () => {
    const img = await readOmeTiff(fixture("sfe-toy/xenium/morphology_focus.ome.tif"));
    const crop = (await img.levels[0]!.source.read([0, [96, 144], [96, 144]])).data as Uint16Array;
    const h = 48;
    const w = 48;
    const thr = otsuThreshold(crop, true);
    expect(thr).toBe(109);
    const mask = Uint8Array.from(crop, (v) => (v >= thr ? 1 : 0));
    const { labels, count } = watershedMask(mask, h, w);
    expect(count).toBe(115);
    expect(Array.from(labels)).toEqual(Array.from(decode(RLE, h * w)));
  });

  it("distance transform: exact Euclidean distances to the background", () => {
    // 5 × 7 mask, background only at (0, 0) and (4, 6): every distance is to the nearer of the two.
    const h = 5;
    const w = 7;
    const mask = new Uint8Array(h * w).fill(1);
    mask[0] = 0;
    mask[h * w - 1] = 0;
    const d = distanceTransformEdt(mask, h, w);
    for (let r = 0; r < h; r++)
      for (let c = 0; c < w; c++) {
        const want = Math.min(Math.hypot(r, c), Math.hypot(r - 4, c - 6));
        expect(d[r * w + c]).toBeCloseTo(want, 12);
      }
    // No background at all: infinitely far.
    expect(distanceTransformEdt(new Uint8Array(4).fill(1), 2, 2)[0]).toBe(Number.POSITIVE_INFINITY);
  });

  it("peaks ignore the image border and a flat object; markers are 4-connected", () => {
    // A 9 × 9 square of ones in a 11 × 11 frame: its centre is the only distance peak.
    const h = 11;
    const w = 11;
    const mask = new Uint8Array(h * w);
    for (let r = 1; r < 10; r++) for (let c = 1; c < 10; c++) mask[r * w + c] = 1;
    const d = distanceTransformEdt(mask, h, w);
    const pk = peakLocalMax(d, mask, h, w, 5);
    expect([...pk.keys()].filter((i) => pk[i])).toEqual([5 * w + 5]);
    const diag = Uint8Array.from([1, 0, 0, 1]);
    expect(label4(diag, 2, 2).count).toBe(2);
  });
});

/**
 * `im.calculate_image_features` on a small uint8 image whose crop statistics were computed with
 * numpy 2 / scikit-image 0.26 (`/tmp/scverse/venv/bin/python`): `np.quantile`, `np.histogram(crop,
 * bins=4, range=(crop.min(), crop.max()))`, and `graycoprops(graycomatrix(crop, [1], [0, π/4, π/2,
 * 3π/4], levels=256), prop)`. The image is v(x, y) = (37x + 11y + (xy mod 7)) mod 256, 20 × 20.
 */
import { describe, expect, it } from "vitest";
import { calculate_image_features } from "../../../src/plugins/spatial/im.js";
import { dense } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import type { ImageElement } from "../../../src/sdk/data/elements.js";
import { memoryRasterSource } from "../../../src/sdk/raster/memory-source.js";
import { testContext } from "../context.js";
import { cat, tableData } from "./build.js";

function image(): ImageElement {
  const data = new Uint8Array(400);
  for (let y = 0; y < 20; y++)
    for (let x = 0; x < 20; x++) data[y * 20 + x] = (x * 37 + y * 11 + ((x * y) % 7)) % 256;
  const arr = dense(data, [1, 20, 20], "uint8");
  return {
    kind: "image",
    name: "he",
    transformations: { global: { type: "identity" } } as ImageElement["transformations"],
    axes: ["c", "y", "x"],
    channels: ["0"],
    dtype: "uint8",
    levels: [
      {
        path: "0",
        shape: [1, 20, 20],
        chunks: [1, 20, 20],
        dtype: "uint8",
        levelTransform: [],
        source: memoryRasterSource(arr),
      },
    ],
  };
}

const value = (df: DataFrame, name: string, row: number) =>
  (df.columns[name] as { data: Float64Array }).data[row]!;

describe("im.calculate_image_features", () => {
  it("summary, histogram and texture of a crop as numpy and scikit-image compute them", async () => {
    const base = tableData({
      obs: { s: cat(["a", "b"]) },
      xy: [
        [5, 5],
        [40, 40],
      ],
    });
    const sd = { ...base, images: { he: image() } };
    const { ctx } = testContext();
    const change = await calculate_image_features(
      sd,
      { features: ["summary", "histogram", "texture"], spot_diameter: 4, bins: 4 },
      ctx,
    );
    const f = applyChange(sd, change).sdata.tables.table!.obsm.img_features as DataFrame;
    // crop img[3:8, 3:8]
    expect(value(f, "summary_ch-0_quantile-0.9", 0)).toBeCloseTo(231, 12);
    expect(value(f, "summary_ch-0_quantile-0.5", 0)).toBeCloseTo(160, 12);
    expect(value(f, "summary_ch-0_quantile-0.1", 0)).toBeCloseTo(17, 12);
    expect([0, 1, 2, 3].map((b) => value(f, `histogram_ch-0_bin-${b}`, 0))).toEqual([9, 2, 6, 8]);
    const want: Record<string, number[]> = {
      contrast: [13056.100000000002, 15299.125, 3160.9, 10566.5],
      dissimilarity: [82.20000000000002, 97.875, 22.3, 64.625],
      homogeneity: [0.0005793511703507654, 0.00032167469443296836, 0.01007097200312596, 0.001196707974680913],
      correlation: [0.2533145491892672, 0.10902004565438819, 0.7883412028684377, 0.40132123335078485],
      ASM: [0.05000000000000003, 0.0625, 0.05000000000000003, 0.0625],
    };
    const angles = ["0.00", "0.79", "1.57", "2.36"];
    for (const [prop, vals] of Object.entries(want))
      vals.forEach((v, a) => {
        const got = value(f, `texture_${prop}_ch-0_dist-1_angle-${angles[a]}`, 0);
        expect(Math.abs(got - v)).toBeLessThan(1e-9 * Math.max(1, Math.abs(v)));
      });
    // The second spot lies outside the image: its features are NaN.
    expect(value(f, "summary_ch-0_quantile-0.5", 1)).toBeNaN();
    expect(f.index.values).toEqual(["c0", "c1"]);
  });

  it("names what is missing: the image, the spot diameter", async () => {
    const base = tableData({ obs: { s: cat(["a"]) }, xy: [[5, 5]] });
    await expect(calculate_image_features(base, { spot_diameter: 4 }, testContext().ctx)).rejects.toThrow(
      /no image/,
    );
    const sd = { ...base, images: { he: image() } };
    await expect(calculate_image_features(sd, {}, testContext().ctx)).rejects.toThrow(/spot_diameter/);
    await expect(
      calculate_image_features(sd, { layer: "x", spot_diameter: 4 }, testContext().ctx),
    ).rejects.toThrow(/no image "x"/);
  });
});

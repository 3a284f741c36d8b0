/**
 * `im.calculate_image_features` and `im.segment` through the SDK facade, in real worker threads, on
 * file-backed images: a Visium PNG (sharp), a Xenium morphology OME-TIFF (geotiff), the OME-Zarr
 * image of a checkpoint (a zip store) and of a SpatialData folder (a directory store). Each worker
 * reopens the file from the raster's reopen descriptor (`src/sdk/io/reopen.ts`).
 *
 * Expected Visium features (first three spots of scanpy-visium/1.0.0 on its lowres image, spot_scale
 * 3: 13 × 13 crops) were computed once with numpy 2 / scikit-image 0.26 (`/tmp/scverse/venv`) by:
 *
 *   img = np.asarray(Image.open("spatial/tissue_lowres_image.png").convert("RGB"))
 *   s = tissue_lowres_scalef; r = floor(spot_diameter_fullres * 3 * s / 2 + 0.5)        # 6
 *   px, py = floor(pxl_col * s + 0.5), floor(pxl_row * s + 0.5)    # centres 441.5/383.1, 184.7/432.3, 416.3/189.2
 *   crop = img[py - r:py + r + 1, px - r:px + r + 1, :]
 *   np.quantile(crop[..., c], q); np.histogram(crop[..., c], bins=10, range=(crop.min(), crop.max()))
 *   graycoprops(graycomatrix(crop[..., c], [1], [0, π/4, π/2, 3π/4], levels=256), prop)
 *
 * Expected segmentation of morphology_focus.ome.tif (237 × 237 uint16) with SciPy / scikit-image 0.26,
 * squidpy 1.8's SegmentationWatershed steps: threshold_otsu → 101; label(mask, connectivity=2) → 381
 * components; peak_local_max(distance_transform_edt(mask), footprint=ones((5, 5)), labels=mask) →
 * 5,742 peaks, ndi.label → 2,142 markers, watershed(−distance, markers, mask=mask) → labels 1…2142.
 * The worker's labels are compared pixel by pixel with the kernel run in the test on pixels read
 * straight through geotiff (the kernel itself equals scikit-image exactly: watershed.test.ts).
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromFile } from "geotiff";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { labelComponents, otsuThreshold } from "../../../src/plugins/spatial/segment.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import type { LabelsElement } from "../../../src/sdk/data/elements.js";
import { watershedMask } from "../../../src/sdk/math/spatial/watershed.js";
import { Tessera } from "../../../src/sdk/tessera.js";
import { fixture } from "../../fixtures.js";

const EXPECTED: Record<string, Record<string, number>> = {
  "AAACAAGTATCTCCCA-1": {
    "summary_ch-0_quantile-0.9": 173.20000000000002,
    "summary_ch-0_quantile-0.5": 163.0,
    "summary_ch-0_quantile-0.1": 152.0,
    "summary_ch-1_quantile-0.9": 174.0,
    "summary_ch-1_quantile-0.5": 137.0,
    "summary_ch-1_quantile-0.1": 107.8,
    "summary_ch-2_quantile-0.9": 175.20000000000002,
    "summary_ch-2_quantile-0.5": 159.0,
    "summary_ch-2_quantile-0.1": 143.0,
    "histogram_ch-1_bin-0": 2,
    "histogram_ch-1_bin-1": 6,
    "histogram_ch-1_bin-2": 14,
    "histogram_ch-1_bin-3": 15,
    "histogram_ch-1_bin-4": 33,
    "histogram_ch-1_bin-5": 27,
    "histogram_ch-1_bin-6": 26,
    "histogram_ch-1_bin-7": 16,
    "histogram_ch-1_bin-8": 15,
    "histogram_ch-1_bin-9": 15,
    "texture_contrast_ch-2_dist-1_angle-0.00": 260.68589743589746,
    "texture_contrast_ch-2_dist-1_angle-0.79": 288.3888888888889,
    "texture_contrast_ch-2_dist-1_angle-1.57": 116.45512820512815,
    "texture_contrast_ch-2_dist-1_angle-2.36": 199.55555555555554,
    "texture_dissimilarity_ch-2_dist-1_angle-0.00": 12.429487179487177,
    "texture_dissimilarity_ch-2_dist-1_angle-0.79": 13.305555555555564,
    "texture_dissimilarity_ch-2_dist-1_angle-1.57": 8.519230769230758,
    "texture_dissimilarity_ch-2_dist-1_angle-2.36": 11.097222222222229,
    "texture_homogeneity_ch-2_dist-1_angle-0.00": 0.10005360539515824,
    "texture_homogeneity_ch-2_dist-1_angle-0.79": 0.07773735779693976,
    "texture_homogeneity_ch-2_dist-1_angle-1.57": 0.1073554934633972,
    "texture_homogeneity_ch-2_dist-1_angle-2.36": 0.0757071207717699,
    "texture_correlation_ch-2_dist-1_angle-0.00": -0.012492157191367393,
    "texture_correlation_ch-2_dist-1_angle-0.79": -0.12023725873123714,
    "texture_correlation_ch-2_dist-1_angle-1.57": 0.5629860728723631,
    "texture_correlation_ch-2_dist-1_angle-2.36": 0.22418502940146226,
    "texture_ASM_ch-2_dist-1_angle-0.00": 0.0068211702827087346,
    "texture_ASM_ch-2_dist-1_angle-0.79": 0.007330246913580269,
    "texture_ASM_ch-2_dist-1_angle-1.57": 0.0064102564102564005,
    "texture_ASM_ch-2_dist-1_angle-2.36": 0.007619598765432119,
  },
  "AAACACCAATAACTGC-1": {
    "summary_ch-0_quantile-0.9": 176.0,
    "summary_ch-0_quantile-0.5": 160.0,
    "summary_ch-0_quantile-0.1": 148.0,
    "summary_ch-1_quantile-0.9": 177.0,
    "summary_ch-1_quantile-0.5": 134.0,
    "summary_ch-1_quantile-0.1": 102.8,
    "summary_ch-2_quantile-0.9": 178.20000000000002,
    "summary_ch-2_quantile-0.5": 158.0,
    "summary_ch-2_quantile-0.1": 143.8,
    "histogram_ch-1_bin-0": 1,
    "histogram_ch-1_bin-1": 13,
    "histogram_ch-1_bin-2": 20,
    "histogram_ch-1_bin-3": 21,
    "histogram_ch-1_bin-4": 23,
    "histogram_ch-1_bin-5": 29,
    "histogram_ch-1_bin-6": 14,
    "histogram_ch-1_bin-7": 12,
    "histogram_ch-1_bin-8": 15,
    "histogram_ch-1_bin-9": 21,
    "texture_contrast_ch-2_dist-1_angle-0.00": 306.0641025641024,
    "texture_contrast_ch-2_dist-1_angle-0.79": 349.1875000000002,
    "texture_contrast_ch-2_dist-1_angle-1.57": 83.56410256410255,
    "texture_contrast_ch-2_dist-1_angle-2.36": 218.00694444444454,
    "texture_dissimilarity_ch-2_dist-1_angle-0.00": 13.871794871794876,
    "texture_dissimilarity_ch-2_dist-1_angle-0.79": 14.784722222222229,
    "texture_dissimilarity_ch-2_dist-1_angle-1.57": 7.012820512820503,
    "texture_dissimilarity_ch-2_dist-1_angle-2.36": 11.381944444444452,
    "texture_homogeneity_ch-2_dist-1_angle-0.00": 0.06743314139445566,
    "texture_homogeneity_ch-2_dist-1_angle-0.79": 0.09675041812669426,
    "texture_homogeneity_ch-2_dist-1_angle-1.57": 0.1670698471336902,
    "texture_homogeneity_ch-2_dist-1_angle-2.36": 0.07957363094713946,
    "texture_correlation_ch-2_dist-1_angle-0.00": 0.06171584120508423,
    "texture_correlation_ch-2_dist-1_angle-0.79": -0.08797152687227328,
    "texture_correlation_ch-2_dist-1_angle-1.57": 0.7492621291671164,
    "texture_correlation_ch-2_dist-1_angle-2.36": 0.3319256294782093,
    "texture_ASM_ch-2_dist-1_angle-0.00": 0.006985535831689668,
    "texture_ASM_ch-2_dist-1_angle-0.79": 0.0075231481481481685,
    "texture_ASM_ch-2_dist-1_angle-1.57": 0.007889546351084804,
    "texture_ASM_ch-2_dist-1_angle-2.36": 0.0075231481481481685,
  },
  "AAACAGAGCGACTCCT-1": {
    "summary_ch-0_quantile-0.9": 175.0,
    "summary_ch-0_quantile-0.5": 160.0,
    "summary_ch-0_quantile-0.1": 146.8,
    "summary_ch-1_quantile-0.9": 175.20000000000002,
    "summary_ch-1_quantile-0.5": 125.0,
    "summary_ch-1_quantile-0.1": 96.8,
    "summary_ch-2_quantile-0.9": 176.0,
    "summary_ch-2_quantile-0.5": 157.0,
    "summary_ch-2_quantile-0.1": 140.0,
    "histogram_ch-1_bin-0": 11,
    "histogram_ch-1_bin-1": 30,
    "histogram_ch-1_bin-2": 24,
    "histogram_ch-1_bin-3": 15,
    "histogram_ch-1_bin-4": 15,
    "histogram_ch-1_bin-5": 11,
    "histogram_ch-1_bin-6": 9,
    "histogram_ch-1_bin-7": 12,
    "histogram_ch-1_bin-8": 19,
    "histogram_ch-1_bin-9": 23,
    "texture_contrast_ch-2_dist-1_angle-0.00": 237.6474358974359,
    "texture_contrast_ch-2_dist-1_angle-0.79": 254.3472222222223,
    "texture_contrast_ch-2_dist-1_angle-1.57": 110.51923076923076,
    "texture_contrast_ch-2_dist-1_angle-2.36": 252.2638888888888,
    "texture_dissimilarity_ch-2_dist-1_angle-0.00": 12.044871794871797,
    "texture_dissimilarity_ch-2_dist-1_angle-0.79": 12.416666666666675,
    "texture_dissimilarity_ch-2_dist-1_angle-1.57": 7.442307692307683,
    "texture_dissimilarity_ch-2_dist-1_angle-2.36": 12.333333333333336,
    "texture_homogeneity_ch-2_dist-1_angle-0.00": 0.10132945122104746,
    "texture_homogeneity_ch-2_dist-1_angle-0.79": 0.09101794833394013,
    "texture_homogeneity_ch-2_dist-1_angle-1.57": 0.21797458137968187,
    "texture_homogeneity_ch-2_dist-1_angle-2.36": 0.1049810135466063,
    "texture_correlation_ch-2_dist-1_angle-0.00": 0.3116633537892112,
    "texture_correlation_ch-2_dist-1_angle-0.79": 0.2856034453764845,
    "texture_correlation_ch-2_dist-1_angle-1.57": 0.7002354174106058,
    "texture_correlation_ch-2_dist-1_angle-2.36": 0.28932491462940696,
    "texture_ASM_ch-2_dist-1_angle-0.00": 0.0066568047337278,
    "texture_ASM_ch-2_dist-1_angle-0.79": 0.007233796296296318,
    "texture_ASM_ch-2_dist-1_angle-1.57": 0.007232084155161068,
    "texture_ASM_ch-2_dist-1_angle-2.36": 0.007233796296296318,
  },
};

let dataDir: string;
let t: Tessera;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "tessera-im-workers-"));
  await cp(fixture("scanpy-visium/1.0.0"), join(dataDir, "visium"), { recursive: true });
  await cp(fixture("sfe-toy/xenium"), join(dataDir, "xenium"), { recursive: true });
  await cp(fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr"), join(dataDir, "blobs.sdata.zarr"), {
    recursive: true,
  });
  t = await Tessera.start({ dataDir, plugins: ["tessera", "spatial", "spatialdata-io"] });
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

type Session = Awaited<ReturnType<Tessera["open"]>>;

function features(s: Session, key: string): { frame: DataFrame; names: readonly string[] } {
  const tables = s.session.data.tables;
  const table = tables[s.session.activeTable ?? "table"] ?? Object.values(tables)[0]!;
  return { frame: table.obsm[key] as DataFrame, names: table.obs.index.values as readonly string[] };
}

function checkVisium(s: Session, key: string): void {
  const { frame, names } = features(s, key);
  for (const [barcode, want] of Object.entries(EXPECTED)) {
    const row = names.indexOf(barcode);
    expect(row, barcode).toBeGreaterThanOrEqual(0);
    for (const [name, v] of Object.entries(want)) {
      const got = (frame.columns[name] as { data: Float64Array } | undefined)?.data[row];
      expect(got, `${barcode} ${name}`).toBeDefined();
      expect(Math.abs(got! - v), `${barcode} ${name}: ${got} vs ${v}`).toBeLessThan(
        1e-9 * Math.max(1, Math.abs(v)),
      );
    }
  }
}

async function labelsOf(s: Session, name: string): Promise<Uint32Array> {
  const el = s.session.data.labels[name] as LabelsElement | undefined;
  expect(el, `labels ${name}`).toBeDefined();
  return (await el!.levels[0]!.source.read()).data as Uint32Array;
}

describe("im.* on file-backed images in worker threads", () => {
  it("Visium PNG: features as numpy/scikit-image compute them; again from the saved checkpoint's OME-Zarr", async () => {
    const s = await t.open("visium");
    const params = {
      layer: "visium_lowres_image",
      features: ["summary", "histogram", "texture"],
      spot_scale: 3,
      key_added: "img_png",
    };
    const o = await s.run("im.calculate_image_features", params);
    expect(o.error ?? o.status).toBe("completed");
    checkVisium(s, "img_png");
    // The diameter came from the spot circles (no uns scalefactors) and the system from the spots.
    const path = await s.save({ prefix: "im-workers" });
    const back = await t.open(path);
    const o2 = await back.run("im.calculate_image_features", { ...params, key_added: "img_zip" });
    expect(o2.error ?? o2.status).toBe("completed");
    checkVisium(back, "img_zip");
  }, 300_000);

  it("Xenium OME-TIFF: watershed and threshold segmentations equal the kernels on the file's pixels", async () => {
    const s = await t.open("xenium");
    const ws = await s.run("im.segment", { layer: "morphology_focus" });
    expect(ws.error ?? ws.status).toBe("completed");
    const th = await s.run("im.segment", { layer: "morphology_focus", method: "threshold" });
    expect(th.error ?? th.status).toBe("completed");
    const tiff = await fromFile(join(dataDir, "xenium", "morphology_focus.ome.tif"));
    const img = await tiff.getImage(0);
    const [px] = (await img.readRasters()) as unknown as Uint16Array[];
    const h = img.getHeight();
    const w = img.getWidth();
    const mask = Uint8Array.from(px!, (v) => (v >= 101 ? 1 : 0));
    const want = watershedMask(mask, h, w);
    expect(want.count).toBe(2142);
    const got = await labelsOf(s, "morphology_focus_segmented_watershed");
    expect(got.length).toBe(h * w);
    let diff = 0;
    for (let i = 0; i < h * w; i++) if (got[i] !== want.labels[i]) diff++;
    expect(diff).toBe(0);
    const comps = labelComponents(mask, h, w);
    expect(comps.count).toBe(381);
    const gotTh = await labelsOf(s, "morphology_focus_segmented_threshold");
    expect(Array.from(gotTh)).toEqual(Array.from(comps.labels));
    // Features over the morphology image run in the worker too (the toy's cells lie outside the
    // 50 µm image: every feature is NaN, and the job still reads and completes).
    const f = await s.run("im.calculate_image_features", { layer: "morphology_focus", spot_diameter: 10 });
    expect(f.error ?? f.status).toBe("completed");
  }, 300_000);

  it("OME-Zarr in a SpatialData folder: the worker reopens the directory store", async () => {
    const s = await t.open("blobs.sdata.zarr");
    const o = await s.run("im.segment", { layer: "blobs_image" });
    expect(o.error ?? o.status).toBe("completed");
    // Pixels read on the main thread by the folder's own reader (not the worker's reopened one).
    const el = s.session.data.images.blobs_image!;
    const plane = await el.levels[0]!.source.read([0, null, null]);
    const [h, w] = plane.shape as [number, number];
    const vals = plane.data as Float64Array;
    const thr = otsuThreshold(vals);
    const want = watershedMask(
      Uint8Array.from(vals, (v) => (v >= thr ? 1 : 0)),
      h,
      w,
    );
    expect(want.count).toBeGreaterThan(1);
    const got = await labelsOf(s, "blobs_image_segmented_watershed");
    expect(Array.from(got)).toEqual(Array.from(want.labels));
  }, 300_000);
});

/**
 * Visium (Space Ranger outs) read from the real fixtures: counts, positions joined by barcode, spots
 * as circles, the hires/lowres images and the coordinate systems that put spots on them.
 */
import { copyFile, cp, mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMatrix } from "../../../../src/sdk/data/lazy.js";
import { writeCheckpoint } from "../../../../src/sdk/io/checkpoint/write.js";
import { DataError } from "../../../../src/sdk/io/data-error.js";
import { openData } from "../../../../src/sdk/io/open.js";
import { readVisium } from "../../../../src/sdk/io/vendors/visium/read.js";
import { fixture } from "../../../fixtures.js";
import { imageSize, rowSum, toImagePixels, xAt } from "./helpers.js";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "tessera-visium-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("io.visium on scanpy-visium/1.0.0 (v1 positions without header, filtered h5)", () => {
  it("reads 100 spots × 100 genes, joins the 4,992-row positions list by barcode and puts spots on the hires image", async () => {
    const { sdata } = await readVisium(fixture("scanpy-visium/1.0.0"));
    const t = sdata.tables.table!;
    expect(t.X && "shape" in t.X ? t.X.shape : null).toEqual([100, 100]);
    expect((t.X as { data: Float32Array }).data.length).toBe(656);
    expect(t.obs.index.values[0]).toBe("AAACAAGTATCTCCCA-1");
    expect(t.annotation).toEqual({ region: "1.0.0", regionKey: "region", instanceKey: "spot_id" });
    // AAACAAGTATCTCCCA-1,1,50,102,8468,9791 in tissue_positions_list.csv (row, col in full-res pixels).
    const spatial = t.obsm.spatial as { data: Float64Array };
    expect([spatial.data[0], spatial.data[1]]).toEqual([9811, 8513]);
    const circles = sdata.shapes["1.0.0"]!;
    expect(circles.geometry.type).toBe("point");
    expect((circles.frame.columns.radius as { data: Float64Array }).data[0]).toBeCloseTo(
      89.42751063343188 / 2,
      10,
    );
    expect(Object.keys(sdata.images).sort()).toEqual(["1.0.0_hires_image", "1.0.0_lowres_image"]);
    const hires = sdata.images["1.0.0_hires_image"]!;
    expect(imageSize(hires)).toEqual({ width: 2000, height: 2000 });
    // Every spot lands inside the hires image (scale 0.150015 of full resolution).
    for (let i = 0; i < 100; i++) {
      const [px, py] = toImagePixels(
        sdata,
        circles,
        hires,
        "1.0.0_downscaled_hires",
        spatial.data[2 * i]!,
        spatial.data[2 * i + 1]!,
      );
      expect(px).toBeGreaterThanOrEqual(0);
      expect(py).toBeGreaterThanOrEqual(0);
      expect(px).toBeLessThan(2000);
      expect(py).toBeLessThan(2000);
    }
    const [px, py] = toImagePixels(sdata, circles, hires, "1.0.0_downscaled_hires", 9811, 8513);
    expect(px).toBeCloseTo(9811 * 0.150015, 6);
    expect(py).toBeCloseTo(8513 * 0.150015, 6);
    // The image reads lazily in c,y,x: RGBA on disk, RGB here.
    const tile = await hires.levels[0]!.source.read([null, [0, 4], [0, 4]]);
    expect(tile.shape).toEqual([3, 4, 4]);
  });
});

describe("io.visium on sfe-visium-toy (v2 tissue_positions.csv with header, MEX matrix)", () => {
  it("reads 12 spots × 5 genes with the matrix entries of matrix.mtx", async () => {
    const { sdata } = await readVisium(fixture("sfe-visium-toy/sample01/outs"));
    const t = sdata.tables.table!;
    expect(t.obs.index.values.length).toBe(12);
    expect(t.var.index.values).toEqual(["ACPP", "KLK3", "MSMB", expect.any(String), expect.any(String)]);
    // matrix.mtx line "1 1 38": feature 1 (ACPP) of barcode 1 (GTGGCGTGCACCAGAG-1).
    expect(xAt(t, 0, 0)).toBe(38);
    // GTGGCGTGCACCAGAG-1,1,1,101,3932,19828
    expect(Array.from((t.obsm.spatial as { data: Float64Array }).data.slice(0, 2))).toEqual([19828, 3932]);
    expect(Array.from((t.obs.columns.array_col as { data: Int32Array }).data.slice(0, 1))).toEqual([101]);
    expect(Object.keys(sdata.shapes)).toEqual(["sample01"]);
    expect(imageSize(sdata.images.sample01_hires_image!)).toEqual({ width: 45, height: 77 });
  });
});

describe("recognition and errors", () => {
  it("openData recognises all three Visium fixtures and a converted checkpoint re-opens the same", async () => {
    for (const rel of ["scanpy-visium/1.0.0", "squidpy-tests", "sfe-visium-toy/sample02/outs"]) {
      const r = await openData(fixture(rel));
      expect(r.format).toBe("visium");
    }
    const first = await openData(fixture("scanpy-visium/1.0.0"));
    const out = join(tmp, "visium.sdata.zarr.zip");
    await writeCheckpoint(first.sdata, out);
    const back = await openData(out);
    expect(back.format).toBe("checkpoint");
    expect(Object.keys(back.sdata.images).sort()).toEqual(["1.0.0_hires_image", "1.0.0_lowres_image"]);
    expect(back.sdata.tables.table!.annotation?.region).toBe("1.0.0");
    const backTable = { ...back.sdata.tables.table!, X: await loadMatrix(back.sdata.tables.table!.X!) };
    expect(rowSum(backTable, 0)).toBe(rowSum(first.sdata.tables.table!, 0));
  }, 120_000);

  it("a truncated positions file, broken scale factors and a corrupt h5 give DataErrors naming the file", async () => {
    const src = fixture("sfe-visium-toy/sample01/outs");
    const bad = join(tmp, "bad-visium");
    await cp(src, bad, { recursive: true });
    const pos = join(bad, "spatial/tissue_positions.csv");
    await writeFile(
      pos,
      "barcode,in_tissue,array_row,array_col,pxl_row_in_fullres,pxl_col_in_fullres\nGTGGCGTGCACCAGAG-1,1,1\n",
    );
    await expect(readVisium(bad)).rejects.toThrow(/tissue_positions\.csv: line 2 has 3 fields, expected 6/);
    await copyFile(join(src, "spatial/tissue_positions.csv"), pos);
    await writeFile(join(bad, "spatial/scalefactors_json.json"), '{"tissue_hires_scalef": ');
    await expect(readVisium(bad)).rejects.toThrow(/scalefactors_json\.json: not valid JSON/);
    const h5dir = join(tmp, "bad-h5");
    await cp(fixture("scanpy-visium/1.0.0"), h5dir, { recursive: true });
    await truncate(join(h5dir, "filtered_feature_bc_matrix.h5"), 4000);
    const err = await readVisium(h5dir).catch((e) => e);
    expect(err).toBeInstanceOf(DataError);
    expect(err.message).toMatch(/filtered_feature_bc_matrix\.h5/);
  });

  it("a folder that matches no reader lists what each reader looked for", async () => {
    const empty = join(tmp, "nothing");
    await cp(fixture("sfe-visium-toy/sample01/outs/spatial"), empty, { recursive: true });
    const err = await openData(empty).catch((e) => e);
    expect(err.message).toMatch(/io\.visium: spatial\/scalefactors_json\.json/);
    expect(err.message).toMatch(/io\.xenium: experiment\.xenium/);
  });
});

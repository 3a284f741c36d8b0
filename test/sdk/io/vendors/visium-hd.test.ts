/**
 * Visium HD: no public fixture holds binned outputs, so a Space Ranger HD layout is assembled in a temp
 * dir from scanpy-visium/1.0.0's real bytes (its h5 matrix and images; its positions list re-written as
 * `tissue_positions.parquet`, HD's format; scale factors plus HD's `bin_size_um`/`microns_per_pixel`).
 * Checked: recognition before io.visium, one table and one square-bins element per bin size, the bin
 * side in pixels, and that bins land on the hires image.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openData } from "../../../../src/sdk/io/open.js";
import { readVisiumHd } from "../../../../src/sdk/io/vendors/visium-hd/read.js";
import { fixture } from "../../../fixtures.js";
import { toImagePixels } from "./helpers.js";

let outs: string;
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "tessera-visium-hd-"));
  outs = join(tmp, "hd/outs");
  const src = fixture("scanpy-visium/1.0.0");
  await mkdir(join(outs, "spatial"), { recursive: true });
  for (const f of ["tissue_hires_image.png", "tissue_lowres_image.png"])
    await copyFile(join(src, "spatial", f), join(outs, "spatial", f));
  const lines = (await readFile(join(src, "spatial/tissue_positions_list.csv"), "utf8")).trim().split("\n");
  const rows = lines.map((l) => l.split(","));
  const sf = JSON.parse(await readFile(join(src, "spatial/scalefactors_json.json"), "utf8"));
  for (const size of [8, 16]) {
    const bin = join(outs, `binned_outputs/square_${String(size).padStart(3, "0")}um`);
    await mkdir(join(bin, "spatial"), { recursive: true });
    await copyFile(join(src, "filtered_feature_bc_matrix.h5"), join(bin, "filtered_feature_bc_matrix.h5"));
    parquetWriteFile({
      filename: join(bin, "spatial/tissue_positions.parquet"),
      columnData: [
        { name: "barcode", data: rows.map((r) => r[0]!), type: "STRING" },
        ...["in_tissue", "array_row", "array_col", "pxl_row_in_fullres", "pxl_col_in_fullres"].map(
          (name, i) => ({
            name,
            data: Int32Array.from(rows, (r) => Number(r[i + 1])),
            type: "INT32" as const,
          }),
        ),
      ],
    });
    await writeFile(
      join(bin, "spatial/scalefactors_json.json"),
      JSON.stringify({ ...sf, bin_size_um: size, microns_per_pixel: 0.25 }),
    );
  }
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("io.visium_hd on an HD layout assembled from scanpy-visium's bytes", () => {
  it("reads a table and square bins per bin size, in full-resolution pixels, on the hires image", async () => {
    const r = await openData(outs);
    expect(r.format).toBe("visium_hd");
    const sd = r.sdata;
    expect(Object.keys(sd.tables).sort()).toEqual(["square_008um", "square_016um"]);
    const t = sd.tables.square_008um!;
    expect(t.obs.index.values.length).toBe(100);
    expect(t.annotation).toEqual({ region: "hd_square_008um", regionKey: "region", instanceKey: "spot_id" });
    const bins = sd.shapes.hd_square_008um!;
    expect(bins.geometry.type).toBe("polygon");
    // 8 µm at 0.25 µm per pixel: 32-px squares centred on the spot (9811, 8513).
    expect(Array.from(bins.geometry.coords.slice(0, 4))).toEqual([
      9811 - 16,
      8513 - 16,
      9811 + 16,
      8513 - 16,
    ]);
    expect(sd.shapes.hd_square_016um!.geometry.coords[0]).toBe(9811 - 32);
    const hires = sd.images.hd_hires_image!;
    const [px, py] = toImagePixels(sd, bins, hires, "hd_downscaled_hires", 9811, 8513);
    expect(px).toBeCloseTo(9811 * 0.150015, 6);
    expect(py).toBeCloseTo(8513 * 0.150015, 6);
    const only = await readVisiumHd(outs, { bin_size: [16], load_images: false });
    expect(Object.keys(only.sdata.tables)).toEqual(["square_016um"]);
  });
});

/**
 * Xenium (sfe-toy/xenium: 526 cells, files re-written by R's arrow) read with concrete values: table,
 * circles, boundaries, transcripts (columnar), morphology images with the micron size of a pixel; the
 * csv.gz copies read the same as the parquet files; a checkpoint round trip; corrupt inputs.
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Categorical } from "../../../../src/sdk/data/arrays.js";
import { pointsCount, shapesCount } from "../../../../src/sdk/data/elements.js";
import { transformTo } from "../../../../src/sdk/data/spatialdata.js";
import { writeCheckpoint } from "../../../../src/sdk/io/checkpoint/write.js";
import { DataError } from "../../../../src/sdk/io/data-error.js";
import { openData } from "../../../../src/sdk/io/open.js";
import { readXenium } from "../../../../src/sdk/io/vendors/xenium/read.js";
import { fixture } from "../../../fixtures.js";
import { xAt } from "./helpers.js";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "tessera-xenium-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const FILES = ["cells", "cell_boundaries", "nucleus_boundaries", "transcripts"];

describe("io.xenium on sfe-toy/xenium", () => {
  it("reads cells, boundaries, transcripts and images with their values", async () => {
    const { sdata } = await readXenium(fixture("sfe-toy/xenium"));
    const t = sdata.tables.table!;
    expect(t.obs.index.values.length).toBe(526);
    expect(t.var.index.values.length).toBe(27);
    expect(t.obs.index.values[0]).toBe("jcccmpde-1");
    expect(t.annotation).toEqual({ region: "cell_circles", regionKey: "region", instanceKey: "cell_index" });
    // cells.csv.gz: jcccmpde-1,1303.90404663086,1345.70491333008,198,...,342.51015625,63.21875
    const sp = t.obsm.spatial as { data: Float64Array };
    expect(sp.data[0]).toBeCloseTo(1303.90404663086, 8);
    expect(sp.data[1]).toBeCloseTo(1345.70491333008, 8);
    expect((t.obs.columns.transcript_counts as { data: Float64Array }).data[0]).toBe(198);
    expect(xAt(t, 0, 0)).toBe(3);
    const circles = sdata.shapes.cell_circles!;
    expect(shapesCount(circles)).toBe(526);
    expect((circles.frame.columns.radius as { data: Float64Array }).data[0]).toBeCloseTo(
      Math.sqrt(342.51015625 / Math.PI),
      10,
    );
    const cb = sdata.shapes.cell_boundaries!;
    expect(shapesCount(cb)).toBe(526);
    expect(cb.geometry.type).toBe("polygon");
    // 6,838 vertex rows, every ring already closed by Xenium.
    expect(cb.geometry.coords.length / 2).toBe(6838);
    expect(cb.frame.index.values[0]).toBe("jcccmpde-1");
    expect([cb.geometry.coords[0], cb.geometry.coords[1]]).toEqual([1307.512451171875, 1331.949951171875]);
    expect(cb.geometry.ringOffsets![1]).toBe(13);
    expect(shapesCount(sdata.shapes.nucleus_boundaries!)).toBe(526);
    const tx = sdata.points.transcripts!;
    expect(pointsCount(tx)).toBe(5260);
    expect(tx.axes).toEqual(["x", "y", "z"]);
    expect(tx.featureKey).toBe("feature_name");
    // Columnar: coordinates in typed arrays, genes as codes into a category list.
    expect(tx.frame.columns.x!.kind).toBe("dense");
    const genes = tx.frame.columns.feature_name as Categorical;
    expect(genes.kind).toBe("categorical");
    const snhg32 = (genes.categories as unknown as { values: string[] }).values.indexOf("SNHG32");
    expect(genes.codes.filter((c) => c === snhg32).length).toBe(495);
    // The first transcript: 281492156652070,kdikcieh-1,1,SNHG32,1205.3167,1298.5208,18.59595,40,V10,0
    expect((tx.frame.columns.x as { data: Float32Array }).data[0]).toBeCloseTo(1205.3167, 3);
    // The cell's centroid sits inside its own boundary's bounding box.
    const ring = cb.geometry.coords.slice(0, 26);
    const xs = ring.filter((_, i) => i % 2 === 0);
    const ys = ring.filter((_, i) => i % 2 === 1);
    expect(sp.data[0]).toBeGreaterThan(Math.min(...xs));
    expect(sp.data[0]).toBeLessThan(Math.max(...xs));
    expect(sp.data[1]).toBeGreaterThan(Math.min(...ys));
    expect(sp.data[1]).toBeLessThan(Math.max(...ys));
    // Images: pixels → microns by Xenium's 0.2125 µm pixel (no experiment.xenium in the toy).
    const img = sdata.images.morphology_focus!;
    expect(img.levels[0]!.shape).toEqual([1, 237, 237]);
    const m = transformTo(sdata, img, "global", ["x", "y"]);
    expect(m[0]![0]).toBeCloseTo(0.2125, 12);
    expect(m[1]![1]).toBeCloseTo(0.2125, 12);
    expect(transformTo(sdata, circles, "global", ["x", "y"])[0]![0]).toBe(1);
  });

  it("the csv.gz copies alone read the same as the parquet files", async () => {
    const dir = join(tmp, "csv");
    await mkdir(dir);
    for (const f of FILES) await copyFile(fixture(`sfe-toy/xenium/${f}.csv.gz`), join(dir, `${f}.csv.gz`));
    await copyFile(fixture("sfe-toy/xenium/cell_feature_matrix.h5"), join(dir, "cell_feature_matrix.h5"));
    const a = await readXenium(fixture("sfe-toy/xenium"));
    const b = await readXenium(dir);
    expect(b.sdata.tables.table!.obs.index.values).toEqual(a.sdata.tables.table!.obs.index.values);
    const ca = a.sdata.shapes.cell_boundaries!.geometry.coords;
    const cbb = b.sdata.shapes.cell_boundaries!.geometry.coords;
    expect(cbb.length).toBe(ca.length);
    // The csv copies round to 4 decimals.
    for (let i = 0; i < ca.length; i += 97) expect(cbb[i]).toBeCloseTo(ca[i]!, 3);
    expect(pointsCount(b.sdata.points.transcripts!)).toBe(5260);
    expect(Object.keys(b.sdata.images)).toEqual([]);
    expect((await openData(dir)).format).toBe("xenium");
  });

  it("converts to a checkpoint that re-opens with every element", async () => {
    const first = await openData(fixture("sfe-toy/xenium"));
    expect(first.format).toBe("xenium");
    const out = join(tmp, "xenium.sdata.zarr.zip");
    await writeCheckpoint(first.sdata, out);
    const back = await openData(out);
    expect(Object.keys(back.sdata.shapes).sort()).toEqual([
      "cell_boundaries",
      "cell_circles",
      "nucleus_boundaries",
    ]);
    expect(pointsCount(back.sdata.points.transcripts!)).toBe(5260);
    expect(Object.keys(back.sdata.images).sort()).toEqual(["morphology_focus", "morphology_mip"]);
    expect(back.sdata.tables.table!.obs.index.values[0]).toBe("jcccmpde-1");
  }, 120_000);

  it("a truncated transcripts file or a cells file missing a matrix cell is a DataError naming the file", async () => {
    const dir = join(tmp, "broken");
    await mkdir(dir);
    await copyFile(fixture("sfe-toy/xenium/cell_feature_matrix.h5"), join(dir, "cell_feature_matrix.h5"));
    await copyFile(fixture("sfe-toy/xenium/cells.csv.gz"), join(dir, "cells.csv.gz"));
    const bytes = await import("node:fs/promises").then((f) =>
      f.readFile(fixture("sfe-toy/xenium/transcripts.parquet")),
    );
    await writeFile(join(dir, "transcripts.parquet"), bytes.subarray(0, bytes.length >> 1));
    const err = await readXenium(dir).catch((e) => e);
    expect(err).toBeInstanceOf(DataError);
    expect(err.message).toMatch(/transcripts\.parquet/);
    await writeFile(join(dir, "cells.csv.gz"), "cell_id,x_centroid,y_centroid\nnot-a-cell,1,2\n");
    await expect(readXenium(dir)).rejects.toThrow(
      /cells\.csv\.gz: cell "jcccmpde-1" of the matrix has no row/,
    );
  });
});

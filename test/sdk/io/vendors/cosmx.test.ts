/**
 * CosMx (sfe-toy/cosmx, Run5642 mouse brain, re-written by R): 27 cells × 960 targets (background cell
 * 0 dropped), metadata joined by (fov, cell_ID), polygons and transcripts in stitched global pixels; a
 * checkpoint round trip; a ragged metadata file.
 */
import { readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pointsCount, shapesCount } from "../../../../src/sdk/data/elements.js";
import { writeCheckpoint } from "../../../../src/sdk/io/checkpoint/write.js";
import { DataError } from "../../../../src/sdk/io/data-error.js";
import { openData } from "../../../../src/sdk/io/open.js";
import { readCosmx } from "../../../../src/sdk/io/vendors/cosmx/read.js";
import { fixture } from "../../../fixtures.js";
import { xAt } from "./helpers.js";

/** Inputs generated with the real scverse tools and committed (test/data/README.md). */
const REPO_DATA = new URL("../../../data/", import.meta.url).pathname;

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "tessera-cosmx-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("io.cosmx on sfe-toy/cosmx", () => {
  it("reads cells, polygons and transcripts in global pixels; each cell's centre lies in its polygon's box", async () => {
    const { sdata } = await readCosmx(fixture("sfe-toy/cosmx"));
    const t = sdata.tables.table!;
    expect(t.obs.index.values.length).toBe(27);
    expect(t.obs.index.values[0]).toBe("1_367");
    expect(t.var.index.values.length).toBe(960);
    // exprMat row "1,367,0,0,2,2,9,…": Chrna4 0, Slc6a1 0, Cd109 2, Ldha 2, Aldoc 9.
    expect([0, 1, 2, 3, 4].map((j) => xAt(t, 0, j))).toEqual([0, 0, 2, 2, 9]);
    // metadata "1,367,11631,1.35,219,780,171619,12121.6666666667,…"
    const g = t.obsm.global as unknown as { data: Float64Array };
    expect([g.data[0], g.data[1]]).toEqual([171619, 12121.6666666667]);
    const l = t.obsm.local as unknown as { data: Float64Array };
    expect([l.data[0], l.data[1]]).toEqual([219, 780]);
    expect((t.obs.columns.Area as { data: Float64Array }).data[0]).toBe(11631);
    const b = sdata.shapes.cell_boundaries!;
    expect(shapesCount(b)).toBe(27);
    for (let i = 0; i < 27; i++) {
      const row = Number(b.frame.index.values[i]);
      const r0 = b.geometry.ringOffsets![b.geometry.geomOffsets![i]!]!;
      const r1 = b.geometry.ringOffsets![b.geometry.geomOffsets![i]! + 1]!;
      const xs: number[] = [];
      const ys: number[] = [];
      for (let k = r0; k < r1; k++) {
        xs.push(b.geometry.coords[2 * k]!);
        ys.push(b.geometry.coords[2 * k + 1]!);
      }
      expect(g.data[2 * row]).toBeGreaterThanOrEqual(Math.min(...xs));
      expect(g.data[2 * row]).toBeLessThanOrEqual(Math.max(...xs));
      expect(g.data[2 * row + 1]).toBeGreaterThanOrEqual(Math.min(...ys));
      expect(g.data[2 * row + 1]).toBeLessThanOrEqual(Math.max(...ys));
    }
    const tx = sdata.points.transcripts!;
    expect(pointsCount(tx)).toBe(4188);
    expect(tx.featureKey).toBe("target");
    expect((tx.frame.columns.x as { data: Float32Array }).data[0]).toBeCloseTo(173327.15, 1);
  });

  it("converts to a checkpoint that re-opens", async () => {
    const first = await openData(fixture("sfe-toy/cosmx"));
    expect(first.format).toBe("cosmx");
    const out = join(tmp, "cosmx.sdata.zarr.zip");
    await writeCheckpoint(first.sdata, out);
    const back = await openData(out);
    expect(back.sdata.tables.table!.obs.index.values.length).toBe(27);
    expect(shapesCount(back.sdata.shapes.cell_boundaries!)).toBe(27);
    expect(pointsCount(back.sdata.points.transcripts!)).toBe(4188);
  }, 120_000);

  it("a metadata file missing a cell, or a ragged one, is a DataError naming the file", async () => {
    const dir = join(tmp, "bad");
    await cp(fixture("sfe-toy/cosmx"), dir, { recursive: true });
    const meta = join(dir, "Run5642_S3_Quarter_metadata_file.csv");
    await writeFile(
      meta,
      "fov,cell_ID,CenterX_local_px,CenterY_local_px,CenterX_global_px,CenterY_global_px\n1,999,1,2,3,4\n",
    );
    const err = await readCosmx(dir).catch((e) => e);
    expect(err).toBeInstanceOf(DataError);
    expect(err.message).toMatch(/metadata_file\.csv: cell 1_367 of .*exprMat_file\.csv has no row/);
    await writeFile(meta, "fov,cell_ID,CenterX_local_px\n1,367\n");
    await expect(readCosmx(dir)).rejects.toThrow(/metadata_file\.csv: line 2 has 2 fields, expected 3/);
  });
});

describe("io.cosmx per-FOV label masks", () => {
  // test/data/cosmx-labels (scripts/fixtures/cosmx-labels.py): a float32 CellLabels_F001.tif as Giotto
  // re-writes them, each of FOV 1's cells a disk at its metadata local centre valued by its cell_ID.
  const expected = JSON.parse(readFileSync(join(REPO_DATA, "cosmx-labels/expected.json"), "utf8")) as {
    width: number;
    height: number;
    cells: { cell_ID: number; local: [number, number]; global: [number, number] }[];
  };

  it("reads CellLabels_F001.tif as labels 1_labels (int32), placed on the cells' global centres", async () => {
    const dir = join(tmp, "with-labels");
    await cp(fixture("sfe-toy/cosmx"), dir, { recursive: true });
    await cp(join(REPO_DATA, "cosmx-labels/CellLabels"), join(dir, "CellLabels"), { recursive: true });
    const { sdata } = await readCosmx(dir);
    expect(Object.keys(sdata.labels)).toEqual(["1_labels"]);
    const el = sdata.labels["1_labels"]!;
    expect(el.axes).toEqual(["y", "x"]);
    expect(el.dtype).toBe("int32");
    expect(el.levels[0]!.shape).toEqual([expected.height, expected.width]);
    const whole = await el.levels[0]!.source.read();
    const px = whole.data as Int32Array;
    expect(px).toBeInstanceOf(Int32Array);
    const tf = el.transformations.global as { type: string; affine: number[][] };
    expect(tf.type).toBe("affine");
    // NGFF's form: a row per output axis (y, x), no homogeneous row.
    expect(tf.affine.length).toBe(2);
    expect(Object.keys(el.transformations).sort()).toEqual(["1", "global"]);
    for (const c of expected.cells) {
      const [x, y] = c.local;
      // The label at the cell's local centre is its id …
      expect(px[Math.round(y) * expected.width + Math.round(x)]).toBe(c.cell_ID);
      // … and the global transformation takes that centre onto the cell's global centre.
      // Rows and columns follow the element's axes (y, x), then the constant.
      const gx = tf.affine[1]![1]! * x + tf.affine[1]![0]! * y + tf.affine[1]![2]!;
      const gy = tf.affine[0]![1]! * x + tf.affine[0]![0]! * y + tf.affine[0]![2]!;
      expect(gx).toBeCloseTo(c.global[0], 3);
      expect(gy).toBeCloseTo(c.global[1], 3);
    }
    // A window reads the same ids as the whole mask.
    const win = await el.levels[0]!.source.read([
      [700, 760],
      [200, 240],
    ]);
    expect(win.shape).toEqual([60, 40]);
    for (let r = 0; r < 60; r++)
      for (let q = 0; q < 40; q++)
        expect((win.data as Int32Array)[r * 40 + q]).toBe(px[(700 + r) * expected.width + 200 + q]);
    // The checkpoint keeps the labels, readable as written.
    const out = join(tmp, "labels.sdata.zarr.zip");
    await writeCheckpoint(sdata, out, { workDir: tmp });
    const back = (await openData(out)).sdata.labels["1_labels"]!;
    const again = (await back.levels[0]!.source.read()).data;
    expect(Array.from(again as ArrayLike<number>)).toEqual(Array.from(px));
    // labels: false leaves them out.
    expect(Object.keys((await readCosmx(dir, { labels: false })).sdata.labels)).toEqual([]);
  }, 120_000);

  it("a truncated label mask is a DataError naming the file", async () => {
    const dir = join(tmp, "bad-labels");
    await cp(fixture("sfe-toy/cosmx"), dir, { recursive: true });
    await mkdir(join(dir, "CellLabels"));
    const bytes = readFileSync(join(REPO_DATA, "cosmx-labels/CellLabels/CellLabels_F001.tif"));
    await writeFile(join(dir, "CellLabels/CellLabels_F001.tif"), bytes.subarray(0, 60));
    await expect(readCosmx(dir)).rejects.toThrow(/CellLabels_F001\.tif: not a readable TIFF/);
  });
});

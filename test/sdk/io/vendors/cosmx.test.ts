/**
 * CosMx (sfe-toy/cosmx, Run5642 mouse brain, re-written by R): 27 cells × 960 targets (background cell
 * 0 dropped), metadata joined by (fov, cell_ID), polygons and transcripts in stitched global pixels; a
 * checkpoint round trip; a ragged metadata file.
 */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
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

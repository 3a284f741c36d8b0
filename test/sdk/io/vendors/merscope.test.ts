/**
 * MERSCOPE (sfe-toy/vizgen_cellbound: 1,058 cells, files re-written by R): table with blanks in obsm,
 * entity ids exact beyond 2^53, boundaries from GeoParquet and from the per-FOV hdf5 files (the same
 * polygons), columnar transcripts, mosaics per z placed by the micron → pixel transform so that cells
 * land on them; a checkpoint round trip; corrupt inputs.
 */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyToPoint, invert } from "../../../../src/sdk/data/affine.js";
import { pointsCount, shapesCount } from "../../../../src/sdk/data/elements.js";
import { transformTo } from "../../../../src/sdk/data/spatialdata.js";
import { writeCheckpoint } from "../../../../src/sdk/io/checkpoint/write.js";
import { DataError } from "../../../../src/sdk/io/data-error.js";
import { openData } from "../../../../src/sdk/io/open.js";
import { readMerscope } from "../../../../src/sdk/io/vendors/merscope/read.js";
import { fixture } from "../../../fixtures.js";
import { xAt } from "./helpers.js";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "tessera-merscope-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("io.merscope on sfe-toy/vizgen_cellbound", () => {
  it("reads the table, boundaries, transcripts and mosaics, and cells land on the mosaic", async () => {
    const { sdata } = await readMerscope(fixture("sfe-toy/vizgen_cellbound"));
    const t = sdata.tables.table!;
    expect(t.obs.index.values.length).toBe(1058);
    // Entity ids are exact (112824700230101249 would read back as …250 through a float).
    expect(t.obs.index.values[0]).toBe("112824700230101249");
    expect(t.var.index.values.length).toBe(49);
    expect(t.var.index.values.slice(0, 3)).toEqual(["CD4", "TLL1", "EPHA8"]);
    expect((t.obsm.blank as unknown as { shape: number[] }).shape[0]).toBe(1058);
    expect((t.obs.columns.transcript_count as { data: Float64Array }).data[0]).toBe(139);
    const sp = t.obsm.spatial as { data: Float64Array };
    expect(sp.data[0]).toBeCloseTo(6765.2489937702, 8);
    expect(sp.data[1]).toBeCloseTo(1195.8734859086, 8);
    expect(xAt(t, 0, 3)).toBe(1);
    const b = sdata.shapes.cell_boundaries!;
    expect(shapesCount(b)).toBe(1058);
    expect((b.frame.columns.EntityID as unknown as { values: string[] }).values[0]).toBe(
      "112824700230101249",
    );
    expect(pointsCount(sdata.points.transcripts!)).toBe(11135);
    expect(Object.keys(sdata.images)).toEqual([
      "vizgen_cellbound_z1",
      "vizgen_cellbound_z2",
      "vizgen_cellbound_z3",
    ]);
    const z3 = sdata.images.vizgen_cellbound_z3!;
    expect([...z3.channels].sort()).toEqual(["Cellbound1", "Cellbound2", "Cellbound3", "DAPI", "PolyT"]);
    expect(z3.levels[0]!.shape).toEqual([5, 695, 695]);
    // micron → pixel from the manifest: bbox [6499.9094, 1199.9386, 6800.1409, 1500.1662] over 695².
    const toPixel = invert(transformTo(sdata, z3, "global", ["x", "y"]));
    const [px, py] = applyToPoint(toPixel, 6650, 1350);
    expect(px).toBeCloseTo(((6650 - 6499.9094) * 695) / (6800.1409 - 6499.9094), 6);
    expect(py).toBeCloseTo(((1350 - 1199.9386) * 695) / (1500.1662 - 1199.9386), 6);
    let inside = 0;
    for (let i = 0; i < 1058; i++) {
      const [x, y] = applyToPoint(toPixel, sp.data[2 * i]!, sp.data[2 * i + 1]!);
      if (x >= 0 && y >= 0 && x < 695 && y < 695) inside++;
    }
    // The toy's cells were cut to the mosaic's box; a few straddle its edge.
    expect(inside / 1058).toBeGreaterThan(0.95);
    const pixels = await z3.levels[0]!.source.read([3, [300, 310], [300, 310]]);
    expect(pixels.shape).toEqual([10, 10]);
    expect(pixels.dtype).toBe("uint8");
  });

  it("the per-FOV hdf5 boundaries (80 of the cells) give the same polygons as the GeoParquet on z 3", async () => {
    const dir = join(tmp, "h5");
    await cp(fixture("sfe-toy/vizgen_cellbound"), dir, { recursive: true });
    await rm(join(dir, "cell_boundaries.parquet"));
    await rm(join(dir, "images"), { recursive: true });
    const a = (await readMerscope(fixture("sfe-toy/vizgen_cellbound"), { mosaic_images: false })).sdata.shapes
      .cell_boundaries!;
    const r = await readMerscope(dir, { z_index: 3 });
    const b = r.sdata.shapes.cell_boundaries!;
    expect(shapesCount(b)).toBe(80);
    expect(r.warnings.join()).toMatch(/978 of 1058 cells have no boundary/);
    // Rows of b are indexed by their table row; the same row of a is that cell's polygon.
    const ringOf = (el: typeof a, row: number): Float64Array => {
      const g = el.geometry;
      const poly = g.polygonOffsets ? g.polygonOffsets[g.geomOffsets![row]!]! : g.geomOffsets![row]!;
      return g.coords.slice(g.ringOffsets![poly]! * 2, g.ringOffsets![poly + 1]! * 2);
    };
    const aRow = new Map(a.frame.index.values.map((v, i) => [v, i]));
    for (let i = 0; i < 80; i += 7) {
      const tableRow = b.frame.index.values[i]!;
      const ra = ringOf(a, aRow.get(tableRow)!);
      const rb = ringOf(b, i);
      expect(rb.length).toBe(ra.length);
      for (let k = 0; k < ra.length; k++) expect(rb[k]).toBeCloseTo(ra[k]!, 6);
    }
  });

  it("converts to a checkpoint that re-opens with every element", async () => {
    const first = await openData(fixture("sfe-toy/vizgen_cellbound"));
    expect(first.format).toBe("merscope");
    const out = join(tmp, "merscope.sdata.zarr.zip");
    await writeCheckpoint(first.sdata, out);
    const back = await openData(out);
    expect(Object.keys(back.sdata.images).sort()).toEqual([
      "vizgen_cellbound_z1",
      "vizgen_cellbound_z2",
      "vizgen_cellbound_z3",
    ]);
    expect(shapesCount(back.sdata.shapes.cell_boundaries!)).toBe(1058);
    expect(back.sdata.tables.table!.obs.index.values[0]).toBe("112824700230101249");
  }, 120_000);

  it("a bad manifest or a ragged cell_by_gene.csv is a DataError naming the file", async () => {
    const dir = join(tmp, "bad");
    await cp(fixture("sfe-toy/vizgen_cellbound"), dir, { recursive: true });
    await writeFile(join(dir, "images/manifest.json"), '{"bbox_microns": [1, 2]}');
    const err = await readMerscope(dir).catch((e) => e);
    expect(err).toBeInstanceOf(DataError);
    expect(err.message).toMatch(/manifest\.json: "bbox_microns" must be four numbers/);
    await writeFile(join(dir, "cell_by_gene.csv"), "cell,CD4,TLL1\n112824700230101249,1\n");
    await expect(readMerscope(dir)).rejects.toThrow(/cell_by_gene\.csv: line 2 has 2 fields, expected 3/);
  });
});

describe("io.merscope vpt_outputs", () => {
  it("reads cells, metadata and boundaries from a vpt output folder (sfe-toy's Cellpose run) instead of the instrument's", async () => {
    // sfe-toy ships vpt's Cellpose outputs (cellpose_cell_by_gene.csv, cellpose_cell_metadata.csv,
    // cellpose_micron_space.parquet with MultiPolygons) for the same 1,058 cells. With the instrument's
    // own cell files removed, only the vpt folder can give the table and the boundaries.
    const dir = join(tmp, "vpt");
    await cp(fixture("sfe-toy/vizgen_cellbound"), dir, { recursive: true });
    await cp(fixture("sfe-toy/vizgen_cellbound_Cellpose/Cellpose"), join(dir, "Cellpose"), {
      recursive: true,
    });
    for (const f of ["cell_by_gene.csv", "cell_metadata.csv", "cell_boundaries.parquet", "cell_boundaries"])
      await rm(join(dir, f), { recursive: true, force: true });
    const logs: string[] = [];
    const { sdata } = await readMerscope(
      dir,
      { vpt_outputs: "Cellpose", transcripts: false, mosaic_images: false },
      { log: (l) => logs.push(l) },
    );
    expect(logs.join("\n")).toMatch(
      /vpt outputs: .*cellpose_cell_by_gene\.csv, .*cellpose_cell_metadata\.csv, .*cellpose_micron_space\.parquet/,
    );
    const ref = (
      await readMerscope(fixture("sfe-toy/vizgen_cellbound"), { transcripts: false, mosaic_images: false })
    ).sdata;
    const t = sdata.tables.table!;
    expect(t.obs.index.values.length).toBe(1058);
    expect(t.obs.index.values).toEqual(ref.tables.table!.obs.index.values);
    // cellpose_cell_by_gene.csv row 1: "112824700230101249,0,0,0,1,0,…" (CD4, TLL1, EPHA8, CDKN1A, CCR7).
    expect(t.obs.index.values[0]).toBe("112824700230101249");
    expect([0, 1, 2, 3, 4].map((j) => xAt(t, 0, j))).toEqual([0, 0, 0, 1, 0]);
    // The MultiPolygon boundaries (z 3) are read polygon by polygon, in the table's order.
    const b = sdata.shapes.cell_boundaries!;
    expect(shapesCount(b)).toBe(1058);
    const boxes = (g: typeof b.geometry) => {
      const out: number[] = [];
      const go = g.geomOffsets!;
      const ro = g.ringOffsets!;
      for (let k = 0; k + 1 < go.length; k++) {
        let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
        for (let v = ro[go[k]!]!; v < ro[go[k + 1]!]!; v++) {
          x0 = Math.min(x0, g.coords[2 * v]!);
          x1 = Math.max(x1, g.coords[2 * v]!);
          y0 = Math.min(y0, g.coords[2 * v + 1]!);
          y1 = Math.max(y1, g.coords[2 * v + 1]!);
        }
        out.push(x0, y0, x1, y1);
      }
      return out;
    };
    // One cell, 112824700240101344, is a two-part MultiPolygon in the Cellpose run (its box reaches
    // y 1331.73 instead of 1331.03, checked with geopandas); every other cell has the instrument's box.
    const got = boxes(b.geometry);
    const want = boxes(ref.shapes.cell_boundaries!.geometry);
    const differ: string[] = [];
    for (let k = 0; k < 1058; k++)
      if (got.slice(4 * k, 4 * k + 4).join() !== want.slice(4 * k, 4 * k + 4).join())
        differ.push(String(t.obs.index.values[k]));
    expect(differ).toEqual(["112824700240101344"]);
    await expect(readMerscope(dir, { vpt_outputs: "nowhere" })).rejects.toThrow(
      /nowhere: vpt_outputs is not a readable folder/,
    );
  }, 120_000);
});

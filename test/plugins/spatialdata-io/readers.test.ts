/**
 * The `spatialdata-io` plugin's reader operations: called directly (progress and log recorded), and
 * through a real service: a session created with `kind: "load"` on an instrument folder picks the
 * reader by what the folder holds; `kind: "read"` with `io.visium` contains every path param (a
 * relative file that escapes is a 400); a corrupt folder leaves an errored session naming the file.
 */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { visium as readVisiumSquidpy } from "../../../src/plugins/spatialdata-io/squidpy.js";
import { read_10x_h5, read_10x_mtx } from "../../../src/plugins/spatialdata-io/tenx.js";
import { visium } from "../../../src/plugins/spatialdata-io/visium.js";
import { xenium } from "../../../src/plugins/spatialdata-io/xenium.js";
import { read_zarr } from "../../../src/plugins/spatialdata-io/zarr.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { PathError } from "../../../src/sdk/session/errors.js";
import type { Service } from "../../../src/sdk/session/service.js";
import { fixture } from "../../fixtures.js";
import { record, startService } from "../../sdk/session/helpers.js";
import { testContext } from "../context.js";

const EMPTY = makeSpatialData();

describe("reader operations", () => {
  it("io.visium and read.visium read the same folder, reporting progress and log", async () => {
    const { ctx, logs, progress } = testContext();
    const sd = await visium(EMPTY, { path: fixture("scanpy-visium/1.0.0"), dataset_id: "lib1" }, ctx);
    expect(Object.keys(sd.shapes)).toEqual(["lib1"]);
    expect(Object.keys(sd.images).sort()).toEqual(["lib1_hires_image", "lib1_lowres_image"]);
    expect(progress[0]).toBe(0);
    expect(progress.at(-1)).toBe(1);
    expect(logs.join("\n")).toMatch(/positions: .*tissue_positions_list\.csv/);
    const sq = await readVisiumSquidpy(
      EMPTY,
      { path: fixture("scanpy-visium/1.0.0"), library_id: "lib1" },
      testContext().ctx,
    );
    expect(sq.tables.table!.obs.index.values).toEqual(sd.tables.table!.obs.index.values);
  });

  it("io.xenium without transcripts or images", async () => {
    const { ctx } = testContext();
    const sd = await xenium(
      EMPTY,
      { path: fixture("sfe-toy/xenium"), transcripts: false, morphology_focus: false, morphology_mip: false },
      ctx,
    );
    expect(Object.keys(sd.points)).toEqual([]);
    expect(Object.keys(sd.images)).toEqual([]);
    expect(Object.keys(sd.shapes).sort()).toEqual(["cell_boundaries", "cell_circles", "nucleus_boundaries"]);
  });

  it("io.read_10x_h5 (genome choice), io.read_10x_mtx and io.read_zarr", async () => {
    const { ctx } = testContext();
    const h5 = await read_10x_h5(
      EMPTY,
      { path: fixture("scanpy-10x/1.2.0/multiple_genomes.h5"), genome: "hg19_chr21" },
      ctx,
    );
    expect(h5.tables.table!.obs.index.values.length).toBe(12);
    const mtx = await read_10x_mtx(
      EMPTY,
      { path: fixture("scanpy-10x/3.0.0/filtered_feature_bc_matrix") },
      ctx,
    );
    expect(mtx.tables.table!.var.index.values.length).toBe(507);
    const z = await read_zarr(EMPTY, { store: fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr") }, ctx);
    expect(Object.keys(z.images).length).toBeGreaterThan(0);
    await expect(
      read_zarr(EMPTY, { store: fixture("scanpy-10x/3.0.0/filtered_feature_bc_matrix") }, ctx),
    ).rejects.toThrow(/not a SpatialData store \(read as 10x-mtx\)/);
  });
});

describe("sessions on instrument folders", () => {
  let dataDir: string;
  let service: Service;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tessera-io-sessions-"));
    await cp(fixture("sfe-visium-toy/sample01/outs"), join(dataDir, "visium/outs"), { recursive: true });
    await cp(fixture("sfe-toy/xenium"), join(dataDir, "xenium"), { recursive: true });
    await cp(fixture("sfe-visium-toy/sample02/outs"), join(dataDir, "broken/outs"), { recursive: true });
    await writeFile(join(dataDir, "broken/outs/spatial/scalefactors_json.json"), "{");
    service = await startService(dataDir, { plugins: ["tessera", "spatialdata-io"] });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("kind load on a Visium and a Xenium folder picks the reader by what the folder holds", async () => {
    const v = await service.createSession({ source: { kind: "load", path: "visium/outs" } });
    await v.ready;
    expect(v.status).toBe("ready");
    expect(Object.keys(v.data.shapes)).toEqual(["visium"]);
    const x = await service.createSession({ source: { kind: "load", path: "xenium" } });
    await x.ready;
    expect(x.status).toBe("ready");
    expect(x.data.tables.table!.obs.index.values.length).toBe(526);
  }, 60_000);

  it("kind read with io.visium runs on a worker, logs as job events, and contains relative files", async () => {
    const rec = record(service);
    const s = await service.createSession({
      source: {
        kind: "read",
        namespace: "io",
        function: "visium",
        params: { path: "visium/outs", dataset_id: "s1" },
      },
    });
    await s.ready;
    rec.stop();
    expect(s.status).toBe("ready");
    expect(Object.keys(s.data.images).sort()).toEqual(["s1_hires_image", "s1_lowres_image"]);
    expect(
      rec.events.some(
        (e) =>
          e.event === "job.log" &&
          /positions:/.test(String(e.data.text ?? e.data.line ?? JSON.stringify(e.data))),
      ),
    ).toBe(true);
    for (const params of [
      { path: "visium/outs", counts_file: "../../../../etc/passwd" },
      { path: "visium/outs", scalefactors_file: "/etc/passwd" },
      { path: "../outside" },
    ]) {
      const err = await service
        .createSession({ source: { kind: "read", namespace: "io", function: "visium", params } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PathError);
      expect((err as PathError).status).toBe(400);
    }
  }, 60_000);

  it("a folder with a corrupt file leaves an errored session naming the file, not a half-loaded one", async () => {
    const s = await service.createSession({ source: { kind: "load", path: "broken/outs" } });
    await s.ready;
    expect(s.status).toBe("errored");
    expect(s.summary().error).toMatch(/scalefactors_json\.json: not valid JSON/);
    expect(Object.keys(s.data.tables)).toEqual([]);
  }, 60_000);
});

describe("MERSCOPE operations", () => {
  it("io.merscope and read.vizgen read the same folder", async () => {
    const { merscope } = await import("../../../src/plugins/spatialdata-io/merscope.js");
    const { vizgen } = await import("../../../src/plugins/spatialdata-io/squidpy.js");
    const { ctx, logs } = testContext();
    const a = await merscope(EMPTY, { path: fixture("sfe-toy/vizgen_cellbound"), transcripts: false }, ctx);
    expect(logs.join("\n")).toMatch(/micron → mosaic pixel/);
    const b = await vizgen(
      EMPTY,
      { path: fixture("sfe-toy/vizgen_cellbound"), library_id: "r1" },
      testContext().ctx,
    );
    expect(b.tables.table!.obs.index.values).toEqual(a.tables.table!.obs.index.values);
    expect(Object.keys(b.images)).toEqual(["r1_z1", "r1_z2", "r1_z3"]);
  });
});

describe("CosMx operations", () => {
  it("io.cosmx and read.nanostring read the same folder", async () => {
    const { cosmx } = await import("../../../src/plugins/spatialdata-io/cosmx.js");
    const { nanostring } = await import("../../../src/plugins/spatialdata-io/squidpy.js");
    const { ctx, logs } = testContext();
    const a = await cosmx(EMPTY, { path: fixture("sfe-toy/cosmx"), transcripts: false }, ctx);
    expect(logs.join("\n")).toMatch(/27 cells \(background cell 0 of each FOV dropped\), 960 targets/);
    expect(Object.keys(a.points)).toEqual([]);
    const b = await nanostring(EMPTY, { path: fixture("sfe-toy/cosmx") }, testContext().ctx);
    expect(b.tables.table!.obs.index.values).toEqual(a.tables.table!.obs.index.values);
  });
});

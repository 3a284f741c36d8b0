/**
 * Parameters bounded by the data's shape are refused at submission (before a job takes memory), with the
 * parameter, its value and the bound named; analyses on a table with no cells fail with a message that says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeTable } from "../../../src/plugins/scanpy/helpers.js";
import { strings } from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import type { Service } from "../../../src/sdk/session/service.js";
import { checkShapeBounds } from "../../../src/sdk/session/shape-bounds.js";
import { demoDataDir, startService } from "./helpers.js";

describe("checkShapeBounds", () => {
  const table = { name: "table", nObs: 300, nVars: 40 };
  it("refuses n_comps, n_pcs, n_prin_comps past min(n_obs, n_vars) and n_components past n_obs − 1", () => {
    expect(() => checkShapeBounds("sc.pp.pca", "compute", { n_comps: 1e6 }, table)).toThrow(
      /sc\.pp\.pca: n_comps = 1000000 is more than the table "table" allows \(at most min\(n_obs, n_vars\) = min\(300, 40\)\)/,
    );
    expect(() => checkShapeBounds("sc.pp.neighbors", "compute", { n_pcs: 41 }, table)).toThrow(/n_pcs = 41/);
    expect(() => checkShapeBounds("sc.pp.scrublet", "compute", { n_prin_comps: 50 }, table)).toThrow(
      /n_prin_comps/,
    );
    expect(() => checkShapeBounds("sc.tl.umap", "compute", { n_components: 1e6 }, table)).toThrow(
      /n_components = 1000000 .* n_obs − 1 = 299/,
    );
    // Within bounds, absent or null: accepted; scanpy lowers n_neighbors itself, so it is not checked here.
    checkShapeBounds("sc.pp.pca", "compute", { n_comps: 40 }, table);
    checkShapeBounds("sc.pp.pca", "compute", { n_comps: null }, table);
    checkShapeBounds("sc.pp.neighbors", "compute", { n_neighbors: 10_000 }, table);
    checkShapeBounds("sc.pp.pca", "compute", { n_comps: 1e6 }, null);
  });
  it("refuses a computation or plot of scanpy/squidpy on a table with no cells, not a reader or a custom edit", () => {
    const empty = { name: "t", nObs: 0, nVars: 5 };
    expect(() => checkShapeBounds("sc.tl.leiden", "compute", {}, empty)).toThrow(
      /table "t" has no cells \(0 × 5\)/,
    );
    expect(() => checkShapeBounds("sc.pl.umap", "plot", {}, empty)).toThrow(/no cells/);
    checkShapeBounds("custom.rename_obs_column", "compute", {}, empty);
    checkShapeBounds("sc.get.obs_df", "extract", {}, empty);
  });
});

describe("the scanpy operations' table", () => {
  it("an empty active table is an error naming the operation, not a silent success", () => {
    const table = makeTable({ obs: dataFrame(strings([])), var: dataFrame(strings(["g1", "g2"])) });
    const sd = makeSpatialData({ tables: { table } });
    expect(() => activeTable(sd, { table: "table" }, "leiden")).toThrow(
      /leiden: the table "table" has no cells/,
    );
  });
});

describe("at submission", () => {
  let service: Service;
  let cleanup: () => Promise<void>;
  let demo: string;
  beforeAll(async () => {
    const d = await demoDataDir();
    cleanup = d.cleanup;
    demo = d.demo;
    service = await startService(d.dataDir, { plugins: ["scanpy", "tessera", "testkit"] });
  });
  afterAll(async () => {
    await service.close();
    await cleanup();
  });
  it("sc.pp.pca n_comps: 1e6 is a 400 before any job is queued", async () => {
    const s = await service.createSession({ source: { kind: "load", path: demo } });
    await s.ready;
    const before = s.appState.compute_history.length;
    const err = await s.submit({ namespace: "sc.pp", function: "pca", params: { n_comps: 1_000_000 } }).then(
      () => null,
      (e: unknown) => e as { status?: number; message: string },
    );
    expect(err?.status).toBe(400);
    expect(err?.message).toMatch(/n_comps = 1000000 is more than the table/);
    expect(s.appState.compute_history.length).toBe(before);
    expect(s.queueView()).toEqual([]);
  });
});

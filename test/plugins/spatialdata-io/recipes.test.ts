/**
 * The `spatial_clusters` recipe (QC → normalise → cluster → spatial graph) end to end through the SDK
 * facade (real worker threads) on each platform's fixture, opened from its instrument folder by
 * recognition: Visium (scanpy-visium), Xenium, MERSCOPE and CosMx.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Tessera } from "../../../src/sdk/tessera.js";
import { fixture } from "../../fixtures.js";

let dataDir: string;
let t: Tessera;

const PLATFORMS = [
  // folder, copy of, recipe params (panels and cell counts differ)
  ["visium", "scanpy-visium/1.0.0", { percent_top: [5], n_comps: 10, n_neighbors: 10 }],
  ["xenium", "sfe-toy/xenium", { percent_top: [5], n_comps: 10, n_neighbors: 15 }],
  ["merscope", "sfe-toy/vizgen_cellbound", { percent_top: [5], n_comps: 10, n_neighbors: 15 }],
  ["cosmx", "sfe-toy/cosmx", { percent_top: [5], n_comps: 5, n_neighbors: 5, n_neighs: 4 }],
] as const;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "tessera-io-recipes-"));
  for (const [name, rel] of PLATFORMS) await cp(fixture(rel), join(dataDir, name), { recursive: true });
  t = await Tessera.start({ dataDir, plugins: ["tessera", "scanpy", "squidpy", "spatialdata-io"] });
}, 60_000);
afterAll(async () => {
  await t?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("spatial_clusters on every platform", () => {
  it.each(PLATFORMS)("%s", { timeout: 180_000 }, async (name, _rel, params) => {
    const s = await t.open(name);
    const outcomes = await s.runRecipe(t.recipe("spatial_clusters"), { ...params });
    expect(outcomes.filter((o) => o.status !== "completed").map((o) => o.error)).toEqual([]);
    const table = s.session.data.tables.table!;
    expect(table.obs.columnOrder).toEqual(expect.arrayContaining(["total_counts", "leiden"]));
    expect(table.obsm.X_pca).toBeDefined();
    expect(table.obsp.spatial_connectivities).toBeDefined();
    expect(new Set(await s.values("obs:leiden")).size).toBeGreaterThan(1);
  });
});

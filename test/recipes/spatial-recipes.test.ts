/**
 * The guided region-analysis recipes (catalog recipes 4, 5, 6: cellular neighbourhoods, composition
 * by region, Kruskal–Wallis by region) end to end through the SDK facade — real worker threads —
 * on the real Xenium fixture (`sfe-toy/xenium`, 526 cells): clusters from the standard chain serve
 * as cell types and spatial Leiden regions as regions.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Categorical } from "../../src/sdk/data/arrays.js";
import type { DataFrame } from "../../src/sdk/data/dataframe.js";
import { unsGet } from "../../src/sdk/data/uns.js";
import { Tessera } from "../../src/sdk/tessera.js";
import { fixture } from "../fixtures.js";

let dataDir: string;
let t: Tessera;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "tessera-spatial-recipes-"));
  await cp(fixture("sfe-toy/xenium"), join(dataDir, "xenium"), { recursive: true });
  t = await Tessera.start({ dataDir, plugins: ["tessera", "scanpy", "spatial"] });
});
afterAll(async () => {
  await t?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function expectAllCompleted(outcomes: { status: string; error?: string }[]): void {
  expect(outcomes.filter((o) => o.status !== "completed").map((o) => o.error)).toEqual([]);
}

describe("spatial region recipes end to end (Xenium)", () => {
  it("are discovered", () => {
    const names = t.recipes().map((r) => r.name);
    for (const n of ["cellular_neighborhoods", "region_composition", "region_kruskal"])
      expect(names).toContain(n);
  });

  it("cellular_neighborhoods, then region_composition and region_kruskal over spatial regions", async () => {
    const s = await t.open("xenium");
    for (const [key, params] of [
      ["sc.pp.normalize_total", {}],
      ["sc.pp.log1p", {}],
      ["sc.pp.pca", { n_comps: 20 }],
      ["sc.pp.neighbors", { n_neighbors: 10 }],
      ["sc.tl.leiden", { resolution: 0.5, key_added: "cell_type" }],
      ["custom.identify_regions_leiden", { resolution: 0.3, key_added: "region" }],
    ] as const) {
      const o = await s.run(key, params);
      expect(o.error ?? o.status, key).toBe("completed");
    }
    expectAllCompleted(await s.runRecipe(t.recipe("cellular_neighborhoods"), { k: 15, resolution: 0.3 }));
    expectAllCompleted(await s.runRecipe(t.recipe("region_composition"), {}));
    expectAllCompleted(await s.runRecipe(t.recipe("region_kruskal"), { n_top: 10 }));

    const table =
      s.session.data.tables[s.session.activeTable ?? "table"] ?? Object.values(s.session.data.tables)[0]!;
    const n = table.obs.index.values.length;
    const cn = table.obs.columns.cellular_neighborhood as Categorical;
    expect(cn.codes.length).toBe(n);
    expect(cn.codes.every((c) => c >= 0)).toBe(true);
    const types = (table.obs.columns.cell_type as Categorical).categories;
    const nTypes = types.kind === "string" ? types.values.length : 0;
    // Every window composition sums to 1.
    const comp = table.obsm.cellular_neighborhood_composition as unknown as { data: Float32Array };
    for (let i = 0; i < n; i += 37) {
      let sum = 0;
      for (let j = 0; j < nTypes; j++) sum += comp.data[i * nTypes + j]!;
      expect(sum).toBeCloseTo(1, 5);
    }
    // The composition crosstab counts every cell once.
    const counts = unsGet(table.uns, "region_cell_type_composition/counts") as DataFrame;
    let total = 0;
    for (const c of counts.columnOrder)
      for (const v of (counts.columns[c] as { data: Int32Array }).data) total += v;
    expect(total).toBe(n);
    expect(unsGet(table.uns, "region_cellular_neighborhood_composition/pvalue")).toBeGreaterThanOrEqual(0);
    const res = unsGet(table.uns, "region_feature_kruskal/results") as DataFrame;
    expect(res.index.values.length).toBeGreaterThan(0);
    // The plot companions ran as plot jobs: PlotEntries (namespace pl, service-spec) drawn, with figures.
    const plots = s.session.appState.plots.filter((p) =>
      ["cellular_neighborhoods_plot", "region_feature_kruskal_plot"].includes(p.function),
    );
    expect(plots.map((p) => [p.namespace, p.function, p.status])).toEqual([
      ["pl", "cellular_neighborhoods_plot", "drawn"],
      ["pl", "region_feature_kruskal_plot", "drawn"],
    ]);
    for (const p of plots) {
      const svg = new TextDecoder().decode((await s.session.figure(p.id, "svg")) ?? new Uint8Array());
      expect(svg).toContain("<svg");
      expect((await s.session.figure(p.id, "png"))?.length ?? 0).toBeGreaterThan(100);
    }
    expect(s.session.appState.compute_history.map((e) => e.function)).not.toContain(
      "cellular_neighborhoods_plot",
    );
    // A redraw finds the function again from the entry (pl.<f> → custom.<f>, the one plot of that name).
    const redrawn = await (await s.session.redraw(plots[0]!.id)).done;
    expect(redrawn.error ?? redrawn.status).toBe("completed");
    const p = (res.columns.pvalue as { data: Float64Array }).data;
    const q = (res.columns.pvalue_adj as { data: Float64Array }).data;
    for (let i = 0; i < p.length; i++) {
      if (Number.isNaN(p[i]!)) continue;
      expect(q[i]!).toBeGreaterThanOrEqual(p[i]!);
    }
  });

  it("proximity, margin, infiltration and TMA cores run as jobs on the same data", async () => {
    const s = await t.open("xenium");
    for (const [key, params] of [
      ["sc.pp.normalize_total", {}],
      ["sc.pp.log1p", {}],
      ["sc.pp.pca", { n_comps: 20 }],
      ["sc.pp.neighbors", { n_neighbors: 10 }],
      ["sc.tl.leiden", { resolution: 0.5, key_added: "cell_type" }],
      ["custom.proximity_test", { cluster_key: "cell_type", n_perm: 50 }],
      ["custom.region_boundary", { cell_type_key: "cell_type", region_types: ["0"], method: "soft" }],
      ["custom.infiltration_profile", { cell_type_key: "cell_type", bins: 10 }],
      ["custom.identify_tmas", { nrows: 1, ncols: 1 }],
    ] as const) {
      const o = await s.run(key, params);
      expect(o.error ?? o.status, key).toBe("completed");
    }
    const table = Object.values(s.session.data.tables)[0]!;
    const z = unsGet(table.uns, "cell_type_proximity/zscore") as DataFrame;
    expect(z.columnOrder.length).toBe(z.index.values.length);
    const dist = (table.obs.columns.region_boundary_distance as { data: Float64Array }).data;
    expect(dist.some((d) => d > 0) && dist.some((d) => d < 0)).toBe(true);
    const nCells = unsGet(table.uns, "infiltration_profile/n_cells") as { data: Float64Array };
    expect(nCells.data.reduce((a, b) => a + b, 0)).toBe(dist.length);
    const core = table.obs.columns.tma_core as Categorical;
    expect(core.codes.every((c) => c === 0)).toBe(true); // one core asked for: every cell in A-1
  });
});

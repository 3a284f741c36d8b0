/**
 * The plot companions draw what their compute partners wrote: row and column labels, titles, a PNG and
 * a PDF, and the uns field they read; a missing result names the compute to run.
 */
import { describe, expect, it } from "vitest";
import { infiltration_profile, region_boundary } from "../../../src/plugins/spatial/boundary.js";
import { region_composition } from "../../../src/plugins/spatial/composition.js";
import {
  cellular_neighborhoods_plot,
  infiltration_profile_plot,
  proximity_test_plot,
  region_composition_plot,
  region_feature_kruskal_plot,
} from "../../../src/plugins/spatial/plots.js";
import { proximity_test } from "../../../src/plugins/spatial/proximity.js";
import { region_feature_kruskal } from "../../../src/plugins/spatial/region-kruskal.js";
import { cellular_neighborhoods } from "../../../src/plugins/spatial/regions.js";
import { dense } from "../../../src/sdk/data/arrays.js";
import { applyChange, type Change } from "../../../src/sdk/data/change.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import type { PlotResult } from "../../../src/sdk/jobs/operation.js";
import { testContext } from "../context.js";
import { cat, tableData } from "./build.js";

const PNG = [0x89, 0x50, 0x4e, 0x47];

function expectFigure(r: PlotResult, texts: string[]): void {
  expect(r.kind).toBe("plot");
  for (const s of texts) expect(r.svg).toContain(s);
  expect(Array.from(r.png!.subarray(0, 4))).toEqual(PNG);
  expect(new TextDecoder().decode(r.pdf!.subarray(0, 5))).toBe("%PDF-");
}

describe("spatial plot companions", () => {
  it("draw the neighbourhoods, composition, Kruskal, proximity and infiltration results", async () => {
    // 30 × 10 grid: left third tumour, middle mixed, right third immune; two regions split at x = 15.
    const xy: [number, number][] = [];
    for (let y = 0; y < 10; y++) for (let x = 0; x < 30; x++) xy.push([x, y]);
    const types = xy.map(([x, y]) =>
      x < 10 ? "Tumour" : x < 20 ? ((x + y) % 2 ? "Tumour" : "Tcell") : "Tcell",
    );
    const region = xy.map(([x]) => (x < 15 ? "left" : "right"));
    const X = dense(Float32Array.from(xy.flatMap(([x], i) => [x / 10, i % 3, 1])), [xy.length, 3]);
    let sd: SpatialData = tableData({
      obs: { cell_type: cat(types), region: cat(region) },
      xy,
      X,
      genes: ["gA", "gB", "gC"],
    });
    const run = async (p: Promise<Change>) => {
      sd = applyChange(sd, await p).sdata;
    };
    const ctx = () => testContext().ctx;
    await run(cellular_neighborhoods(sd, { cell_type_key: "cell_type", resolution: 0.5 }, ctx()));
    await run(region_composition(sd, { region_key: "region", cell_type_key: "cell_type" }, ctx()));
    await run(region_feature_kruskal(sd, { region_key: "region", cell_type_key: "cell_type" }, ctx()));
    await run(proximity_test(sd, { cluster_key: "cell_type", n_perm: 20 }, ctx()));
    await run(region_boundary(sd, { cell_type_key: "cell_type", region_types: ["Tumour"] }, ctx()));
    await run(infiltration_profile(sd, { cell_type_key: "cell_type", bins: 6 }, ctx()));

    const cn = await cellular_neighborhoods_plot(sd, {}, ctx());
    expectFigure(cn, ["Tumour", "Tcell", "log2 enrichment"]);
    expect(cn.references).toContain("tables:table:uns:cellular_neighborhood");
    expectFigure(await region_composition_plot(sd, { key: "region_cell_type_composition" }, ctx()), [
      "left",
      "right",
      "χ² =",
    ]);
    expectFigure(
      await region_composition_plot(sd, { key: "region_cell_type_composition", value: "residuals" }, ctx()),
      ["(O − E)/√E"],
    );
    expectFigure(await region_feature_kruskal_plot(sd, { cell_type: "Tumour", n_genes: 2 }, ctx()), [
      "gA",
      "Tumour: genes across regions",
    ]);
    expectFigure(await proximity_test_plot(sd, { key: "cell_type_proximity" }, ctx()), ["z-score"]);
    expectFigure(await infiltration_profile_plot(sd, {}, ctx()), ["Infiltration across the margin", "Tcell"]);
  });

  it("names the compute to run first", async () => {
    const sd = tableData({
      obs: { a: cat(["x", "y"]) },
      xy: [
        [0, 0],
        [1, 1],
      ],
    });
    await expect(cellular_neighborhoods_plot(sd, {}, testContext().ctx)).rejects.toThrow(
      /no uns\["cellular_neighborhood\/enrichment"\]; run custom.cellular_neighborhoods first/,
    );
  });
});

/**
 * `custom.region_boundary`, `custom.infiltration_profile` and `custom.identify_tmas` on layouts whose
 * answers follow by hand: a tumour half and an immune half of a grid, distances binned by hand, a
 * 2 × 3 array of cores (also rotated) with a stray cell.
 */
import { describe, expect, it } from "vitest";
import { infiltration_profile, region_boundary } from "../../../src/plugins/spatial/boundary.js";
import { identify_tmas, letters } from "../../../src/plugins/spatial/tma.js";
import { type Categorical, dense, type StringArray } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { testContext } from "../context.js";
import { cat, tableData } from "./build.js";

const col = (df: DataFrame, name: string) =>
  Array.from((df.columns[name] as { data: ArrayLike<number> }).data);
const labelOf = (c: Categorical, i: number) => (c.categories as StringArray).values[c.codes[i]!] ?? null;

describe("custom.region_boundary", () => {
  // A 20 × 10 grid: x < 10 tumour (T), x ≥ 10 immune (I).
  const xy: [number, number][] = [];
  for (let y = 0; y < 10; y++) for (let x = 0; x < 20; x++) xy.push([x, y]);
  const types = xy.map(([x]) => (x < 10 ? "T" : "I"));
  const at = (x: number, y: number) => y * 20 + x;

  it("mask: windows of 5 cells put x ≤ 9 inside; distances to the nearest cell across the margin", async () => {
    const sd = tableData({ obs: { cell_type: cat(types) }, xy });
    const { ctx, logs } = testContext();
    const change = await region_boundary(
      sd,
      { cell_type_key: "cell_type", region_types: ["T"], n_neighbors: 5 },
      ctx,
    );
    const t = applyChange(sd, change).sdata.tables.table!;
    const side = t.obs.columns.region_boundary as Categorical;
    const dist = (t.obs.columns.region_boundary_distance as { data: Float64Array }).data;
    const score = (t.obs.columns.region_boundary_score as { data: Float64Array }).data;
    // Interior rows (away from the grid's top and bottom edges, where ties in the window differ).
    for (let y = 2; y < 8; y++) {
      expect(labelOf(side, at(9, y))).toBe("inside"); // self, (8,y), (9,y±1) are T: 4/5
      expect(score[at(9, y)]).toBeCloseTo(0.8, 15);
      expect(labelOf(side, at(10, y))).toBe("outside"); // only (9,y) is T: 1/5 < 0.25
      expect(score[at(10, y)]).toBeCloseTo(0.2, 15);
    }
    expect(dist[at(2, 5)]).toBe(8); // nearest outside cell (10, 5)
    expect(dist[at(12, 5)]).toBe(-3); // nearest inside cell (9, 5)
    expect(dist[at(9, 5)]).toBe(1);
    expect(logs.join("\n")).toMatch(/inside \(mask, threshold 0.25\)/);
  });

  it("soft: deep cells on their sides; unknown types and no margin are errors", async () => {
    const sd = tableData({ obs: { cell_type: cat(types) }, xy });
    const change = await region_boundary(
      sd,
      { cell_type_key: "cell_type", region_types: ["T"], method: "soft" },
      testContext().ctx,
    );
    const t = applyChange(sd, change).sdata.tables.table!;
    const side = t.obs.columns.region_boundary as Categorical;
    expect(labelOf(side, at(2, 5))).toBe("inside");
    expect(labelOf(side, at(17, 5))).toBe("outside");
    expect(unsGet(t.uns, "region_boundary/params/bandwidth")).toBeGreaterThan(0);
    await expect(
      region_boundary(sd, { cell_type_key: "cell_type", region_types: ["X"] }, testContext().ctx),
    ).rejects.toThrow(/no category "X"/);
    await expect(
      region_boundary(sd, { cell_type_key: "cell_type", region_types: ["T", "I"] }, testContext().ctx),
    ).rejects.toThrow(/every cell is inside/);
  });
});

describe("custom.infiltration_profile", () => {
  it("bins the signed distance and counts types by hand", async () => {
    // range [-3, 2] in 3 bins of 5/3: {-3, -2} a a | {-1, 0} b b | {1, 2} a b (last bin closed)
    const sd = tableData({
      obs: {
        region_boundary_distance: dense(Float64Array.from([-3, -2, -1, 0, 1, 2, Number.NaN])),
        cell_type: cat(["a", "a", "b", "b", "a", "b", "a"]),
      },
    });
    const change = await infiltration_profile(sd, { cell_type_key: "cell_type", bins: 3 }, testContext().ctx);
    const t = applyChange(sd, change).sdata.tables.table!;
    const profile = unsGet(t.uns, "infiltration_profile/profile") as DataFrame;
    expect(col(profile, "a")).toEqual([1, 0, 0.5]);
    expect(col(profile, "b")).toEqual([0, 1, 0.5]);
    const edges = unsGet(t.uns, "infiltration_profile/bin_edges") as { data: Float64Array };
    expect(Array.from(edges.data)).toEqual([-3, -3 + 5 / 3, -3 + 10 / 3, 2]);
    expect(
      Array.from((unsGet(t.uns, "infiltration_profile/n_cells") as { data: Float64Array }).data),
    ).toEqual([2, 2, 2]);
    const counts = await infiltration_profile(
      sd,
      { cell_type_key: "cell_type", bins: 2, value: "count", range: [-1, 1] },
      testContext().ctx,
    );
    const p2 = unsGet(
      applyChange(sd, counts).sdata.tables.table!.uns,
      "infiltration_profile/profile",
    ) as DataFrame;
    expect(col(p2, "a")).toEqual([0, 1]);
    expect(col(p2, "b")).toEqual([1, 1]);
    await expect(
      infiltration_profile(sd, { cell_type_key: "cell_type", distance_key: "cell_type" }, testContext().ctx),
    ).rejects.toThrow(/not numeric/);
  });
});

describe("custom.identify_tmas", () => {
  /** A 2 × 3 array of round cores (radius 5, 25 apart), 60 cells each, and one stray cell below. */
  function slide(angleDeg: number): [number, number][] {
    const rng = new Rng(4);
    const pts: [number, number][] = [];
    for (let r = 0; r < 2; r++)
      for (let c = 0; c < 3; c++)
        for (let k = 0; k < 60; k++) {
          const a = rng.uniform(0, 2 * Math.PI);
          const rad = 5 * Math.sqrt(rng.uniform(0, 1));
          pts.push([25 * c + rad * Math.cos(a), 25 * r + rad * Math.sin(a)]);
        }
    pts.push([0, 50]);
    const th = (angleDeg * Math.PI) / 180;
    return pts.map(([x, y]) => [x * Math.cos(th) - y * Math.sin(th), x * Math.sin(th) + y * Math.cos(th)]);
  }

  it("finds the cores from the gaps, names them, drops the stray one; also on a rotated slide", async () => {
    for (const angle of [0, 30]) {
      const xy = slide(angle);
      const sd = tableData({ obs: { any: cat(xy.map(() => "x")) }, xy });
      const { ctx } = testContext();
      const change = await identify_tmas(sd, { angle, min_prop_cells: 0.01 }, ctx);
      const t = applyChange(sd, change).sdata.tables.table!;
      const core = t.obs.columns.tma_core as Categorical;
      expect((core.categories as StringArray).values).toEqual(["A-1", "A-2", "A-3", "B-1", "B-2", "B-3"]);
      for (let r = 0; r < 2; r++)
        for (let c = 0; c < 3; c++)
          for (let k = 0; k < 60; k++)
            expect(labelOf(core, (r * 3 + c) * 60 + k)).toBe(`${letters(r)}-${c + 1}`);
      expect(core.codes[360]).toBe(-1); // the stray cell's core has 1 of 361 cells < 1%
      const cores = unsGet(t.uns, "tma_core/cores") as DataFrame;
      expect(col(cores, "n_cells")).toEqual([60, 60, 60, 60, 60, 60]);
      expect(unsGet(t.uns, "tma_core/params/nrows")).toBe(3);
    }
  });

  it("given rows and columns, bottom-right start and the reverse naming", async () => {
    const xy = slide(0).slice(0, 360);
    const sd = tableData({ obs: { any: cat(xy.map(() => "x")) }, xy });
    const change = await identify_tmas(
      sd,
      { nrows: 2, ncols: 3, row_start: "Bottom", col_start: "Right", naming: "Row=Number;Column=Letter" },
      testContext().ctx,
    );
    const core = applyChange(sd, change).sdata.tables.table!.obs.columns.tma_core as Categorical;
    expect(labelOf(core, 0)).toBe("2-C"); // the top-left core, counted from the bottom right
    expect(labelOf(core, 5 * 60)).toBe("1-A");
    expect(letters(25)).toBe("Z");
    expect(letters(26)).toBe("AA");
  });
});

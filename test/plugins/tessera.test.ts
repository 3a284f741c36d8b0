/**
 * The service's own operations on the demo data (300 cells): each compute's Change, applied with
 * applyChange, gives the expected table; extracts return the expected values.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  annotate_cells,
  describe as describeOp,
  obs_values,
  rename_categories,
  rename_obs_column,
  set_category_colors,
} from "../../src/plugins/tessera/custom.js";
import { DEFAULT_20 } from "../../src/plugins/tessera/palette.js";
import { open_data, read_data } from "../../src/plugins/tessera/read.js";
import type { Categorical, DenseArray, StringArray } from "../../src/sdk/data/arrays.js";
import { applyChange } from "../../src/sdk/data/change.js";
import { columnValue } from "../../src/sdk/data/dataframe.js";
import type { SpatialData } from "../../src/sdk/data/spatialdata.js";
import { unsGet } from "../../src/sdk/data/uns.js";
import { generateDemo } from "../../src/sdk/demo/generate.js";
import { fixture } from "../fixtures.js";
import { testContext } from "./context.js";

const CELL_TYPES = [
  "Epithelial",
  "Tumor",
  "Fibroblast",
  "Endothelial",
  "T cell",
  "B cell",
  "Macrophage",
  "Smooth muscle",
];

let sd: SpatialData;
beforeAll(() => {
  sd = generateDemo({ nCells: 300 });
});

const table = (s: SpatialData) => s.tables.table!;
const labels = (c: Categorical) => (c.categories as StringArray).values;

describe("custom.rename_obs_column", () => {
  it("moves the column and its colours to the new name", async () => {
    const { ctx } = testContext();
    const change = await rename_obs_column(sd, { old_name: "cell_type", new_name: "compartment" }, ctx);
    const { sdata, diff, touched } = applyChange(sd, change);
    const t = table(sdata);
    expect(t.obs.columnOrder).toEqual([
      "cell_id",
      "region",
      "total_counts",
      "cell_area",
      "nucleus_area",
      "compartment",
    ]);
    expect(t.obs.columns.compartment).toBe(table(sd).obs.columns.cell_type);
    expect(unsGet(t.uns, "cell_type_colors")).toBeUndefined();
    expect(unsGet(t.uns, "compartment_colors")).toBe(unsGet(table(sd).uns, "cell_type_colors"));
    expect(diff).toEqual({
      obs: ["cell_type", "compartment"],
      uns: ["cell_type_colors", "compartment_colors"],
    });
    expect(touched).toContain("tables:table:obs:compartment");
    // the input is untouched
    expect(table(sd).obs.columns.cell_type).toBeDefined();
  });

  it("refuses a missing column, an existing target and the region key", async () => {
    const { ctx } = testContext();
    await expect(rename_obs_column(sd, { old_name: "nope", new_name: "x" }, ctx)).rejects.toThrow(
      'table "table" has no obs column "nope"',
    );
    await expect(
      rename_obs_column(sd, { old_name: "cell_type", new_name: "cell_area" }, ctx),
    ).rejects.toThrow('already has an obs column "cell_area"');
    await expect(rename_obs_column(sd, { old_name: "region", new_name: "r" }, ctx)).rejects.toThrow(
      "region or instance key",
    );
    await expect(
      rename_obs_column(sd, { old_name: "x", new_name: "y" }, testContext("other").ctx),
    ).rejects.toThrow('no table "other" (tables: table)');
  });
});

describe("custom.rename_categories", () => {
  it("renames categories in place, keeping codes and order", async () => {
    const { ctx } = testContext();
    const change = await rename_categories(
      sd,
      { key: "cell_type", mapping: { Tumor: "Tumour", "T cell": "T" } },
      ctx,
    );
    const { sdata, diff } = applyChange(sd, change);
    const before = table(sd).obs.columns.cell_type as Categorical;
    const after = table(sdata).obs.columns.cell_type as Categorical;
    expect(labels(after)).toEqual([
      "Epithelial",
      "Tumour",
      "Fibroblast",
      "Endothelial",
      "T",
      "B cell",
      "Macrophage",
      "Smooth muscle",
    ]);
    expect(after.codes).toBe(before.codes);
    expect(diff).toEqual({ obs: ["cell_type"] });
    const tumour = before.codes.indexOf(1);
    expect(columnValue(after, tumour)).toBe("Tumour");
  });

  it("refuses unknown categories, merges and non-categorical columns", async () => {
    const { ctx } = testContext();
    await expect(rename_categories(sd, { key: "cell_type", mapping: { Neuron: "x" } }, ctx)).rejects.toThrow(
      'obs column "cell_type" has no category "Neuron"',
    );
    await expect(
      rename_categories(sd, { key: "cell_type", mapping: { Tumor: "Epithelial" } }, ctx),
    ).rejects.toThrow('would both be named "Epithelial"');
    await expect(rename_categories(sd, { key: "cell_area", mapping: {} }, ctx)).rejects.toThrow(
      "is dense, not categorical",
    );
  });
});

describe("custom.set_category_colors", () => {
  it("overrides the listed categories and keeps the others", async () => {
    const { ctx } = testContext();
    const old = (unsGet(table(sd).uns, "cell_type_colors") as StringArray).values;
    const change = await set_category_colors(
      sd,
      { key: "cell_type", colors: { Tumor: "#000000", "Smooth muscle": "#ffffff" } },
      ctx,
    );
    const { sdata, diff } = applyChange(sd, change);
    const colors = (unsGet(table(sdata).uns, "cell_type_colors") as StringArray).values;
    expect(colors).toEqual([old[0], "#000000", ...old.slice(2, 7), "#ffffff"]);
    expect(diff).toEqual({ uns: ["cell_type_colors"] });
  });

  it("starts from scanpy's default palette when the column has no colours", async () => {
    const { ctx } = testContext();
    const change = await set_category_colors(
      sd,
      { key: "region", colors: { cell_boundaries: "#123456" } },
      ctx,
    );
    const { sdata } = applyChange(sd, change);
    expect((unsGet(table(sdata).uns, "region_colors") as StringArray).values).toEqual(["#123456"]);
    const annotated = applyChange(
      sd,
      await annotate_cells(sd, { region_set: "roi", category: "a", cell_indices: [0] }, ctx),
    );
    const c2 = await set_category_colors(annotated.sdata, { key: "roi", colors: {} }, ctx);
    expect((c2.tables!.table!.uns!.roi_colors as StringArray).values).toEqual([DEFAULT_20[0]]);
  });

  it("refuses bad colours and unknown categories", async () => {
    const { ctx } = testContext();
    await expect(
      set_category_colors(sd, { key: "cell_type", colors: { Tumor: "red" } }, ctx),
    ).rejects.toThrow('"red"');
    await expect(
      set_category_colors(sd, { key: "cell_type", colors: { Neuron: "#000000" } }, ctx),
    ).rejects.toThrow('no category "Neuron"');
  });
});

describe("custom.annotate_cells", () => {
  it("creates a region set with the chosen cells and missing elsewhere", async () => {
    const { ctx } = testContext();
    const change = await annotate_cells(
      sd,
      { region_set: "roi", category: "tumour_core", cell_indices: [3, 5, 299] },
      ctx,
    );
    const { sdata, diff } = applyChange(sd, change);
    const roi = table(sdata).obs.columns.roi as Categorical;
    expect(roi.kind).toBe("categorical");
    expect(labels(roi)).toEqual(["tumour_core"]);
    expect(Array.from(roi.codes).filter((c) => c === 0).length).toBe(3);
    expect([roi.codes[3], roi.codes[5], roi.codes[299], roi.codes[0]]).toEqual([0, 0, 0, -1]);
    expect(diff).toEqual({ obs: ["roi"] });
  });

  it("keeps existing labels and appends a new category (and a colour when there are colours)", async () => {
    const { ctx } = testContext();
    const first = applyChange(
      sd,
      await annotate_cells(sd, { region_set: "roi", category: "a", cell_indices: [1, 2] }, ctx),
    );
    const withColors = applyChange(
      first.sdata,
      await set_category_colors(first.sdata, { key: "roi", colors: { a: "#ff0000" } }, ctx),
    );
    const second = await annotate_cells(
      withColors.sdata,
      { region_set: "roi", category: "b", cell_indices: [2, 7] },
      ctx,
    );
    const { sdata, diff } = applyChange(withColors.sdata, second);
    const roi = table(sdata).obs.columns.roi as Categorical;
    expect(labels(roi)).toEqual(["a", "b"]);
    expect([roi.codes[1], roi.codes[2], roi.codes[7], roi.codes[0]]).toEqual([0, 1, 1, -1]);
    expect((unsGet(table(sdata).uns, "roi_colors") as StringArray).values).toEqual([
      "#ff0000",
      DEFAULT_20[1],
    ]);
    expect(diff).toEqual({ obs: ["roi"], uns: ["roi_colors"] });
    // relabelling into an existing category adds none
    const third = applyChange(
      sdata,
      await annotate_cells(sdata, { region_set: "roi", category: "a", cell_indices: [7] }, ctx),
    );
    const roi3 = table(third.sdata).obs.columns.roi as Categorical;
    expect(labels(roi3)).toEqual(["a", "b"]);
    expect(roi3.codes[7]).toBe(0);
    // the committed array was not written into
    expect(roi.codes[7]).toBe(1);
  });

  it("labels into an existing categorical column (the demo's cell types)", async () => {
    const { ctx } = testContext();
    const change = await annotate_cells(
      sd,
      { region_set: "cell_type", category: "Neuron", cell_indices: [0] },
      ctx,
    );
    const { sdata } = applyChange(sd, change);
    const ct = table(sdata).obs.columns.cell_type as Categorical;
    expect(labels(ct)).toEqual([...CELL_TYPES, "Neuron"]);
    expect(ct.codes[0]).toBe(8);
    expect(ct.codes[1]).toBe((table(sd).obs.columns.cell_type as Categorical).codes[1]);
    expect((unsGet(table(sdata).uns, "cell_type_colors") as StringArray).values.length).toBe(9);
  });

  it("refuses rows outside the table and non-categorical columns", async () => {
    const { ctx } = testContext();
    await expect(
      annotate_cells(sd, { region_set: "roi", category: "a", cell_indices: [300] }, ctx),
    ).rejects.toThrow("cell_indices[0] = 300 is not a row of table");
    await expect(
      annotate_cells(sd, { region_set: "cell_area", category: "a", cell_indices: [0] }, ctx),
    ).rejects.toThrow("not categorical");
    await expect(annotate_cells(sd, { region_set: "roi", category: "a" }, ctx)).rejects.toThrow(
      "give exactly one of polygons and cell_indices",
    );
  });

  it("labels the cells inside polygons (obsm spatial), the same cells as their indices", async () => {
    const { ctx } = testContext();
    const sp = table(sd).obsm.spatial as { data: Float64Array };
    const xs = Array.from({ length: 300 }, (_, i) => sp.data[2 * i]!);
    const ys = Array.from({ length: 300 }, (_, i) => sp.data[2 * i + 1]!);
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
    const [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    const mx = (x0 + x1) / 2;
    const my = (y0 + y1) / 2;
    const square = [
      [x0 - 1, y0 - 1],
      [mx, y0 - 1],
      [mx, my],
      [x0 - 1, my],
    ];
    const inside = xs.flatMap((x, i) => (x < mx && ys[i]! < my ? [i] : []));
    expect(inside.length).toBeGreaterThan(10);
    const byPoly = applyChange(
      sd,
      await annotate_cells(sd, { region_set: "roi", category: "a", polygons: [square] }, ctx),
    );
    const byIdx = applyChange(
      sd,
      await annotate_cells(sd, { region_set: "roi", category: "a", cell_indices: inside }, ctx),
    );
    const a = table(byPoly.sdata).obs.columns.roi as Categorical;
    const b = table(byIdx.sdata).obs.columns.roi as Categorical;
    expect(Array.from(a.codes)).toEqual(Array.from(b.codes));
    expect(Array.from(a.codes).filter((c) => c === 0)).toHaveLength(inside.length);
  });
});

describe("custom.obs_values", () => {
  it("counts a categorical's categories in order, zero counts included", async () => {
    const { ctx } = testContext();
    const res = await obs_values(sd, { column: "cell_type" }, ctx);
    expect(res.column).toBe("cell_type");
    expect(res.values.map((v) => v.value)).toEqual(CELL_TYPES);
    const codes = (table(sd).obs.columns.cell_type as Categorical).codes;
    const expected = CELL_TYPES.map((_, i) => Array.from(codes).filter((c) => c === i).length);
    expect(res.values.map((v) => v.count)).toEqual(expected);
    expect(expected.reduce((a, b) => a + b)).toBe(300);
    const region = await obs_values(sd, { column: "region" }, ctx);
    expect(region.values).toEqual([{ value: "cell_boundaries", count: 300 }]);
  });

  it("lists a categorical's missing cells as null and numeric values by frequency", async () => {
    const { ctx } = testContext();
    const { sdata } = applyChange(
      sd,
      await annotate_cells(sd, { region_set: "roi", category: "a", cell_indices: [0, 1] }, ctx),
    );
    expect((await obs_values(sdata, { column: "roi" }, ctx)).values).toEqual([
      { value: "a", count: 2 },
      { value: null, count: 298 },
    ]);
    const ids = await obs_values(sd, { column: "cell_id", limit: 3 }, ctx);
    expect(ids.values).toHaveLength(3);
    expect(ids.values.every((v) => v.count === 1 && typeof v.value === "number")).toBe(true);
    const sortedIds = Array.from((table(sd).obs.columns.cell_id as DenseArray<Int32Array>).data).sort(
      (a, b) => a - b,
    );
    expect(ids.values.map((v) => v.value)).toEqual(sortedIds.slice(0, 3));
  });
});

describe("custom.describe", () => {
  it("returns the element inventory", async () => {
    const inv = await describeOp(sd, {}, testContext().ctx);
    expect(inv.tables.map((t) => [t.name, t.n_obs, t.n_vars])).toEqual([["table", 300, 300]]);
    expect(inv.images.map((i) => i.name)).toEqual(["morphology"]);
    expect(inv.shapes.map((s) => [s.name, s.n])).toEqual([["cell_boundaries", 300]]);
    expect(JSON.parse(JSON.stringify(inv))).toEqual(inv);
  });
});

describe("read.read_data (and its alias read.open_data)", () => {
  it("opens a SpatialData store, under either name", async () => {
    for (const reader of [read_data, open_data]) {
      const { ctx, logs } = testContext();
      const out = await reader(sd, { path: fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr") }, ctx);
      expect(Object.keys(out.tables).sort()).toEqual(["table", "table_points"]);
      expect(Object.keys(out.images).sort()).toEqual(["blobs_image", "blobs_multiscale_image"]);
      expect(logs[0]).toMatch(/as spatialdata-zarr$/);
    }
  });
});

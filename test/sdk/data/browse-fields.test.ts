import { describe, expect, it } from "vitest";
import { dense, strings } from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { elementInventory } from "../../../src/sdk/data/element-inventory.js";
import type { ShapesElement } from "../../../src/sdk/data/elements.js";
import { obsValueCounts } from "../../../src/sdk/data/obs-values.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import { jsonSafe, TABLE_PAGE_MAX_LIMIT, tablePage } from "../../../src/sdk/data/table-page.js";
import { searchVarNames } from "../../../src/sdk/data/var-search.js";
import { BadRequestError, NotFoundError } from "../../../src/sdk/errors.js";

const obs = dataFrame(
  ["c1", "c2", "c3", "c4", "c5"],
  {
    // Category "unused" has no cell; one code is missing.
    type: {
      kind: "categorical",
      codes: Int32Array.from([2, 0, 2, -1, 0]),
      categories: strings(["b", "unused", "a"]),
      ordered: false,
    },
    label: strings(["y", "x", null, "y", "Y"]),
    flag: dense(Uint8Array.from([1, 0, 1, 1, 0]), [5], "bool"),
    score: dense(Float32Array.from([0.1, Number.NaN, 0.1, 2.5, Number.POSITIVE_INFINITY])),
    big: dense(BigInt64Array.from([1n, 2n, 9007199254740993n, -3n, 0n])),
    maybe: {
      kind: "nullable",
      dtype: "int32",
      data: Int32Array.from([3, 1, 0, 3, 7]),
      mask: Uint8Array.from([0, 0, 1, 0, 0]),
    },
    area: dense(Float64Array.from([1.5, 2.5, 3.5, 4.5, 5.5])),
  },
  "cell",
);
const table = makeTable({
  obs,
  var: dataFrame(["CD3E", "cd8a", "ACD3", "GAPDH", "CD3D"], {}),
  X: { kind: "dense", dtype: "float32", shape: [5, 5], data: new Float32Array(25) },
});

const square = (x: number) => [x, 0, x + 1, 0, x + 1, 1, x, 1, x, 0];
const polygons: ShapesElement = {
  kind: "shapes",
  name: "cells",
  transformations: {},
  geometry: {
    type: "multipolygon",
    coords: Float64Array.from([...square(0), ...square(2), ...square(4)]),
    // Feature 0: two polygons (one ring each); feature 1: one polygon.
    geomOffsets: Int32Array.from([0, 2, 3]),
    polygonOffsets: Int32Array.from([0, 1, 2, 3]),
    ringOffsets: Int32Array.from([0, 5, 10, 15]),
  },
  frame: dataFrame(["s1", "s2"], {}),
};
const circles: ShapesElement = {
  kind: "shapes",
  name: "spots",
  transformations: {},
  geometry: { type: "point", coords: Float64Array.from([1.5, 2, 3, 4]) },
  frame: dataFrame(["p1", "p2"], { radius: dense(Float64Array.from([1, 2])) }),
};
const sd = makeSpatialData({ tables: { t: table }, shapes: { cells: polygons, spots: circles } });

describe("obsValueCounts", () => {
  it("lists every category in order, unused ones with 0, missing last as null", () => {
    expect(obsValueCounts(table, "type")).toEqual([
      { value: "b", count: 2 },
      { value: "unused", count: 0 },
      { value: "a", count: 2 },
      { value: null, count: 1 },
    ]);
  });
  it("sorts string and boolean values (code point order), null last", () => {
    expect(obsValueCounts(table, "label")).toEqual([
      { value: "Y", count: 1 },
      { value: "x", count: 1 },
      { value: "y", count: 2 },
      { value: null, count: 1 },
    ]);
    expect(obsValueCounts(table, "flag")).toEqual([
      { value: false, count: 2 },
      { value: true, count: 3 },
    ]);
  });
  it("lists numeric values ascending, float32 shortest, NaN/masked as null, infinities as strings", () => {
    expect(obsValueCounts(table, "score")).toEqual([
      { value: 0.1, count: 2 },
      { value: 2.5, count: 1 },
      { value: "Infinity", count: 1 },
      { value: null, count: 1 },
    ]);
    expect(obsValueCounts(table, "maybe")).toEqual([
      { value: 1, count: 1 },
      { value: 3, count: 2 },
      { value: 7, count: 1 },
      { value: null, count: 1 },
    ]);
  });
  it("refuses a numeric column past maxDistinct (400) and an unknown column (404)", () => {
    expect(() => obsValueCounts(table, "area", { maxDistinct: 4 })).toThrow(BadRequestError);
    expect(obsValueCounts(table, "area", { maxDistinct: 5 }).length).toBe(5);
    expect(() => obsValueCounts(table, "nope")).toThrow(NotFoundError);
    expect(() => obsValueCounts(table, "toString")).toThrow(NotFoundError);
  });
});

describe("searchVarNames", () => {
  const names = table.var.index;
  it("puts prefix matches first, then substrings, each in var order, case-insensitively", () => {
    expect(searchVarNames(names, "cd")).toEqual(["CD3E", "cd8a", "CD3D", "ACD3"]);
    expect(searchVarNames(names, "Cd3")).toEqual(["CD3E", "CD3D", "ACD3"]);
    expect(searchVarNames(names, "  gap ")).toEqual(["GAPDH"]);
    expect(searchVarNames(names, "zz")).toEqual([]);
  });
  it("honours the limit, and an empty query gives the first names", () => {
    expect(searchVarNames(names, "cd", 2)).toEqual(["CD3E", "cd8a"]);
    expect(searchVarNames(names, "", 3)).toEqual(["CD3E", "cd8a", "ACD3"]);
    expect(searchVarNames(strings([null, "A"]), "")).toEqual(["A"]);
  });
});

describe("tablePage", () => {
  it("makes every value JSON-safe and names dtypes", () => {
    const p = tablePage(sd, "t", "obs", 0, 10);
    expect(p.columns).toEqual([
      { name: "type", dtype: "category" },
      { name: "label", dtype: "string" },
      { name: "flag", dtype: "bool" },
      { name: "score", dtype: "float32" },
      { name: "big", dtype: "int64" },
      { name: "maybe", dtype: "Int32" },
      { name: "area", dtype: "float64" },
    ]);
    expect(p.index_name).toBe("cell");
    expect(p.rows[1]).toEqual(["b", "x", false, null, 2, 1, 2.5]);
    expect(p.rows[2]).toEqual(["a", null, true, 0.1, "9007199254740993", null, 3.5]);
    expect(p.rows[3]![0]).toBeNull();
    expect(p.rows[4]![3]).toBe("Infinity");
    expect(JSON.parse(JSON.stringify(p))).toEqual(p);
    expect(jsonSafe(-5n)).toBe(-5);
    expect(jsonSafe(Number.NEGATIVE_INFINITY)).toBe("-Infinity");
  });
  it("gives shapes geometry as WKT in a last column", () => {
    const m = tablePage(sd, "t", "shapes:cells");
    expect(m.rows.map((r) => r.at(-1))).toEqual([
      "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)), ((2 0, 3 0, 3 1, 2 1, 2 0)))",
      "MULTIPOLYGON (((4 0, 5 0, 5 1, 4 1, 4 0)))",
    ]);
    const c = tablePage(sd, "t", "shapes:spots");
    expect(c.columns).toEqual([
      { name: "radius", dtype: "float64" },
      { name: "geometry", dtype: "geometry" },
    ]);
    expect(c.rows).toEqual([
      [1, "POINT (1.5 2)"],
      [2, "POINT (3 4)"],
    ]);
  });
  it("caps the limit, clamps the offset, and refuses bad input", () => {
    expect(tablePage(sd, "t", "obs", 0, 10 ** 9).limit).toBe(TABLE_PAGE_MAX_LIMIT);
    expect(tablePage(sd, "t", "obs", 99, 10).rows).toEqual([]);
    expect(tablePage(sd, "t", "tables:t:var", 1, 2).index).toEqual(["cd8a", "ACD3"]);
    expect(() => tablePage(sd, "t", "obs", -1)).toThrow(BadRequestError);
    expect(() => tablePage(sd, "t", "obs", 0, 1.5)).toThrow(BadRequestError);
    expect(() => tablePage(sd, "t", "X")).toThrow(BadRequestError);
    expect(() => tablePage(sd, null, "obs")).toThrow(NotFoundError);
    expect(() => tablePage(sd, "t", "tables:u:obs")).toThrow(NotFoundError);
    expect(() => tablePage(sd, "t", "points:cells")).toThrow(NotFoundError);
  });
});

describe("elementInventory", () => {
  it("flags the active table and adds sizes whose parts sum to the whole", () => {
    const plain = elementInventory(sd, "t");
    expect(plain.tables).toEqual([{ name: "t", n_obs: 5, n_vars: 5, active: true, has_x: true, region: [] }]);
    expect(plain.shapes.map((s) => s.geometry)).toEqual(["multipolygon", "circle"]);
    const sized = elementInventory(sd, null, { sizes: true });
    const t = sized.tables[0]!;
    expect(t.active).toBe(false);
    const sum = Math.round(t.slots!.reduce((a, s) => a + s.size_mb!, 0) * 1000) / 1000;
    expect(t.size_mb).toBe(sum);
    expect(t.slots!.find((s) => s.path === "X")!.size_mb).toBe(0);
    expect(sized.shapes.every((s) => typeof s.size_mb === "number")).toBe(true);
  });
});

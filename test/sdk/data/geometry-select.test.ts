import { describe, expect, it } from "vitest";
import { strings } from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import type { ShapesElement } from "../../../src/sdk/data/elements.js";
import { markIntersecting } from "../../../src/sdk/data/geometry-select.js";
import { resolveRowSelection } from "../../../src/sdk/data/row-selection.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import { defaultAxes } from "../../../src/sdk/data/transforms.js";

const identity = {
  type: "identity" as const,
  input: { name: "cells", axes: defaultAxes(["x", "y"]) },
  output: { name: "global", axes: defaultAxes(["x", "y"]) },
};

/** A table of `n` rows "1".."n" annotating element `name`, with obsm spatial = the given centres. */
function tableFor(name: string, centres: number[][]) {
  const n = centres.length;
  const ids = Array.from({ length: n }, (_, i) => String(i + 1));
  return makeTable({
    obs: dataFrame(strings(ids), {
      region: { kind: "categorical", codes: new Int32Array(n), categories: strings([name]), ordered: false },
      cell_id: { kind: "dense", dtype: "int32", shape: [n], data: Int32Array.from(ids.map(Number)) },
    }),
    var: dataFrame([]),
    obsm: {
      spatial: { kind: "dense", dtype: "float64", shape: [n, 2], data: Float64Array.from(centres.flat()) },
    },
    annotation: { region: name, regionKey: "region", instanceKey: "cell_id" },
  });
}

/** Unit squares with lower-left corners at `corners`. */
function squares(corners: number[][]): ShapesElement {
  const n = corners.length;
  const coords = new Float64Array(n * 8);
  const geomOffsets = new Int32Array(n + 1);
  const ringOffsets = new Int32Array(n + 1);
  corners.forEach(([x, y], i) => {
    coords.set([x!, y!, x! + 1, y!, x! + 1, y! + 1, x!, y! + 1], i * 8);
    geomOffsets[i + 1] = i + 1;
    ringOffsets[i + 1] = (i + 1) * 4;
  });
  return {
    kind: "shapes",
    name: "cells",
    transformations: { global: identity },
    geometry: { type: "polygon", coords, geomOffsets, ringOffsets },
    frame: dataFrame(strings(corners.map((_, i) => String(i + 1)))),
  };
}

const box = (x0: number, y0: number, x1: number, y1: number) => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
];

describe("choosing cells by geometry intersection (subset) beside centroids (inspect, annotate)", () => {
  // Squares at x = 0, 2, 4 (y 0..1); centroids at x = 0.5, 2.5, 4.5.
  const corners = [
    [0, 0],
    [2, 0],
    [4, 0],
  ];
  const sd = makeSpatialData({
    shapes: { cells: squares(corners) },
    tables: {
      table: tableFor(
        "cells",
        corners.map(([x, y]) => [x! + 0.5, y! + 0.5]),
      ),
    },
  });
  const rows = async (polygons: number[][][], rule: "centroid" | "intersection") =>
    Array.from((await resolveRowSelection(sd, "table", { polygons }, rule)).mask);

  it("a box over the touching edges of two cells: no centroid inside, both outlines meet it", async () => {
    const q = [box(0.8, -1, 2.2, 0.3)];
    expect(await rows(q, "centroid")).toEqual([0, 0, 0]);
    expect(await rows(q, "intersection")).toEqual([1, 1, 0]);
  });

  it("a strip crossing a cell with no vertex of either inside the other (edge crossing only)", async () => {
    const q = [box(-1, 0.1, 1.5, 0.3)];
    expect(await rows(q, "centroid")).toEqual([0, 0, 0]);
    expect(await rows(q, "intersection")).toEqual([1, 0, 0]);
  });

  it("a small lasso inside one cell chooses that cell; a polygon in the gap between cells chooses none", async () => {
    expect(await rows([box(2.1, 0.1, 2.3, 0.3)], "intersection")).toEqual([0, 1, 0]);
    expect(await rows([box(1.2, 0.2, 1.8, 0.8)], "intersection")).toEqual([0, 0, 0]);
  });

  it("always keeps what centroids keep (a subset holds at least the inspected cells)", async () => {
    const q = [box(2.4, 0.4, 4.6, 0.6)];
    const c = await rows(q, "centroid");
    const i = await rows(q, "intersection");
    expect(c).toEqual([0, 1, 1]);
    for (let k = 0; k < 3; k++) expect(i[k]).toBeGreaterThanOrEqual(c[k]!);
  });

  it("circles: a spot meets a polygon within its radius, not beyond", () => {
    const centres = [
      [0, 0],
      [10, 0],
    ];
    const spots: ShapesElement = {
      kind: "shapes",
      name: "spots",
      transformations: { global: identity },
      geometry: { type: "point", coords: Float64Array.from(centres.flat()) },
      frame: dataFrame(strings(["1", "2"]), {
        radius: { kind: "dense", dtype: "float64", shape: [2], data: Float64Array.from([1, 1]) },
      }),
    };
    const sd2 = makeSpatialData({ shapes: { spots }, tables: { table: tableFor("spots", centres) } });
    const mask = new Uint8Array(2);
    // 0.9 from the first centre (inside its radius), 1.5 from the second (outside).
    expect(markIntersecting(sd2, "table", [box(0.9, -3, 8.5, 3)], mask)).toBe(true);
    expect(Array.from(mask)).toEqual([1, 0]);
  });

  it("a table annotating no shapes element has only centroids to test", () => {
    const sd3 = makeSpatialData({ tables: { table: tableFor("absent", [[0, 0]]) } });
    expect(markIntersecting(sd3, "table", [box(-1, -1, 1, 1)], new Uint8Array(1))).toBe(false);
  });
});

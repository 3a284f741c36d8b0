/**
 * tl.sliding_window against squidpy's own expectations (tests/tools/test_sliding_window.py: the window
 * corners of a 200 × 200 extent, the 9 windows of a square grid with overlap) and a brute-force
 * assignment computed here.
 */
import { describe, expect, it } from "vitest";
import { sliding_window, windowCorners } from "../../../src/plugins/squidpy/sliding-window.js";
import {
  type Categorical,
  type DenseArray,
  type StringArray,
  strings,
} from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import type { OpContext } from "../../../src/sdk/jobs/operation.js";

const ctx = { table: "table", progress: () => {}, log: () => {} } as unknown as OpContext;

function gridTable(coords: number[][], libraries?: string[]) {
  const n = coords.length;
  const obs: Record<string, Categorical> = {};
  if (libraries) {
    const cats = [...new Set(libraries)];
    obs.library_id = {
      kind: "categorical",
      codes: Int32Array.from(libraries, (l) => cats.indexOf(l)),
      categories: strings(cats),
      ordered: false,
    };
  }
  const table = makeTable({
    obs: dataFrame(strings(coords.map((_, i) => `c${i}`)), obs),
    var: dataFrame(strings([])),
    obsm: {
      spatial: { kind: "dense", dtype: "float64", shape: [n, 2], data: Float64Array.from(coords.flat()) },
    },
  });
  return makeSpatialData({ tables: { table } });
}

const corners = (w: { x0: number; x1: number; y0: number; y1: number }) => [w.x0, w.x1, w.y0, w.y1];

describe("tl.sliding_window", () => {
  it("lays out windows as squidpy's _calculate_window_corners (its three test cases)", () => {
    const ov = windowCorners(0, 200, 0, 200, 100, 20, false);
    expect(ov).toHaveLength(9);
    expect(corners(ov[0]!)).toEqual([0, 100, 0, 100]);
    expect(corners(ov[8]!)).toEqual([160, 200, 160, 200]);
    const no = windowCorners(0, 200, 0, 200, 100, 0, false);
    expect(no).toHaveLength(4);
    expect(corners(no[3]!)).toEqual([100, 200, 100, 200]);
    const drop = windowCorners(0, 200, 0, 200, 100, 20, true);
    expect(drop).toHaveLength(4);
    expect(corners(drop[3]!)).toEqual([80, 180, 80, 180]);
  });

  // Every point of a 10 × 10 integer grid (squidpy's adata_squaregrid covers it almost surely).
  const grid: number[][] = [];
  for (let x = 0; x < 10; x++) for (let y = 0; y < 10; y++) grid.push([x, y]);

  it("overlap 0: every cell in one window, the last window holding it, categories ordered by window", async () => {
    const sd = gridTable(grid);
    const c = await sliding_window(sd, { window_size: 5 }, ctx);
    const obs = c.tables!.table!.obs!;
    const col = obs.sliding_window_assignment as Categorical;
    const cats = (col.categories as StringArray).values;
    expect(col.ordered).toBe(true);
    expect(cats).toEqual(["window_0", "window_1", "window_2", "window_3"]);
    const wins = windowCorners(0, 9, 0, 9, 5, 0, false);
    grid.forEach(([x, y], i) => {
      let want = -1;
      wins.forEach((w, k) => {
        if (x! >= w.x0 && x! <= w.x1 && y! >= w.y0 && y! <= w.y1) want = k;
      });
      expect(cats[col.codes[i]!]).toBe(`window_${want}`);
    });
    // The coordinates used are written too.
    expect(Array.from((obs.globalX as DenseArray).data as Float64Array)).toEqual(grid.map((p) => p[0]));
  });

  it("overlap 2: one boolean column per window (9 on the square grid), each with the cells inside", async () => {
    const sd = gridTable(grid);
    const c = await sliding_window(sd, { window_size: 5, overlap: 2, sliding_window_key: "sw" }, ctx);
    const obs = c.tables!.table!.obs!;
    const wins = windowCorners(0, 9, 0, 9, 5, 2, false);
    expect(wins).toHaveLength(9);
    wins.forEach((w, k) => {
      const flags = (obs[`sw_window_${k}`] as DenseArray).data as Uint8Array;
      grid.forEach(([x, y], i) => {
        expect(flags[i]).toBe(x! >= w.x0 && x! <= w.x1 && y! >= w.y0 && y! <= w.y1 ? 1 : 0);
      });
    });
  });

  it("per library: windows from each library's own extent, labels prefixed, refusals named", async () => {
    const coords = [...grid, ...grid.map(([x, y]) => [x! + 100, y! + 100])];
    const libs = [...grid.map(() => "a"), ...grid.map(() => "b")];
    const c = await sliding_window(
      gridTable(coords, libs),
      { window_size: 5, library_key: "library_id" },
      ctx,
    );
    const col = c.tables!.table!.obs!.sliding_window_assignment as Categorical;
    const cats = (col.categories as StringArray).values;
    expect(cats).toEqual([
      "a_window_0",
      "b_window_0",
      "a_window_1",
      "b_window_1",
      "a_window_2",
      "b_window_2",
      "a_window_3",
      "b_window_3",
    ]);
    expect(cats[col.codes[0]!]).toBe("a_window_0");
    expect(cats[col.codes[100]!]).toBe("b_window_0");
    await expect(sliding_window(gridTable(grid), { window_size: 5, overlap: 5 }, ctx)).rejects.toThrow(
      /overlap/,
    );
    await expect(sliding_window(gridTable(grid), { library_key: "nope" }, ctx)).rejects.toThrow(/"nope"/);
  });
});

import { describe, expect, it } from "vitest";
import type { Shape } from "../../src/ui/app/canvas-tools/shape-geometry.js";
import {
  arrowedPath,
  arrowHead,
  dashPattern,
  dashPieces,
  paintOrder,
} from "../../src/ui/app/canvas-tools/shape-style.js";

const base: Shape = {
  id: "s",
  kind: "box",
  points: [
    [0, 0],
    [10, 10],
  ],
  text: null,
  color: "#3388ff",
  fill: "#ff0000",
  stroke_width: 2,
  font_size: 16,
  dash: "solid",
  arrow_start: false,
  arrow_end: false,
  arrow_size: 12,
  stroke_z: 1,
  fill_alpha: 0.25,
  fill_z: 0,
};

describe("shape styles", () => {
  it("dash patterns scale with the width", () => {
    expect(dashPattern("solid", 2)).toBeNull();
    expect(dashPattern("dashed", 2)).toEqual([8, 6]);
    expect(dashPattern("dotted", 4)).toEqual([0, 10]);
  });

  it("an arrow head is a triangle of the given length at the tip", () => {
    const h = arrowHead([100, 0], [0, 0], 20);
    expect(h[0]).toEqual([100, 0]);
    expect(h[1]![0]).toBeCloseTo(80);
    expect(h[2]![0]).toBeCloseTo(80);
    expect(Math.abs(h[1]![1] - h[2]![1])).toBeCloseTo(18);
    expect(arrowHead([1, 1], [1, 1], 20)).toEqual([]);
  });

  it("a line is shortened under its heads, at either end", () => {
    const { path, heads } = arrowedPath(
      [
        [0, 0],
        [100, 0],
      ],
      { arrow_start: true, arrow_end: true, arrow_size: 10 },
    );
    expect(heads).toHaveLength(2);
    expect(path[0]![0]).toBeCloseTo(8);
    expect(path[1]![0]).toBeCloseTo(92);
    expect(
      arrowedPath(
        [
          [0, 0],
          [5, 0],
        ],
        { arrow_start: false, arrow_end: false, arrow_size: 10 },
      ).heads,
    ).toEqual([]);
  });

  it("cuts a path into the dashes of a pattern", () => {
    const pieces = dashPieces(
      [
        [0, 0],
        [70, 0],
      ],
      [4, 3],
    );
    expect(pieces).toHaveLength(10);
    for (const p of pieces) expect(p.at(-1)![0] - p[0]![0]).toBeCloseTo(4);
    const dots = dashPieces(
      [
        [0, 0],
        [25, 0],
      ],
      [0, 5],
    );
    expect(dots.map((p) => Math.round(p[0]![0]))).toEqual([0, 5, 10, 15, 20, 25]);
  });

  it("paints parts by z, fills under their own stroke, z < 0 beneath the cells", () => {
    const a = { ...base, id: "a" };
    const b = { ...base, id: "b", fill_z: -1, stroke_z: 3 };
    const c = { ...base, id: "c", kind: "line" as const, fill: null, stroke_z: -2 };
    const t = { ...base, id: "t", kind: "text" as const, fill: null, stroke_z: -5 };
    const { below, above } = paintOrder([a, b, c, t]);
    expect(below.map((p) => `${p.shape.id}.${p.part}`)).toEqual(["c.stroke", "b.fill"]);
    // A text is always drawn over the cells; ties keep list order.
    expect(above.map((p) => `${p.shape.id}.${p.part}`)).toEqual([
      "t.stroke",
      "a.fill",
      "a.stroke",
      "b.stroke",
    ]);
  });
});

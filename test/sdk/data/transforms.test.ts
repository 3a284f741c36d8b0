import { describe, expect, it } from "vitest";
import { applyToPoint, invert, multiply, nearlyEqual } from "../../../src/sdk/data/affine.js";
import { parseTransformation, transformationMatrix } from "../../../src/sdk/data/transforms.js";

const cs = (name: string, axes: string[]) => ({ name, axes: axes.map((a) => ({ name: a })) });

describe("transformation matrices", () => {
  it("scale over c,y,x drops the channel and keeps x/y order", () => {
    const t = parseTransformation({
      type: "scale",
      scale: [1, 2, 3],
      input: cs("cyx", ["c", "y", "x"]),
      output: cs("global", ["c", "y", "x"]),
    });
    const m = transformationMatrix(t, ["x", "y"], ["x", "y"]);
    expect(m).toEqual([
      [3, 0, 0],
      [0, 2, 0],
      [0, 0, 1],
    ]);
  });

  it("translation, affine and sequence compose in order", () => {
    const seq = parseTransformation({
      type: "sequence",
      input: cs("xy", ["x", "y"]),
      output: cs("global", ["x", "y"]),
      transformations: [
        { type: "scale", scale: [2, 4] },
        { type: "translation", translation: [10, 20] },
      ],
    });
    const m = transformationMatrix(seq, ["x", "y"], ["x", "y"]);
    expect(applyToPoint(m, 1, 1)).toEqual([12, 24]);
    const aff = parseTransformation({
      type: "affine",
      affine: [
        [0, 1, 5],
        [1, 0, 6],
        [0, 0, 1],
      ],
      input: cs("xy", ["x", "y"]),
      output: cs("global", ["x", "y"]),
    });
    expect(applyToPoint(transformationMatrix(aff, ["x", "y"], ["x", "y"]), 1, 2)).toEqual([7, 7]);
  });

  it("affine given in y,x order maps onto x,y", () => {
    const aff = parseTransformation({
      type: "affine",
      affine: [
        [2, 0, 1],
        [0, 3, 2],
        [0, 0, 1],
      ],
      input: cs("yx", ["y", "x"]),
      output: cs("global", ["y", "x"]),
    });
    // y' = 2y + 1, x' = 3x + 2
    expect(applyToPoint(transformationMatrix(aff, ["x", "y"], ["x", "y"]), 1, 1)).toEqual([5, 3]);
  });

  it("mapAxis swaps axes and inverse undoes a matrix", () => {
    const t = parseTransformation({
      type: "mapAxis",
      mapAxis: { x: "y", y: "x" },
      input: cs("a", ["x", "y"]),
      output: cs("b", ["x", "y"]),
    });
    const m = transformationMatrix(t, ["x", "y"], ["x", "y"]);
    expect(applyToPoint(m, 3, 4)).toEqual([4, 3]);
    const a = [
      [2, 1, 3],
      [0.5, 4, -1],
      [0, 0, 1],
    ];
    expect(
      nearlyEqual(multiply(a, invert(a)), [
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
      ]),
    ).toBe(true);
  });

  it("rejects unknown types and wrong lengths with a message", () => {
    expect(() => parseTransformation({ type: "rotate" })).toThrow(/unsupported transformation type "rotate"/);
    const t = parseTransformation({ type: "scale", scale: [1, 2], input: cs("cyx", ["c", "y", "x"]) });
    expect(() => transformationMatrix(t, ["x", "y"], ["x", "y"])).toThrow(/scale has 2 values for 3 axes/);
  });
});

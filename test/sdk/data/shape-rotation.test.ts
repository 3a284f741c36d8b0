/**
 * The rotation of ellipse and text shape annotations: checked on the way in (degrees in
 * [-360, 360], only for those kinds), kept through the `annotations` element, and turning the
 * ellipse's stored outline about its centre; a shape without one reads back without the field.
 */
import { describe, expect, it } from "vitest";
import {
  ANNOTATIONS_ELEMENT,
  outlineRing,
  parseShapeAnnotation,
  readShapeAnnotations,
  shapeAnnotationsElement,
} from "../../../src/sdk/data/shape-annotations.js";
import { withElement } from "../../../src/sdk/data/spatialdata.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";

const ellipse = {
  kind: "ellipse",
  points: [
    [0, 0],
    [40, 20],
  ],
  rotation: 90,
};

describe("shape annotation rotation", () => {
  it("accepts degrees for ellipse and text, refuses other kinds and bad values", () => {
    expect(parseShapeAnnotation(ellipse, "e").rotation).toBe(90);
    expect(
      parseShapeAnnotation({ kind: "text", points: [[1, 1]], text: "t", rotation: -30 }, "t").rotation,
    ).toBe(-30);
    // No rotation, or 0: the field is absent.
    expect("rotation" in parseShapeAnnotation({ ...ellipse, rotation: 0 }, "z")).toBe(false);
    expect(() => parseShapeAnnotation({ kind: "box", points: ellipse.points, rotation: 10 }, "b")).toThrow(
      /rotation applies to ellipse and text, not to a box/,
    );
    expect(() => parseShapeAnnotation({ ...ellipse, rotation: 400 }, "e")).toThrow(/\[-360, 360\]/);
    expect(() => parseShapeAnnotation({ ...ellipse, rotation: "9" }, "e")).toThrow(/rotation must be/);
  });

  it("turns the stored ellipse outline about its centre, and reads the rotation back", () => {
    const s = parseShapeAnnotation(ellipse, "e");
    const ring = outlineRing(s);
    // Radii 20 (x) and 10 (y) about (20, 10); turned 90°: the long axis is vertical.
    const xs = ring.map((p) => p[0]);
    const ys = ring.map((p) => p[1]);
    expect(Math.max(...xs) - Math.min(...xs)).toBeCloseTo(20, 6);
    expect(Math.max(...ys) - Math.min(...ys)).toBeCloseTo(40, 6);
    expect((Math.max(...xs) + Math.min(...xs)) / 2).toBeCloseTo(20, 6);
    const sd = generateDemo({ nCells: 40, nGenes: 30, imageSize: 64, nTranscripts: 10 });
    const plain = parseShapeAnnotation({ kind: "box", points: ellipse.points }, "b");
    const el = shapeAnnotationsElement(sd, "table", [s, plain])!;
    const back = readShapeAnnotations(withElement(sd, "shapes", ANNOTATIONS_ELEMENT, el));
    expect(back).toEqual([s, plain]);
    expect("rotation" in back[1]!).toBe(false);
  });
});

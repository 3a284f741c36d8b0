import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ANNOTATIONS_ELEMENT,
  editShapeAnnotations,
  outlineRing,
  parseShapeAnnotation,
  readShapeAnnotations,
  type ShapeAnnotation,
  shapeAnnotationsElement,
} from "../../../src/sdk/data/shape-annotations.js";
import { transformTo, withElement } from "../../../src/sdk/data/spatialdata.js";
import { defaultAxes } from "../../../src/sdk/data/transforms.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";
import { openCheckpoint } from "../../../src/sdk/io/checkpoint/read.js";
import { writeCheckpoint } from "../../../src/sdk/io/checkpoint/write.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tessera-shapes-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const bodies: Record<string, unknown> = {
  arrow: {
    kind: "arrow",
    points: [
      [1, 2],
      [30, 40],
    ],
    color: "#ff0000",
    stroke_width: 3,
  },
  line: {
    kind: "line",
    points: [
      [0, 0],
      [10, 0],
      [10, 10],
    ],
  },
  box: {
    kind: "box",
    points: [
      [5, 5],
      [25, 15],
    ],
    fill: "#00ff00",
    text: "tumour edge",
  },
  polygon: {
    kind: "polygon",
    points: [
      [0, 0],
      [20, 0],
      [10, 20],
    ],
  },
  ellipse: {
    kind: "ellipse",
    points: [
      [40, 40],
      [60, 50],
    ],
  },
  text: { kind: "text", points: [[70, 70]], text: "look here", font_size: 20 },
};

describe("parseShapeAnnotation", () => {
  it("fills defaults and keeps what was given", () => {
    const s = parseShapeAnnotation(bodies.arrow, "a1");
    expect(s).toEqual({
      id: "a1",
      kind: "arrow",
      points: [
        [1, 2],
        [30, 40],
      ],
      text: null,
      color: "#ff0000",
      fill: null,
      stroke_width: 3,
      font_size: 16,
      dash: "solid",
      arrow_start: false,
      arrow_end: true,
      arrow_size: 12,
      stroke_z: 1,
      fill_alpha: 0.25,
      fill_z: 0,
    });
    // client.md 10.3's defaults: stroke #3388ff, width 2, fill alpha 0.25; a line has no arrow head.
    expect(parseShapeAnnotation(bodies.line, "l1")).toMatchObject({
      color: "#3388ff",
      stroke_width: 2,
      fill_alpha: 0.25,
      arrow_end: false,
    });
  });

  it("keeps every style field of client.md 10.3", () => {
    const s = parseShapeAnnotation(
      {
        kind: "line",
        points: [
          [0, 0],
          [5, 5],
        ],
        dash: "dotted",
        arrow_start: true,
        arrow_end: true,
        arrow_size: 20,
        stroke_z: -3,
      },
      "l",
    );
    expect(s).toMatchObject({
      dash: "dotted",
      arrow_start: true,
      arrow_end: true,
      arrow_size: 20,
      stroke_z: -3,
    });
    const b = parseShapeAnnotation(
      { ...(bodies.box as object), fill_alpha: 0.6, fill_z: -1, dash: "dashed" },
      "b",
    );
    expect(b).toMatchObject({ fill: "#00ff00", fill_alpha: 0.6, fill_z: -1, dash: "dashed" });
  });

  it("names the style field that is wrong", () => {
    const line = {
      kind: "line",
      points: [
        [0, 0],
        [1, 1],
      ],
    };
    const box = { kind: "box", points: line.points };
    const bad: [unknown, RegExp][] = [
      [{ ...line, dash: "wavy" }, /^dash must be one of solid, dashed, dotted, got "wavy"$/],
      [{ ...line, arrow_start: "yes" }, /^arrow_start must be true or false$/],
      [{ ...box, arrow_end: true }, /^arrow_end applies to line and arrow, not to a box$/],
      [{ ...line, arrow_size: 0 }, /^arrow_size must be a number of pixels in \(0, 1000\]$/],
      [{ ...line, stroke_z: 1.5 }, /^stroke_z must be an integer in \[-1000, 1000\]$/],
      [{ ...box, fill_z: 5000 }, /^fill_z must be an integer/],
      [{ ...box, fill_alpha: 1.2 }, /^fill_alpha must be a number in \[0, 1\]$/],
      [{ ...box, fill_alpha: "0.5" }, /^fill_alpha/],
    ];
    for (const [b, re] of bad) expect(() => parseShapeAnnotation(b, "x"), JSON.stringify(b)).toThrow(re);
  });

  it("rejects bad kinds, vertex counts, colours, unknown fields and a mismatched id", () => {
    const bad: [unknown, RegExp][] = [
      [{ kind: "star", points: [[0, 0]] }, /kind must be one of/],
      [{ kind: "box", points: [[0, 0]] }, /a box needs 2 points/],
      [
        {
          kind: "polygon",
          points: [
            [0, 0],
            [1, 1],
          ],
        },
        /3 to/,
      ],
      [
        {
          kind: "line",
          points: [
            [0, 0],
            [1, "x"],
          ],
        },
        /points\[1\]/,
      ],
      [{ kind: "text", points: [[0, 0]] }, /non-empty text/],
      [
        {
          kind: "line",
          points: [
            [0, 0],
            [1, 1],
          ],
          color: "red",
        },
        /color must be #rrggbb/,
      ],
      [
        {
          kind: "box",
          points: [
            [0, 0],
            [1, 1],
          ],
          fill: "#12345",
        },
        /fill/,
      ],
      [
        {
          kind: "line",
          points: [
            [0, 0],
            [1, 1],
          ],
          stroke_width: -1,
        },
        /stroke_width/,
      ],
      [
        {
          kind: "line",
          points: [
            [0, 0],
            [1, 1],
          ],
          wobble: 1,
        },
        /unknown field "wobble"/,
      ],
      [
        {
          id: "other",
          kind: "line",
          points: [
            [0, 0],
            [1, 1],
          ],
        },
        /does not match/,
      ],
      [[1, 2], /JSON object/],
    ];
    for (const [b, re] of bad) expect(() => parseShapeAnnotation(b, "x"), JSON.stringify(b)).toThrow(re);
  });
});

describe("outlineRing", () => {
  it("closes every outline with at least four vertices", () => {
    for (const [k, b] of Object.entries(bodies)) {
      const ring = outlineRing(parseShapeAnnotation(b, k));
      expect(ring.length, k).toBeGreaterThanOrEqual(4);
      expect(ring[0], k).toEqual(ring[ring.length - 1]);
    }
  });
});

describe("the annotations element", () => {
  it("round-trips every kind through a checkpoint save and load", async () => {
    const sd = generateDemo({ nCells: 60, nGenes: 30, imageSize: 96, nTranscripts: 50 });
    const styled: Record<string, unknown> = {
      styledArrow: {
        ...(bodies.arrow as object),
        dash: "dashed",
        arrow_start: true,
        arrow_size: 18,
        stroke_z: -2,
      },
      styledBox: { ...(bodies.box as object), dash: "dotted", fill_alpha: 0.6, fill_z: -1, stroke_z: 4 },
    };
    const shapes: ShapeAnnotation[] = Object.entries({ ...bodies, ...styled }).map(([k, b]) =>
      parseShapeAnnotation(b, `id-${k}`),
    );
    const el = shapeAnnotationsElement(sd, "table", shapes)!;
    expect(el.geometry.type).toBe("polygon");
    expect(Object.keys(el.transformations)).toEqual(["global"]);
    const withShapes = withElement(sd, "shapes", ANNOTATIONS_ELEMENT, el);
    expect(readShapeAnnotations(withShapes)).toEqual(shapes);
    const path = join(dir, "shapes.sdata.zarr.zip");
    await writeCheckpoint(withShapes, path, { name: "shapes" });
    const cp = await openCheckpoint(path);
    expect(readShapeAnnotations(cp.sdata)).toEqual(shapes);
    // An empty list removes the element.
    expect(shapeAnnotationsElement(sd, "table", [])).toBeNull();
  });

  it("reads an element written before the style columns existed with their defaults", () => {
    const sd = generateDemo({ nCells: 60, nGenes: 30, imageSize: 96, nTranscripts: 50 });
    const shapes = [parseShapeAnnotation(bodies.arrow, "a"), parseShapeAnnotation(bodies.box, "b")];
    const el = shapeAnnotationsElement(sd, "table", shapes)!;
    const old = { ...el.frame.columns };
    for (const k of ["dash", "arrow_start", "arrow_end", "arrow_size", "stroke_z", "fill_alpha", "fill_z"])
      delete old[k];
    const read = readShapeAnnotations(
      withElement(sd, "shapes", ANNOTATIONS_ELEMENT, { ...el, frame: { ...el.frame, columns: old } }),
    );
    expect(read).toEqual(shapes);
    expect(read[0]).toMatchObject({ arrow_end: true, dash: "solid", fill_alpha: 0.25 });
  });

  it("is placed like the table's region element", () => {
    const sd = generateDemo({ nCells: 60, nGenes: 30, imageSize: 96, nTranscripts: 50 });
    const xy = defaultAxes(["x", "y"]);
    const cells = sd.shapes.cell_boundaries!;
    const moved = withElement(sd, "shapes", "cell_boundaries", {
      ...cells,
      transformations: {
        global: {
          type: "scale",
          scale: [2, 3],
          input: { name: "cells", axes: xy },
          output: { name: "global", axes: xy },
        },
      },
    });
    const el = shapeAnnotationsElement(moved, "table", [parseShapeAnnotation(bodies.box, "b")])!;
    const m = transformTo(withElement(moved, "shapes", ANNOTATIONS_ELEMENT, el), el, "global", ["x", "y"]);
    expect(m).toEqual([
      [2, 0, 0],
      [0, 3, 0],
      [0, 0, 1],
    ]);
  });

  it("edits: add, replace, delete, with 404 for unknown ids", () => {
    const a = parseShapeAnnotation(bodies.line, "a");
    const b = parseShapeAnnotation(bodies.box, "b");
    let list = editShapeAnnotations([], { op: "add", shape: a });
    list = editShapeAnnotations(list, { op: "add", shape: b });
    const b2 = { ...b, color: "#123456" };
    list = editShapeAnnotations(list, { op: "put", shape: b2 });
    expect(list).toEqual([a, b2]);
    expect(editShapeAnnotations(list, { op: "delete", id: "a" })).toEqual([b2]);
    expect(() => editShapeAnnotations(list, { op: "delete", id: "zz" })).toThrow(/no shape annotation "zz"/);
    expect(() => editShapeAnnotations(list, { op: "put", shape: { ...a, id: "zz" } })).toThrow(/no shape/);
  });
});

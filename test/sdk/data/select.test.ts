/**
 * Data selection for exports (`src/sdk/data/select.ts`) and the session-level checks and display
 * adjustments (`src/sdk/session/export-selection.ts`), on an in-memory demo object.
 */
import { describe, expect, it } from "vitest";
import { nearlyEqual } from "../../../src/sdk/data/affine.js";
import type { ImageElement } from "../../../src/sdk/data/elements.js";
import {
  levelToSystem,
  selectData,
  selectElements,
  selectSlots,
  tableSlotPaths,
  trimPyramid,
} from "../../../src/sdk/data/select.js";
import { transformTo } from "../../../src/sdk/data/spatialdata.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";
import { BadRequestError } from "../../../src/sdk/errors.js";
import type { AppState } from "../../../src/sdk/io/checkpoint/app-state.js";
import { applySelection, checkSelection, isExport } from "../../../src/sdk/session/export-selection.js";

const sd = generateDemo({ nCells: 60, nGenes: 30, imageSize: 1024, nTranscripts: 50 });
const image = sd.images.morphology!;

describe("trimPyramid", () => {
  it("keeps the coarser levels, rebased, with the same pixel → world mapping", () => {
    expect(image.levels.length).toBe(3);
    for (const k of [1, 2]) {
      const trimmed = trimPyramid(image, k);
      expect(trimmed.levels.map((l) => l.shape)).toEqual(image.levels.slice(k).map((l) => l.shape));
      expect(trimmed.levels.map((l) => l.path)).toEqual(trimmed.levels.map((_, j) => `s${j}`));
      for (let j = 0; j < trimmed.levels.length; j++)
        expect(nearlyEqual(levelToSystem(trimmed, j, "global"), levelToSystem(image, j + k, "global"))).toBe(
          true,
        );
      // The new level 0 is the intrinsic space: its own transform is the identity scale.
      expect(trimmed.levels[0]!.levelTransform).toEqual([{ type: "scale", scale: [1, 1, 1] }]);
      const m = transformTo({ ...sd, images: { morphology: trimmed } }, trimmed, "global", ["x", "y"]);
      expect(m[0]![0]).toBeCloseTo(0.5 * 2 ** k);
    }
    expect(trimPyramid(image, 0)).toBe(image);
  });

  it("accounts for level translations (half-pixel offsets some writers record)", () => {
    const shifted: ImageElement = {
      ...image,
      levels: image.levels.map((l, i) => ({
        ...l,
        levelTransform: [
          { type: "scale", scale: [1, 2 ** i, 2 ** i] },
          { type: "translation", translation: [0, 2 ** i / 2 - 0.5, 2 ** i / 2 - 0.5] },
        ],
      })),
    };
    const trimmed = trimPyramid(shifted, 1);
    for (let j = 0; j < 2; j++)
      expect(nearlyEqual(levelToSystem(trimmed, j, "global"), levelToSystem(shifted, j + 1, "global"))).toBe(
        true,
      );
  });

  it("refuses a level that does not exist", () => {
    expect(() => trimPyramid(image, 3)).toThrow(/levels 0\.\.2/);
    expect(() => trimPyramid(image, -1)).toThrow(/does not exist/);
  });
});

describe("selectElements, selectSlots", () => {
  it("keeps exactly the listed elements of the facets named", () => {
    const out = selectElements(sd, { images: [], shapes: ["cell_boundaries"] });
    expect(Object.keys(out.images)).toEqual([]);
    expect(Object.keys(out.shapes)).toEqual(["cell_boundaries"]);
    expect(out.labels).toBe(sd.labels);
    expect(() => selectElements(sd, { points: ["nope"] })).toThrow(/no points element named "nope"/);
  });

  it("keeps only the listed slots; X dropped is null, not zeros", () => {
    const t = sd.tables.table!;
    expect(tableSlotPaths(t)).toEqual(["X", "obs", "var", "uns", "obsm/spatial"]);
    const out = selectSlots(t, ["obs", "var", "uns"]);
    expect(out.X).toBeNull();
    expect(out.obsm).toEqual({});
    expect(out.obs).toBe(t.obs);
    expect(() => selectSlots(t, ["obs", "var"])).toThrow(/"uns" cannot be dropped/);
    expect(() => selectSlots(t, ["obs", "var", "uns", "layers/x"])).toThrow(/no slot "layers\/x"/);
  });

  it("selectData applies include, then levels and slots", () => {
    const out = selectData(sd, {
      include: { points: [] },
      levels: { morphology: 2 },
      slots: { table: ["obs", "var", "uns", "obsm/spatial"] },
    });
    expect(out.points).toEqual({});
    expect(out.images.morphology!.levels).toHaveLength(1);
    expect(out.tables.table!.X).toBeNull();
    expect(sd.tables.table!.X).not.toBeNull();
  });
});

describe("checkSelection, applySelection", () => {
  const app: AppState = {
    schema_version: 1,
    compute_history: [],
    plots: [],
    displays: [
      {
        id: "a",
        type: "spatial_canvas",
        encoding: {
          coords: "obsm:spatial",
          color_by: "X:g1",
          image_layer: "morphology",
          shapes_layer: "cell_boundaries",
        },
        viewport: { target: [0, 0], zoom: 0 },
      },
    ],
  };
  const ctx = { data: sd, app, activeTable: "table" };

  it("is an export only with include, levels or slots", () => {
    expect(isExport({})).toBe(false);
    expect(checkSelection({}, ctx)).toBeNull();
    expect(isExport({ include: {} })).toBe(true);
  });

  it("refuses bad selections with a 400 naming the problem", () => {
    const bad: [object, RegExp][] = [
      [{ include: { foo: [] } }, /unknown facet "foo"/],
      [{ include: { tables: [] } }, /omits the active table/],
      [{ levels: { morphology: 3 } }, /levels 0\.\.2/],
      [{ slots: { table: ["obs", "var", "uns"] } }, /omits obsm\/spatial, which display a draws from/],
      [{ slots: { table: ["obs", "var", "uns", "obsm/spatial", "bogus"] } }, /unknown slot path "bogus"/],
    ];
    for (const [req, re] of bad) {
      expect(() => checkSelection(req, ctx)).toThrow(BadRequestError);
      expect(() => checkSelection(req, ctx)).toThrow(re);
    }
  });

  it("nulls the layers of dropped elements and colourings of dropped slots", () => {
    const sel = checkSelection(
      { include: { shapes: [] }, slots: { table: ["obs", "var", "uns", "obsm/spatial"] } },
      ctx,
    )!;
    const out = applySelection(sd, app, sel);
    expect(out.appState.displays[0]!.encoding).toMatchObject({
      color_by: null,
      shapes_layer: null,
      image_layer: "morphology",
      coords: "obsm:spatial",
    });
    expect(out.activeTable).toBe("table");
    expect(app.displays[0]!.encoding).toMatchObject({ color_by: "X:g1" });
  });
});

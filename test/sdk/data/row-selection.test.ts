import { describe, expect, it } from "vitest";
import { resolveRowSelection } from "../../../src/sdk/data/row-selection.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";

const sd = generateDemo({ nCells: 50, nGenes: 30, imageSize: 96, nTranscripts: 10 });
const square = [
  [0, 0],
  [1000, 0],
  [1000, 1000],
  [0, 1000],
];

describe("resolveRowSelection", () => {
  it("chooses rows by polygons or indices, and inverts", async () => {
    const all = await resolveRowSelection(sd, "table", { polygons: [square] });
    expect(all.count).toBe(50);
    expect(all.polygons).toHaveLength(1);
    const some = await resolveRowSelection(sd, "table", { cell_indices: [3, 3, 49] });
    expect(some.count).toBe(2);
    expect(some.mask[3]).toBe(1);
    expect(some.polygons).toBeUndefined();
    const rest = await resolveRowSelection(sd, "table", { cell_indices: [3, 49], invert: true });
    expect(rest.count).toBe(48);
    expect(rest.mask[3]).toBe(0);
  });

  it("says what is wrong with a request", async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /exactly one of polygons and cell_indices/],
      [{ polygons: [square], cell_indices: [1] }, /exactly one/],
      [{ cell_indices: [50] }, /cell_indices\[0\] = 50 is not a row of table "table" \(0\.\.49\)/],
      [{ cell_indices: [0, 1.5] }, /cell_indices\[1\]/],
      [{ cell_indices: "1" }, /array/],
      [{ polygons: [[[0, 0]]] }, /at least 3/],
    ];
    for (const [req, re] of cases)
      await expect(resolveRowSelection(sd, "table", req as never), JSON.stringify(req)).rejects.toThrow(re);
    await expect(resolveRowSelection(sd, null, { cell_indices: [1] })).rejects.toThrow(/no table/);
    const t = sd.tables.table!;
    const bare: SpatialData = { ...sd, tables: { table: makeTable({ ...t, obsm: {} }) } };
    await expect(resolveRowSelection(bare, "table", { polygons: [square] })).rejects.toThrow(
      /no obsm "spatial".*use cell_indices/,
    );
    expect((await resolveRowSelection(bare, "table", { cell_indices: [0] })).count).toBe(1);
  });
});

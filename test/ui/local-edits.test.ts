/** The serverless viewer's browser-local edits: region columns as `custom.annotate_cells` writes them, hidden cells. */
import { describe, expect, it } from "vitest";
import { LocalEdits } from "../../src/ui/local-edits.js";

const mask = (n: number, rows: number[]) => {
  const m = new Uint8Array(n);
  for (const r of rows) m[r] = 1;
  return m;
};

describe("LocalEdits", () => {
  it("labels chosen rows into a new column; others stay unassigned; overlaps go to the last label", () => {
    const e = new LocalEdits();
    e.label("zone", "a", mask(6, [0, 1, 2]), null);
    e.label("zone", "b", mask(6, [2, 3]), null);
    e.label("zone", "a", mask(6, [5]), null);
    const f = e.field("obs:zone")!;
    expect(f).toMatchObject({ path: "obs:zone", kind: "categorical", n: 6, categories: ["a", "b"] });
    expect(Array.from(f.codes!)).toEqual([0, 0, 1, 1, -1, 0]);
    expect(e.counts("zone")).toEqual([
      { value: "a", count: 3 },
      { value: "b", count: 2 },
    ]);
    expect(e.columnNames).toEqual(["zone"]);
    // A copy: changing the answer changes nothing kept.
    f.codes![0] = 7;
    expect(e.field("obs:zone")!.codes![0]).toBe(0);
    expect(e.field("obs:other")).toBeNull();
    expect(e.field("X:zone")).toBeNull();
  });

  it("starts from the checkpoint's column of that name, keeping its labels and categories", () => {
    const e = new LocalEdits();
    const base = {
      path: "obs:ct",
      kind: "categorical" as const,
      n: 4,
      codes: Int32Array.from([1, 0, -1, 1]),
      categories: ["T", "B"],
    };
    e.label("ct", "NK", mask(4, [2]), base);
    e.label("ct", "B", mask(4, [0]), base);
    const f = e.field("obs:ct")!;
    expect(f.categories).toEqual(["T", "B", "NK"]);
    expect(Array.from(f.codes!)).toEqual([1, 0, 2, 1]);
    expect(Array.from(base.codes)).toEqual([1, 0, -1, 1]);
  });

  it("refuses a selection of another length", () => {
    const e = new LocalEdits();
    e.label("z", "a", mask(3, [0]), null);
    expect(() => e.label("z", "a", mask(4, [0]), null)).toThrow(/4 cells/);
  });

  it("hides rows (adding up), counts them, shows all again; the version moves each time", () => {
    const e = new LocalEdits();
    expect(e.hidden).toBeNull();
    e.hide(mask(5, [0, 1]));
    e.hide(mask(5, [1, 4]));
    expect(Array.from(e.hidden!)).toEqual([1, 1, 0, 0, 1]);
    expect(e.hiddenCount).toBe(3);
    const v = e.hiddenVersion;
    e.showAll();
    expect(e.hidden).toBeNull();
    expect(e.hiddenCount).toBe(0);
    expect(e.hiddenVersion).toBeGreaterThan(v);
  });
});

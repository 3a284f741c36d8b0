import { describe, expect, it } from "vitest";
import { memoryBytes, type StringArray, strings } from "../../../src/sdk/data/arrays.js";
import { columnValue, dataFrame, nRows } from "../../../src/sdk/data/dataframe.js";
import {
  encodePacked,
  isMaterialised,
  packStrings,
  rangeOf,
  rangeStrings,
  stringAt,
  stringCount,
  stringLookup,
  takeStrings,
} from "../../../src/sdk/data/lazy-strings.js";

/** Whether `values` was materialised (no longer the lazy getter). */
const materialised = (sa: StringArray) => isMaterialised(sa);

const VALUES = ["cell_a", null, "", "é✓-1", "cell_a", "z"];

describe("range string arrays", () => {
  it("read as pandas' RangeIndex labels without materialising", () => {
    const r = rangeStrings(50_000_000);
    expect(stringCount(r)).toBe(50_000_000);
    expect(stringAt(r, 0)).toBe("0");
    expect(stringAt(r, 49_999_999)).toBe("49999999");
    expect(stringAt(r, 50_000_000)).toBeNull();
    expect(rangeOf(r)).toEqual({ start: 0, step: 1 });
    const find = stringLookup(r);
    expect(find("1234567")).toBe(1234567);
    expect(find("01")).toBe(-1);
    expect(find("-1")).toBe(-1);
    expect(find("50000000")).toBe(-1);
    expect(find("x")).toBe(-1);
    expect(memoryBytes(r)).toBe(0);
    // A frame over it counts rows from the shape.
    const df = dataFrame(r);
    expect(nRows(df)).toBe(50_000_000);
    expect(materialised(r)).toBe(false);
  });

  it("materialise on `values`, and spread/structuredClone carry correct values", () => {
    const r = rangeStrings(4, 10, 5);
    expect(structuredClone(r).values).toEqual(["10", "15", "20", "25"]);
    expect({ ...r }.values).toEqual(["10", "15", "20", "25"]);
    expect(r.values).toBe(r.values);
    expect(stringLookup(r)("20")).toBe(2);
    expect(stringLookup(r)("12")).toBe(-1);
  });

  it("take: evenly spaced rows stay a range, others pack", () => {
    const r = rangeStrings(100);
    const even = takeStrings(r, [10, 20, 30]);
    expect(even.backing).toEqual({ kind: "range", start: 10, step: 10 });
    expect(even.values).toEqual(["10", "20", "30"]);
    const odd = takeStrings(r, [5, 1, 99]);
    expect(odd.backing?.kind).toBe("packed");
    expect(odd.values).toEqual(["5", "1", "99"]);
    expect(takeStrings(r, []).values).toEqual([]);
    expect(() => takeStrings(r, [100])).toThrow(/row 100 is outside/);
  });

  it("a plain array of 0…n−1 is recognised as a range; another is not", () => {
    expect(rangeOf(strings(["0", "1", "2"]))).toEqual({ start: 0, step: 1 });
    expect(rangeOf(strings(["0", "2"]))).toBeNull();
  });
});

describe("packed string arrays", () => {
  it("read values one at a time, nulls and UTF-8 included, without materialising", () => {
    const p = packStrings(VALUES);
    expect(p.backing?.kind).toBe("packed");
    expect(stringCount(p)).toBe(6);
    expect(VALUES.map((_, i) => stringAt(p, i))).toEqual(VALUES);
    expect(columnValue(p, 3)).toBe("é✓-1");
    expect(materialised(p)).toBe(false);
    expect(p.values).toEqual(VALUES);
  });

  it("look names up by a hash over the bytes: first row wins, nulls and absent names are −1", () => {
    const p = packStrings(VALUES);
    const find = stringLookup(p);
    expect(find("cell_a")).toBe(0);
    expect(find("é✓-1")).toBe(3);
    expect(find("")).toBe(2);
    expect(find("z")).toBe(5);
    expect(find("cell_")).toBe(-1);
    expect(find("nope")).toBe(-1);
    expect(materialised(p)).toBe(false);
    // Same answers as a plain array's lookup.
    const plain = stringLookup(strings(VALUES));
    for (const q of ["cell_a", "é✓-1", "", "z", "nope"]) expect(plain(q)).toBe(find(q));
  });

  it("a big packed lookup finds every name at its row", () => {
    const n = 200_000;
    const names = Array.from({ length: n }, (_, i) => `AAAC${i.toString(36)}-1`);
    const p = packStrings(names);
    const find = stringLookup(p);
    for (let i = 0; i < n; i += 997) expect(find(names[i]!)).toBe(i);
    expect(find("AAAC-1")).toBe(-1);
  });

  it("take gathers bytes into a new packed array", () => {
    const p = packStrings(VALUES);
    const t = takeStrings(p, [3, 1, 0]);
    expect(t.backing?.kind).toBe("packed");
    expect([0, 1, 2].map((i) => stringAt(t, i))).toEqual(["é✓-1", null, "cell_a"]);
    expect(t.values).toEqual(["é✓-1", null, "cell_a"]);
    expect(takeStrings(p, [2]).values).toEqual([""]);
  });

  it("refuses values holding the separator; counts its buffer bytes", () => {
    expect(encodePacked(["a\0b", "c"])).toBeNull();
    expect(packStrings(["a\0b", "c"]).backing).toBeUndefined();
    const p = packStrings(["ab", "c"]);
    expect(memoryBytes(p)).toBe(4);
    expect(encodePacked([])?.bytes.length).toBe(0);
    expect(packStrings([]).values).toEqual([]);
    expect(stringCount(packStrings([]))).toBe(0);
  });
});

describe("compacting a reader's strings", () => {
  it("a big plain 0…n−1 becomes a range, other big arrays pack, small ones stay", async () => {
    const { compactStrings } = await import("../../../src/sdk/data/lazy-strings.js");
    const n = 20_000;
    const r = compactStrings(strings(Array.from({ length: n }, (_, i) => String(i))));
    expect(r.backing).toEqual({ kind: "range", start: 0, step: 1 });
    const names = Array.from({ length: n }, (_, i) => `c${i}`);
    const p = compactStrings(strings(names));
    expect(p.backing?.kind).toBe("packed");
    expect(stringAt(p, n - 1)).toBe(`c${n - 1}`);
    const small = strings(["a"]);
    expect(compactStrings(small)).toBe(small);
  });
});

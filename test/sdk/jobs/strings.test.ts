import { describe, expect, it } from "vitest";
import { type StringArray, strings } from "../../../src/sdk/data/arrays.js";
import { isMaterialised, rangeStrings, stringAt, stringCount } from "../../../src/sdk/data/lazy-strings.js";
import {
  isPackedStrings,
  lazyStrings,
  type PackedStrings,
  packForMain,
  packForWorker,
  STRING_PACK_MIN,
  unpackOnMain,
} from "../../../src/sdk/jobs/strings.js";

const N = STRING_PACK_MIN + 5;
const names = (prefix: string) => Array.from({ length: N }, (_, i) => `${prefix}${i}`);

/** Whether reading `values` would decode (it is still the lazy getter). */
const materialised = (sa: StringArray) => isMaterialised(sa);

describe("packed string arrays", () => {
  it("packs a big array once into shared memory; small ones are left alone", () => {
    const sa = strings(names("cell_"));
    const p = packForWorker(sa) as PackedStrings;
    expect(isPackedStrings(p)).toBe(true);
    expect(p.backing.kind).toBe("packed");
    expect(p.backing.kind === "packed" && p.backing.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(p.count).toBe(N);
    expect(p.id).toBeGreaterThan(0);
    expect(packForWorker(sa)).toBe(p);
    const small = strings(["a", "b"]);
    expect(packForWorker(small)).toBe(small);
  });

  it("round-trips nulls, empty strings and non-ASCII text", () => {
    const values = names("é✓").map((v, i) => (i % 5 === 0 ? null : i % 5 === 1 ? "" : v));
    const p = structuredClone(packForWorker(strings(values))) as PackedStrings;
    const back = lazyStrings(p);
    expect(stringAt(back, 7)).toBe(values[7]);
    expect(stringAt(back, 5)).toBeNull();
    expect(stringAt(back, 6)).toBe("");
    expect(back.values).toEqual(values);
  });

  it("does not pack values containing the separator", () => {
    const values = names("x");
    values[3] = "a\0b";
    const sa = strings(values);
    expect(packForWorker(sa)).toBe(sa);
  });

  it("worker side decodes lazily, once; an untouched array goes back as its marker and maps to the original", () => {
    const original = strings(names("c"));
    const wire = structuredClone(packForWorker(original)) as PackedStrings;
    const inWorker = lazyStrings(wire);
    expect(inWorker.kind).toBe("string");
    expect(stringCount(inWorker)).toBe(N);
    const back = packForMain(inWorker) as PackedStrings;
    expect(back).toBe(wire);
    expect(unpackOnMain(structuredClone(back))).toBe(original);
    // Reading decodes once and keeps the array.
    expect(materialised(inWorker)).toBe(false);
    const v1 = inWorker.values;
    expect(v1[N - 1]).toBe(`c${N - 1}`);
    expect(inWorker.values).toBe(v1);
    expect(packForMain(inWorker)).toBe(wire);
  });

  it("a new big array from a worker crosses in a private buffer and stays packed on the main side", () => {
    const fresh = strings(names("new").map((v, i) => (i === 2 ? null : v)));
    const p = packForMain(fresh) as PackedStrings;
    expect(p.id).toBe(0);
    expect(p.backing.kind === "packed" && p.backing.bytes.buffer).not.toBeInstanceOf(SharedArrayBuffer);
    const main = unpackOnMain(structuredClone(p));
    // No string per row until asked for.
    expect(materialised(main)).toBe(false);
    expect(main === fresh).toBe(false);
    expect(stringAt(main, 9)).toBe("new9");
    expect(stringAt(main, 2)).toBeNull();
    expect(materialised(main)).toBe(false);
    expect(main.values).toEqual(fresh.values);
  });

  it("a range crosses as two numbers, both ways, never materialised", () => {
    const r = rangeStrings(50_000_000);
    const p = packForWorker(r) as PackedStrings;
    expect(p.backing).toEqual({ kind: "range", start: 0, step: 1 });
    const inWorker = lazyStrings(structuredClone(p));
    expect(stringAt(inWorker, 49_999_999)).toBe("49999999");
    expect(unpackOnMain(structuredClone(packForMain(inWorker) as PackedStrings))).toBe(r);
    const fresh = rangeStrings(20_000, 5);
    const q = packForMain(fresh) as PackedStrings;
    const main = unpackOnMain(structuredClone(q));
    expect(stringCount(main)).toBe(20_000);
    expect(stringAt(main, 0)).toBe("5");
    expect(materialised(main)).toBe(false);
    expect(materialised(r)).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { strings } from "../../../src/sdk/data/arrays.js";
import {
  decodePacked,
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

describe("packed string arrays", () => {
  it("packs a big array once into shared memory; small ones are left alone", () => {
    const sa = strings(names("cell_"));
    const p = packForWorker(sa) as PackedStrings;
    expect(isPackedStrings(p)).toBe(true);
    expect(p.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(p.count).toBe(N);
    expect(p.id).toBeGreaterThan(0);
    expect(packForWorker(sa)).toBe(p);
    const small = strings(["a", "b"]);
    expect(packForWorker(small)).toBe(small);
  });

  it("round-trips nulls, empty strings and non-ASCII text", () => {
    const values = names("é✓").map((v, i) => (i % 5 === 0 ? null : i % 5 === 1 ? "" : v));
    const p = structuredClone(packForWorker(strings(values))) as PackedStrings;
    expect(decodePacked(p)).toEqual(values);
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
    const back = packForMain(inWorker) as PackedStrings;
    expect(back).toBe(wire);
    expect(unpackOnMain(structuredClone(back))).toBe(original);
    // Reading decodes once and keeps the array.
    const v1 = inWorker.values;
    expect(v1[N - 1]).toBe(`c${N - 1}`);
    expect(inWorker.values).toBe(v1);
    expect(packForMain(inWorker)).toBe(wire);
  });

  it("a new big array from a worker is packed into a private buffer and decoded on the main side", () => {
    const fresh = strings(names("new").map((v, i) => (i === 2 ? null : v)));
    const p = packForMain(fresh) as PackedStrings;
    expect(p.id).toBe(0);
    expect(p.bytes.buffer).not.toBeInstanceOf(SharedArrayBuffer);
    const main = unpackOnMain(structuredClone(p));
    expect(main).not.toBe(fresh);
    expect(main.values).toEqual(fresh.values);
  });
});

/** `parseRange`: the single-range rules the checkpoint (and raster) routes answer with. */
import { describe, expect, it } from "vitest";
import { parseRange } from "../../../src/adapters/http/range.js";

describe("parseRange", () => {
  it("reads a-b, a- and -n, clipping ends past the size", () => {
    expect(parseRange("bytes=0-9", 100)).toEqual({ kind: "range", start: 0, end: 9 });
    expect(parseRange("bytes=90-", 100)).toEqual({ kind: "range", start: 90, end: 99 });
    expect(parseRange("bytes=-10", 100)).toEqual({ kind: "range", start: 90, end: 99 });
    expect(parseRange("bytes=95-200", 100)).toEqual({ kind: "range", start: 95, end: 99 });
    expect(parseRange("bytes=-500", 100)).toEqual({ kind: "range", start: 0, end: 99 });
    expect(parseRange(" BYTES = 1 - 2 ", 100)).toEqual({ kind: "range", start: 1, end: 2 });
  });

  it("is unsatisfiable past the end, for -0, and for any range of an empty resource", () => {
    expect(parseRange("bytes=100-", 100)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=150-160", 100)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=-0", 100)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=0-", 0)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=-5", 0)).toEqual({ kind: "unsatisfiable" });
  });

  it("ignores what it does not serve: no header, other units, garbage, reversed and multiple ranges", () => {
    for (const h of [undefined, "items=0-1", "bytes=", "bytes=-", "bytes=x-1", "bytes=9-2", "bytes=0-1,3-4"])
      expect(parseRange(h, 100), String(h)).toEqual({ kind: "whole" });
  });
});

/**
 * The SIMD log1p kernel against the correctly rounded float32 log1p (`Math.fround(Math.log1p(v))`):
 * within one ulp on values spread over float32's whole positive range and on the edge values, the
 * sign flag, in-place use, and the row division a deferred chain writes out with.
 */
import { describe, expect, it } from "vitest";
import { log1pModuleBytes, log1pSimdRange } from "../../../src/sdk/math/log1p-simd.js";
import { Rng } from "../../../src/sdk/math/rng.js";

const bytes = log1pModuleBytes();

/** Float32 units in the last place between a and b (same sign; NaN equal to NaN). */
function ulps(a: number, b: number): number {
  if (Number.isNaN(a) && Number.isNaN(b)) return 0;
  const bits = new Int32Array(new Float32Array([a, b]).buffer);
  return Math.abs(bits[0]! - bits[1]!);
}

function maxUlps(src: Float32Array, out: Float32Array, want: (v: number) => number): number {
  let worst = 0;
  for (let k = 0; k < src.length; k++) worst = Math.max(worst, ulps(out[k]!, Math.fround(want(src[k]!))));
  return worst;
}

describe("log1pSimdRange", () => {
  const rng = new Rng(11);
  // 2^-40 … 2^88: every binade a float32 log1p meets, tiny to huge, plus 1e6 normalised counts.
  const wide = Float32Array.from({ length: 1 << 18 }, () => Math.fround(2 ** (rng.next() * 128 - 40)));
  const counts = Float32Array.from({ length: 1 << 18 }, () =>
    Math.fround((1 + rng.int(30)) * (0.3 + 3 * rng.next())),
  );

  it("is within one ulp of the correctly rounded log1p over float32's range", () => {
    for (const src of [wide, counts]) {
      const out = new Float32Array(src.length);
      log1pSimdRange(src, out, 0, src.length, bytes, 0);
      expect(maxUlps(src, out, Math.log1p)).toBeLessThanOrEqual(1);
    }
  });

  it("divides by ln(base) in float32 after the log (within two ulps of scanpy's two roundings)", () => {
    const lb = Math.fround(Math.log(2));
    const out = new Float32Array(counts.length);
    log1pSimdRange(counts, out, 0, counts.length, bytes, lb);
    expect(maxUlps(counts, out, (v) => Math.fround(Math.fround(Math.log1p(v)) / lb))).toBeLessThanOrEqual(2);
  });

  it("keeps the edge values: ±0, +∞, NaN, the largest float; flags a sign bit but not −0", () => {
    const edge = [0, -0, Number.POSITIVE_INFINITY, Number.NaN, 3.4028234663852886e38, 1e-30, 1e-8, 1];
    const src = Float32Array.from(edge);
    const out = new Float32Array(src.length);
    const flag = new Int32Array(1);
    log1pSimdRange(src, out, 0, src.length, bytes, 0, flag, 0);
    expect(flag[0]).toBe(0);
    expect(Object.is(out[0], 0)).toBe(true);
    expect(Object.is(out[1], -0)).toBe(true);
    expect(out[2]).toBe(Number.POSITIVE_INFINITY);
    expect(out[3]).toBeNaN();
    for (let k = 4; k < edge.length; k++)
      expect(ulps(out[k]!, Math.fround(Math.log1p(src[k]!)))).toBeLessThanOrEqual(1);
    src[5] = -0.25;
    log1pSimdRange(src, out, 0, src.length, bytes, 0, flag, 0);
    expect(flag[0]).toBe(1);
  });

  it("works in place and on ranges of any length (the tail of a block)", () => {
    for (const n of [1, 3, 5, 16_383, 16_385, 40_001]) {
      const src = counts.slice(0, n);
      const out = new Float32Array(n);
      log1pSimdRange(src, out, 0, n, bytes, 0);
      const inPlace = src.slice();
      log1pSimdRange(inPlace, inPlace, 0, n, bytes, 0);
      expect(inPlace).toEqual(out);
      // A range in the middle leaves the rest alone.
      const part = new Float32Array(n);
      log1pSimdRange(src, part, n >> 1, n, bytes, 0);
      expect(part.subarray(0, n >> 1).every((v) => v === 0)).toBe(true);
      expect(part.subarray(n >> 1)).toEqual(out.subarray(n >> 1));
    }
  });

  it("with row divisors: each value divided in float32 by its row's divisor, then log1p", () => {
    // 1,000 rows of 0…40 values (some empty), divisors like normalize_total's size factors.
    const lengths = Array.from({ length: 1000 }, () => rng.int(41));
    const indptr = new Int32Array(lengths.length + 1);
    lengths.forEach((l, i) => {
      indptr[i + 1] = indptr[i]! + l;
    });
    const src = counts.slice(0, indptr[lengths.length]!);
    const divisors = Float64Array.from(lengths, () => Math.fround(0.2 + 2 * rng.next()));
    const out = new Float32Array(src.length);
    // Two ranges cut at a row boundary, as two threads would take them.
    const cut = 517;
    log1pSimdRange(src, out, 0, indptr[cut]!, bytes, 0, null, 0, { indptr, divisors, r0: 0 });
    log1pSimdRange(src, out, indptr[cut]!, src.length, bytes, 0, null, 0, { indptr, divisors, r0: cut });
    const divided = new Float32Array(src.length);
    for (let i = 0; i < lengths.length; i++)
      for (let k = indptr[i]!; k < indptr[i + 1]!; k++) divided[k] = src[k]! / divisors[i]!;
    const want = new Float32Array(src.length);
    log1pSimdRange(divided, want, 0, src.length, bytes, 0);
    expect(out).toEqual(want);
  });
});

import { describe, expect, it } from "vitest";
import { allocArray } from "../../../src/sdk/data/arrays.js";
import { log1pThreads, scaleRowsThreads } from "../../../src/sdk/math/csr-threads.js";
import { Rng } from "../../../src/sdk/math/rng.js";

/** A CSR-like layout of `n` rows × `per` values, values small counts scaled per row (they repeat). */
function counts(n: number, per: number) {
  const rng = new Rng(5);
  const indptr = allocArray("int64", n + 1) as BigInt64Array;
  for (let i = 0; i <= n; i++) indptr[i] = BigInt(i * per);
  const src = allocArray("float32", n * per) as Float32Array;
  for (let i = 0; i < n; i++) {
    const scale = 0.5 + rng.next();
    for (let k = i * per; k < (i + 1) * per; k++) src[k] = (1 + rng.int(5)) * scale;
  }
  return { indptr, src };
}

describe("element-wise passes on two threads", () => {
  const n = 50_000;
  const per = 90; // 4.5M values: over the size where threads start
  const { indptr, src } = counts(n, per);

  it("log1p equals the one-thread values (natural, base 2 in float32 and float64)", async () => {
    for (const [lb, dtype] of [
      [0, "float32"],
      [Math.fround(Math.log(2)), "float32"],
      [Math.log(2), "float64"],
    ] as const) {
      const out = allocArray(dtype, src.length) as Float32Array | Float64Array;
      expect(await log1pThreads(src, out, lb, 2)).toBe(true);
      for (let k = 0; k < src.length; k += 997) {
        const v = src[k]!;
        const want =
          lb === 0
            ? Math.log1p(v)
            : dtype === "float32"
              ? Math.fround(Math.fround(Math.log1p(v)) / lb)
              : Math.log1p(v) / lb;
        expect(out[k]).toBe(dtype === "float32" ? Math.fround(want) : want);
      }
      expect(out[src.length - 1]).not.toBe(0);
    }
  });

  it("row scaling equals the one-thread values, and small inputs are left to the caller", async () => {
    const factors = Float64Array.from({ length: n }, (_, i) => 1 + (i % 7));
    const out = allocArray("float32", src.length) as Float32Array;
    expect(await scaleRowsThreads(indptr, src, out, factors, n, true, 2)).toBe(true);
    for (let i = 0; i < n; i += 101) {
      for (let k = i * per; k < (i + 1) * per; k += 13)
        expect(out[k]).toBe(Math.fround(src[k]! / factors[i]!));
    }
    const small = allocArray("float32", 10) as Float32Array;
    expect(await scaleRowsThreads(indptr, src.subarray(0, 10), small, factors, 1, true, 2)).toBe(false);
    expect(await log1pThreads(src, out, 0, 1)).toBe(false);
  });
});

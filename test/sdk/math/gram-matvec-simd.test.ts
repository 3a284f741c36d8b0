/** The SIMD Gram product gives the JavaScript product's sums bit for bit, odd and even sizes. */
import { describe, expect, it } from "vitest";
import { gramMatvecSimd, gramOnWasm } from "../../../src/sdk/math/gram-matvec-simd.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { gramMatvec } from "../../../src/sdk/math/svd.js";

describe("gramMatvecSimd", () => {
  it("equals gramMatvec on a plain array bit for bit (m = 2, 3, 8, 101, 1000)", () => {
    const rng = new Rng(8);
    for (const m of [2, 3, 8, 101, 1000]) {
      const g = gramOnWasm(m);
      const plain = new Float64Array(m * m);
      for (let a = 0; a < m; a++)
        for (let b = a; b < m; b++) {
          const v = rng.next() * 3 - 1;
          g[a * m + b] = g[b * m + a] = v;
          plain[a * m + b] = plain[b * m + a] = v;
        }
      const x = Float64Array.from({ length: m }, () => rng.next() - 0.5);
      const want = new Float64Array(m);
      gramMatvec(plain, m, x, want);
      const got = new Float64Array(m);
      expect(gramMatvecSimd(g, x, got)).toBe(true);
      expect(Array.from(got)).toEqual(Array.from(want));
      // gramMatvec itself takes the SIMD path for such a matrix.
      const again = new Float64Array(m);
      gramMatvec(g, m, x, again);
      expect(Array.from(again)).toEqual(Array.from(want));
    }
    expect(gramMatvecSimd(new Float64Array(4), new Float64Array(2), new Float64Array(2))).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { allocArray, type SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { csrColumnMeanVar, csrRowSums, csrScaleRows } from "../../../src/sdk/math/csr.js";
import {
  csrColumnMeanVarAsync,
  csrRowSumsAsync,
  csrScaleRowsAsync,
  log1pValues,
} from "../../../src/sdk/math/csr-threads.js";
import { Rng } from "../../../src/sdk/math/rng.js";

/** A CSR matrix of `n` rows × `per` values, values small counts scaled per row (they repeat). */
function counts(n: number, per: number): SparseMatrix {
  const rng = new Rng(5);
  const indptr = allocArray("int32", n + 1) as Int32Array;
  for (let i = 0; i <= n; i++) indptr[i] = i * per;
  const indices = allocArray("int32", n * per) as Int32Array;
  const src = allocArray("float32", n * per) as Float32Array;
  for (let i = 0; i < n; i++) {
    const scale = 0.5 + rng.next();
    for (let k = i * per; k < (i + 1) * per; k++) {
      src[k] = (1 + rng.int(5)) * scale;
      indices[k] = k - i * per;
    }
  }
  return { kind: "csr", dtype: "float32", shape: [n, per], data: src, indices, indptr };
}

/** Distance in float32 units in the last place between two float32 values of the same sign. */
function ulps(a: number, b: number): number {
  const bits = new Int32Array(new Float32Array([a, b]).buffer);
  return Math.abs(bits[0]! - bits[1]!);
}

/** Positions where two arrays differ (a deep `toEqual` on millions of values is too slow). */
function differences(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = a.length === b.length ? 0 : 1;
  for (let k = 0; k < Math.min(a.length, b.length); k++) if (!Object.is(a[k], b[k])) d++;
  return d;
}

describe("element-wise passes on two threads", () => {
  const n = 50_000;
  const per = 90; // 4.5M values: over the size where threads start
  const m = counts(n, per);
  const src = m.data as Float32Array;

  it("log1p equals the one-thread values (natural, base 2 in float32 and float64)", async () => {
    for (const [lb, dtype] of [
      [0, "float32"],
      [Math.fround(Math.log(2)), "float32"],
      [Math.log(2), "float64"],
    ] as const) {
      const out = await log1pValues(src, dtype, lb, 2);
      expect(differences(out, await log1pValues(src, dtype, lb, 1))).toBe(0);
      for (let k = 0; k < src.length; k += 997) {
        const v = src[k]!;
        const want =
          lb === 0
            ? Math.log1p(v)
            : dtype === "float32"
              ? Math.fround(Math.fround(Math.log1p(v)) / lb)
              : Math.log1p(v) / lb;
        // float32: the SIMD kernel, within one ulp of the correctly rounded log1p (two once divided by
        // ln(base): the division rounds again); float64: Math.log1p.
        if (dtype === "float32") expect(ulps(out[k]!, Math.fround(want))).toBeLessThanOrEqual(lb ? 2 : 1);
        else expect(out[k]).toBe(want);
      }
      expect(out[src.length - 1]).not.toBe(0);
    }
  });

  it("row scaling equals the one-thread values, and small inputs come out the same", async () => {
    const factors = Float64Array.from({ length: n }, (_, i) => 1 + (i % 7));
    const out = await csrScaleRowsAsync(m, factors, { divide: true }, 2);
    const data = out.data as Float32Array;
    for (let i = 0; i < n; i += 101) {
      for (let k = i * per; k < (i + 1) * per; k += 13)
        expect(data[k]).toBe(Math.fround(src[k]! / factors[i]!));
    }
    expect(differences(data, csrScaleRows(m, factors, { divide: true }).data as Float32Array)).toBe(0);
    expect(out.indices).toBe(m.indices);
    const small: SparseMatrix = {
      ...m,
      shape: [1, per],
      indptr: m.indptr.subarray(0, 2),
      data: src.subarray(0, per),
    };
    const one = await csrScaleRowsAsync(small, factors.subarray(0, 1), { divide: true }, 2);
    expect(one.data).toEqual(csrScaleRows(small, factors.subarray(0, 1), { divide: true }).data);
    await expect(csrScaleRowsAsync(m, factors.subarray(0, 2), {}, 2)).rejects.toThrow(/2 factors/);
  });

  it("column means and variances in fixed row blocks: the same on one and two threads, as the one-pass sums", async () => {
    const rowMask = new Uint8Array(n).map((_, i) => (i % 5 === 3 ? 0 : 1));
    const cases = [
      { transform: { kind: "none" as const }, tf: undefined, rowMask: undefined },
      {
        transform: { kind: "expm1" as const, logBase: null },
        tf: (v: number) => Math.fround(Math.expm1(v)),
        rowMask,
      },
      {
        transform: { kind: "expm1" as const, logBase: 2 },
        tf: (v: number) => Math.fround(Math.expm1(Math.fround(v * Math.log(2)))),
        rowMask: undefined,
      },
    ];
    for (const c of cases) {
      const opts = {
        ddof: 1,
        float32Squares: true,
        transform: c.transform,
        ...(c.rowMask ? { rowMask: c.rowMask } : {}),
      };
      const two = await csrColumnMeanVarAsync(m, opts, 2);
      const one = await csrColumnMeanVarAsync(m, opts, 1);
      expect(differences(two.mean, one.mean)).toBe(0);
      expect(differences(two.var, one.var)).toBe(0);
      const want = csrColumnMeanVar(m, {
        ddof: 1,
        float32Squares: true,
        ...(c.tf ? { transform: c.tf } : {}),
        ...(c.rowMask ? { rowMask: c.rowMask } : {}),
      });
      for (let j = 0; j < per; j++) {
        expect(Math.abs(two.mean[j]! - want.mean[j]!)).toBeLessThanOrEqual(1e-12 * Math.abs(want.mean[j]!));
        expect(Math.abs(two.var[j]! - want.var[j]!)).toBeLessThanOrEqual(1e-10 * Math.abs(want.var[j]!));
      }
    }
  });

  it("row sums on two threads equal the one-thread sums", async () => {
    const seen = { negative: true };
    const two = await csrRowSumsAsync(m, 2, undefined, seen);
    expect(differences(two, csrRowSums(m))).toBe(0);
    expect(two.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(seen.negative).toBe(false);
    // A negative value is flagged by the same pass, on two threads and on one.
    const data = new Float32Array(new SharedArrayBuffer(src.byteLength));
    data.set(src);
    data[data.length - 2] = -1;
    const neg: SparseMatrix = { ...m, data };
    for (const threads of [2, 1]) {
      const s2 = { negative: false };
      await csrRowSumsAsync(neg, threads, undefined, s2);
      expect(s2.negative).toBe(true);
    }
  });

  it("log1p flags a negative value (one or two threads) and not −0", async () => {
    const v = Float32Array.from(src);
    const shared = new Float32Array(new SharedArrayBuffer(v.byteLength));
    shared.set(v);
    for (const threads of [1, 2]) {
      const clean = { negative: true };
      shared[10] = -0;
      await log1pValues(shared, "float32", 0, threads, undefined, clean);
      expect(clean.negative).toBe(false);
      const dirty = { negative: false };
      shared[shared.length - 3] = -0.5;
      await log1pValues(shared, "float32", 0, threads, undefined, dirty);
      expect(dirty.negative).toBe(true);
      shared[shared.length - 3] = 1;
    }
  });
});

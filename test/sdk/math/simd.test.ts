import { describe, expect, it } from "vitest";
import { Rng } from "../../../src/sdk/math/rng.js";
import { paddedWidth, simdKernels, simdMemory } from "../../../src/sdk/math/simd.js";

describe("WebAssembly SIMD kernels", () => {
  for (const shared of [false, true]) {
    it(`match plain sums on ${shared ? "shared" : "plain"} memory, any width`, () => {
      const rng = new Rng(3);
      for (const d of [1, 3, 4, 5, 50, 64]) {
        const dp = paddedWidth(d);
        expect(dp % 4).toBe(0);
        const memory = simdMemory(2 * dp * 4, shared);
        const x = new Float32Array(memory.buffer, 0, 2 * dp);
        for (let t = 0; t < d; t++) {
          x[t] = rng.normal();
          x[dp + t] = rng.normal();
        }
        const k = simdKernels(memory);
        let sq = 0;
        let l1 = 0;
        let dot = 0;
        for (let t = 0; t < d; t++) {
          sq += (x[t]! - x[dp + t]!) ** 2;
          l1 += Math.abs(x[t]! - x[dp + t]!);
          dot += x[t]! * x[dp + t]!;
        }
        const nvec = dp / 4;
        expect(k.sqdist(0, dp * 4, nvec)).toBeCloseTo(sq, 4);
        expect(k.l1dist(0, dp * 4, nvec)).toBeCloseTo(l1, 4);
        expect(k.dot(0, dp * 4, nvec)).toBeCloseTo(dot, 4);
        expect(k.sqdist(0, 0, nvec)).toBe(0);
      }
    });
  }

  it("the list forms match one call per row, and take an empty list", () => {
    const d = 6;
    const dp = paddedWidth(d);
    const memory = simdMemory(65536, true);
    const x = new Float32Array(memory.buffer, 0, 10 * dp);
    const rng = new Rng(9);
    for (let i = 0; i < 10; i++) for (let t = 0; t < d; t++) x[i * dp + t] = rng.normal();
    const listAt = 4096;
    const outAt = 8192;
    new Int32Array(memory.buffer, listAt, 4).set([3, 7, 0, 9]);
    const out = new Float32Array(memory.buffer, outAt, 4);
    const k = simdKernels(memory);
    const rowBytes = dp * 4;
    k.sqdistList(2 * rowBytes, listAt, 4, outAt, dp / 4, rowBytes);
    expect(Array.from(out)).toEqual([3, 7, 0, 9].map((b) => k.sqdist(2 * rowBytes, b * rowBytes, dp / 4)));
    k.l1distList(2 * rowBytes, listAt, 4, outAt, dp / 4, rowBytes);
    expect(Array.from(out)).toEqual([3, 7, 0, 9].map((b) => k.l1dist(2 * rowBytes, b * rowBytes, dp / 4)));
    out.fill(-1);
    k.sqdistList(2 * rowBytes, listAt, 0, outAt, dp / 4, rowBytes);
    expect(Array.from(out)).toEqual([-1, -1, -1, -1]);
  });

  it("refuses a memory over 4 GiB", () => {
    expect(() => simdMemory(2 ** 33, false)).toThrow(/4 GiB/);
  });
});

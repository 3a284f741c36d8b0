import { describe, expect, it } from "vitest";
import { heapsToGraph } from "../../../src/sdk/math/knn-graph.js";
import { mortonOrder } from "../../../src/sdk/math/locality-order.js";
import { Rng } from "../../../src/sdk/math/rng.js";

describe("Z-order of rows", () => {
  it("is a permutation that keeps near rows near, ties in row order", () => {
    const rng = new Rng(1);
    const n = 5000;
    const d = 7;
    const x = Float64Array.from({ length: n * d }, () => rng.normal());
    const order = mortonOrder(x, n, d);
    expect(new Set(order).size).toBe(n);
    // Consecutive rows along the curve are much closer (in the first 5 columns) than random pairs.
    const dist = (a: number, b: number) => {
      let s = 0;
      for (let t = 0; t < 5; t++) s += (x[a * d + t]! - x[b * d + t]!) ** 2;
      return Math.sqrt(s);
    };
    let along = 0;
    let random = 0;
    for (let i = 1; i < n; i++) {
      along += dist(order[i - 1]!, order[i]!);
      random += dist(i - 1, i);
    }
    expect(along).toBeLessThan(random / 2);
    // Identical rows keep their order; a constant column does not break it.
    const same = new Float64Array(4 * 2).fill(3);
    expect(Array.from(mortonOrder(same, 4, 2))).toEqual([0, 1, 2, 3]);
    expect(() => mortonOrder(x, n, d, 7, 8)).toThrow(/do not fit/);
  });

  it("heapsToGraph maps a reordered search back to the original rows", () => {
    // Searched rows r hold original rows order[r]; heap row r lists searched indices.
    const order = Int32Array.from([2, 0, 1]);
    const hi = Int32Array.from([1, 2, 0, 2, 1, 0]); // h = 2
    const hd = Float32Array.from([4, 1, 9, 1, 4, 9]);
    const g = heapsToGraph(hi, hd, 3, 2, Math.sqrt, order);
    // Searched row 0 = original 2: neighbours searched 2 (orig 1, d 1) then 1 (orig 0, d 2).
    expect(Array.from(g.indices.subarray(6, 9))).toEqual([2, 1, 0]);
    expect(Array.from(g.distances.subarray(6, 9))).toEqual([0, 1, 2]);
    // Searched row 1 = original 0: searched 2 (orig 1, d 1), searched 0 (orig 2, d 3).
    expect(Array.from(g.indices.subarray(0, 3))).toEqual([0, 1, 2]);
    expect(Array.from(g.distances.subarray(0, 3))).toEqual([0, 1, 3]);
  });
});

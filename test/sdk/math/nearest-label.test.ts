/** Nearest point of each label, against a brute-force search written here. */
import { describe, expect, it } from "vitest";
import { nearestByLabel } from "../../../src/sdk/math/nearest-label.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { buildKdTree, kdKnnSelf } from "../../../src/sdk/math/spatial/kdtree.js";

function brute(xy: Float64Array, n: number, labels: Int32Array, L: number): Float64Array {
  const out = new Float64Array(n * L).fill(Number.POSITIVE_INFINITY);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      if (i === j || labels[j]! < 0) continue;
      const dx = xy[2 * i]! - xy[2 * j]!;
      const dy = xy[2 * i + 1]! - xy[2 * j + 1]!;
      const d = Math.sqrt(dx * dx + dy * dy);
      const e = i * L + labels[j]!;
      if (d < out[e]!) out[e] = d;
    }
  return out;
}

describe("nearest point of each label", () => {
  it("nearestByLabel equals brute force, with rare labels beyond the neighbour lists and unlabelled cells", () => {
    const rng = new Rng(2);
    const n = 900;
    const L = 5;
    const xy = Float64Array.from({ length: 2 * n }, () => rng.uniform(0, 50));
    // Label 4 is rare (3 cells), label 3 has one cell; some cells are unlabelled.
    const labels = Int32Array.from({ length: n }, (_, i) =>
      i < 3 ? 4 : i === 3 ? 3 : i % 17 === 0 ? -1 : i % 3,
    );
    const k = 8;
    const { indices, distances } = kdKnnSelf(buildKdTree(xy, n, 2), k);
    const got = nearestByLabel(xy, n, 2, labels, L, { k, indices, distances });
    const want = brute(xy, n, labels, L);
    expect(Array.from(got)).toEqual(Array.from(want));
    expect(got[3 * L + 3]).toBe(Number.POSITIVE_INFINITY); // the only cell of label 3 has no other
  });
});

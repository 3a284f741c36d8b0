import { describe, expect, it } from "vitest";
import { Rng } from "../../../../src/sdk/math/rng.js";
import { spatialGraph } from "../../../../src/sdk/math/spatial/graph.js";
import { sepalGraph, sepalScore } from "../../../../src/sdk/math/spatial/sepal.js";

/** A 24 × 24 hexagonal lattice like Visium spots, and its grid graph (6 neighbours inside). */
function lattice() {
  const pts: number[] = [];
  for (let r = 0; r < 24; r++)
    for (let c = 0; c < 24; c++) pts.push(c * 100 + (r % 2) * 50, (r * 100 * Math.sqrt(3)) / 2);
  const coords = Float64Array.from(pts);
  const g = spatialGraph(coords, 576, 2, { mode: "grid", nNeighs: 6 });
  return { coords, g: g.connectivities };
}

describe("sepal", () => {
  it("a spatially structured gene takes longer to diffuse than noise", () => {
    const { coords, g } = lattice();
    const sg = sepalGraph(g.indptr, g.indices, coords, 2, 6);
    expect(sg.sat.length).toBe(22 * 22);
    const rng = new Rng(4);
    const blob = Float64Array.from(
      { length: 576 },
      (_, i) =>
        Math.exp(-((coords[2 * i]! - 600) ** 2 + (coords[2 * i + 1]! - 600) ** 2) / (2 * 300 ** 2)) * 5,
    );
    const noise = Float64Array.from({ length: 576 }, () => rng.uniform(0, 5));
    const sBlob = sepalScore(blob, sg, 30000, 0.001, 1e-8);
    const sNoise = sepalScore(noise, sg, 30000, 0.001, 1e-8);
    expect(sBlob).toBeGreaterThan(sNoise);
    expect(sNoise).toBeGreaterThan(0);
  });

  it("refuses a graph whose busiest node has another number of neighbours", () => {
    const { coords, g } = lattice();
    expect(() => sepalGraph(g.indptr, g.indices, coords, 2, 4)).toThrow(/max_neighs=4, found a node with 6/);
  });
});

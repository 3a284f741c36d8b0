import { describe, expect, it } from "vitest";
import { Rng } from "../../../../src/sdk/math/rng.js";
import { spatialGraph } from "../../../../src/sdk/math/spatial/graph.js";
import { sepalGraph, sepalScore, sepalScores } from "../../../../src/sdk/math/spatial/sepal.js";

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

  it("genes on the job's threads score as one at a time, whatever the thread count", async () => {
    const { coords, g } = lattice();
    const sg = sepalGraph(g.indptr, g.indices, coords, 2, 6);
    const rng = new Rng(9);
    const genes = 5;
    const rows = Array.from({ length: genes }, (_, k) =>
      Float64Array.from({ length: 576 }, (_, i) =>
        k % 2 ? rng.uniform(0, 5) : Math.exp(-((coords[2 * i]! - 300 * k) ** 2) / (2 * 400 ** 2)) * 5,
      ),
    );
    const one = rows.map((r) => sepalScore(Float64Array.from(r), sg, 30000, 0.001, 1e-8));
    for (const threads of [1, 3]) {
      const data = new Float64Array(genes * 576);
      for (const [k, r] of rows.entries()) data.set(r, k * 576);
      const got = await sepalScores(data, genes, 576, sg, { nIter: 30000, dt: 0.001, thresh: 1e-8, threads });
      expect(Array.from(got)).toEqual(one);
    }
  });

  it("refuses a graph whose busiest node has another number of neighbours", () => {
    const { coords, g } = lattice();
    expect(() => sepalGraph(g.indptr, g.indices, coords, 2, 4)).toThrow(/max_neighs=4, found a node with 6/);
  });
});

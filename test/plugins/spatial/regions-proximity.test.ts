/**
 * `custom.identify_regions_leiden`, `custom.cellular_neighborhoods` and `custom.proximity_test` on
 * layouts whose answer is known by construction: separated blobs, a mixed half and a pure half,
 * segregated labels. Observed proximity statistics are recomputed here by brute force.
 */
import { describe, expect, it } from "vitest";
import { proximity_test } from "../../../src/plugins/spatial/proximity.js";
import {
  cellular_neighborhoods,
  identify_regions_leiden,
  windowComposition,
} from "../../../src/plugins/spatial/regions.js";
import type { Categorical } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { testContext } from "../context.js";
import { cat, tableData } from "./build.js";

const col = (df: DataFrame, name: string) =>
  Array.from((df.columns[name] as { data: ArrayLike<number> }).data);

/** Points of a w × h unit grid starting at (x0, y0). */
function grid(x0: number, y0: number, w: number, h: number): [number, number][] {
  const out: [number, number][] = [];
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) out.push([x0 + x, y0 + y]);
  return out;
}

describe("custom.identify_regions_leiden", () => {
  it("never puts two separated blobs in one region; libraries never share a region", async () => {
    const blobs = [grid(0, 0, 12, 12), grid(100, 0, 12, 12), grid(0, 100, 12, 12)];
    const xy = blobs.flat();
    const blobOf = blobs.flatMap((b, k) => b.map(() => k));
    const sd = tableData({ obs: { blob: cat(blobOf.map(String)) }, xy });
    const { ctx, logs } = testContext();
    const change = await identify_regions_leiden(sd, {}, ctx);
    const t = applyChange(sd, change).sdata.tables.table!;
    const regions = t.obs.columns.leiden_spatial as Categorical;
    const blobsOfRegion = new Map<number, Set<number>>();
    regions.codes.forEach((r, i) => {
      if (!blobsOfRegion.has(r)) blobsOfRegion.set(r, new Set());
      blobsOfRegion.get(r)!.add(blobOf[i]!);
    });
    expect(blobsOfRegion.size).toBeGreaterThanOrEqual(3);
    for (const s of blobsOfRegion.values()) expect(s.size).toBe(1);
    expect(unsGet(t.uns, "leiden_spatial/params/n_neighbors")).toBe(15);
    expect(logs.join("\n")).toMatch(/regions from a 15-NN spatial graph/);

    // Two libraries laid over the same coordinates: with library_key no region mixes them.
    const one = grid(0, 0, 15, 15);
    const two = one.map(([x, y]) => [x + 0.01, y + 0.01] as [number, number]);
    const lib = [...one.map(() => "a"), ...two.map(() => "b")];
    const sd2 = tableData({ obs: { library: cat(lib) }, xy: [...one, ...two] });
    const c2 = await identify_regions_leiden(
      sd2,
      { library_key: "library", resolution: 0.5 },
      testContext().ctx,
    );
    const r2 = applyChange(sd2, c2).sdata.tables.table!.obs.columns.leiden_spatial as Categorical;
    const libsOfRegion = new Map<number, Set<string>>();
    r2.codes.forEach((r, i) => {
      if (!libsOfRegion.has(r)) libsOfRegion.set(r, new Set());
      libsOfRegion.get(r)!.add(lib[i]!);
    });
    for (const s of libsOfRegion.values()) expect(s.size).toBe(1);
  });

  it("names a missing coordinate key", async () => {
    const sd = tableData({
      obs: { a: cat(["x", "y"]) },
      xy: [
        [0, 0],
        [1, 1],
      ],
    });
    await expect(identify_regions_leiden(sd, { spatial_key: "nope" }, testContext().ctx)).rejects.toThrow(
      /no obsm "nope"/,
    );
  });
});

describe("custom.cellular_neighborhoods", () => {
  it("window composition by hand on a line", () => {
    // Points at x = 0…5; types a a b b a c. k = 3: the cell and its 2 nearest (ties → lower index).
    const xy = Float64Array.from([0, 1, 2, 3, 4, 5].flatMap((x) => [x, 0]));
    const types = Int32Array.from([0, 0, 1, 1, 0, 2]);
    const comp = windowComposition({ xy, n: 6, dim: 2 }, types, 3, 3, undefined);
    const row = (i: number) => Array.from(comp.subarray(3 * i, 3 * i + 3));
    expect(row(0)).toEqual([2 / 3, 1 / 3, 0].map(Math.fround)); // 0, 1, 2
    expect(row(2)).toEqual([1 / 3, 2 / 3, 0].map(Math.fround)); // 2, 1, 3
    expect(row(4)).toEqual([1 / 3, 1 / 3, 1 / 3].map(Math.fround)); // 4, 3, 5
    expect(row(5)).toEqual([1 / 3, 1 / 3, 1 / 3].map(Math.fround)); // 5, 4, 3
  });

  it("a mixed half and a pure half become two neighbourhoods", async () => {
    const left = grid(0, 0, 20, 20); // a/b checkerboard
    const right = grid(20, 0, 20, 20); // all c
    const xy = [...left, ...right];
    const types = [...left.map(([x, y]) => ((x + y) % 2 ? "a" : "b")), ...right.map(() => "c")];
    const sd = tableData({ obs: { cell_type: cat(types) }, xy });
    const { ctx } = testContext();
    const change = await cellular_neighborhoods(sd, { cell_type_key: "cell_type" }, ctx);
    const t = applyChange(sd, change).sdata.tables.table!;
    const cn = t.obs.columns.cellular_neighborhood as Categorical;
    // Interior cells (away from the seam at x = 19.5) of each half share one label, different between halves.
    const interior = (side: "l" | "r") =>
      new Set(xy.flatMap(([x], i) => ((side === "l" ? x < 15 : x > 24) ? [cn.codes[i]!] : [])));
    const l = interior("l");
    const r = interior("r");
    expect(l.size).toBe(1);
    expect(r.size).toBe(1);
    expect([...l][0]).not.toBe([...r][0]);
    const composition = unsGet(t.uns, "cellular_neighborhood/composition") as DataFrame;
    const rCn = [...r][0]!;
    expect(col(composition, "c")[rCn]).toBeGreaterThan(0.9);
    const obsm = t.obsm.cellular_neighborhood_composition as unknown as {
      shape: number[];
      data: Float32Array;
    };
    expect(obsm.shape).toEqual([800, 3]);
    expect(obsm.data[3 * 799 + 2]).toBe(1); // a corner of the pure half sees only c
    const enrichment = unsGet(t.uns, "cellular_neighborhood/enrichment") as DataFrame;
    expect(col(enrichment, "c")[rCn]).toBeGreaterThan(0.9); // log2(≈1 / 0.5)
  });
});

describe("custom.proximity_test", () => {
  /** Brute-force statistic: median over a-cells of the distance to the nearest other b-cell. */
  function bruteMedian(xy: [number, number][], labels: string[], a: string, b: string): number {
    const ds: number[] = [];
    xy.forEach((p, i) => {
      if (labels[i] !== a) return;
      let best = Number.POSITIVE_INFINITY;
      xy.forEach((q, j) => {
        if (j !== i && labels[j] === b)
          best = Math.min(best, Math.sqrt((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2));
      });
      ds.push(best);
    });
    ds.sort((u, v) => u - v);
    const m = ds.length;
    return m % 2 ? ds[(m - 1) / 2]! : (ds[m / 2 - 1]! + ds[m / 2]!) / 2;
  }

  it("segregated labels: observed equals brute force; near pairs get negative z, far pairs positive", async () => {
    // Uniform random points (distances vary, so the null has a spread): A and B in two far squares,
    // C along a strip above both.
    const rng = new Rng(3);
    const box = (x0: number, y0: number, w: number, h: number, m: number) =>
      Array.from({ length: m }, () => [rng.uniform(x0, x0 + w), rng.uniform(y0, y0 + h)] as [number, number]);
    const a = box(0, 0, 10, 10, 80);
    const b = box(30, 0, 10, 10, 80);
    const c = box(0, 20, 40, 3, 80);
    const xy = [...a, ...b, ...c];
    const labels = [...a.map(() => "A"), ...b.map(() => "B"), ...c.map(() => "C")];
    const sd = tableData({ obs: { type: cat(labels) }, xy });
    const { ctx } = testContext();
    const change = await proximity_test(sd, { cluster_key: "type", n_perm: 60 }, ctx);
    const t = applyChange(sd, change).sdata.tables.table!;
    const get = (f: string) => unsGet(t.uns, `type_proximity/${f}`) as DataFrame;
    const observed = get("observed");
    const names = ["A", "B", "C"];
    names.forEach((from, i) => {
      for (const to of names) expect(col(observed, to)[i]).toBeCloseTo(bruteMedian(xy, labels, from, to), 12);
    });
    const z = get("zscore");
    expect(col(z, "A")[0]).toBeLessThan(-2); // A near A
    expect(col(z, "B")[0]).toBeGreaterThan(2); // A far from B
    const p = get("pvalue");
    expect(col(p, "B")[0]).toBeCloseTo(1 / 61, 12); // no permutation as extreme
    // mean instead of median, same seed: still segregated
    const meanChange = await proximity_test(
      sd,
      { cluster_key: "type", n_perm: 20, stat: "mean" },
      testContext().ctx,
    );
    const zm = unsGet(
      applyChange(sd, meanChange).sdata.tables.table!.uns,
      "type_proximity/zscore",
    ) as DataFrame;
    expect(col(zm, "B")[0]).toBeGreaterThan(2);
  });
});

/**
 * `custom.region_composition` and `custom.region_feature_kruskal` on hand-made tables whose answers
 * were computed with scipy 1.16.3 (`/tmp/scverse/venv/bin/python`): `pandas.crosstab` +
 * `scipy.stats.chi2_contingency`, and `scipy.stats.kruskal` per gene within each cell type with
 * `scipy.stats.false_discovery_control(p, method="bh")` (NaN p-values counted as 1).
 */
import { describe, expect, it } from "vitest";
import { region_composition } from "../../../src/plugins/spatial/composition.js";
import { region_feature_kruskal } from "../../../src/plugins/spatial/region-kruskal.js";
import { dense, type SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { testContext } from "../context.js";
import { cat, tableData } from "./build.js";

const col = (df: DataFrame, name: string) =>
  Array.from((df.columns[name] as { data: ArrayLike<number> }).data);
const strs = (df: DataFrame, name: string) => (df.columns[name] as unknown as { values: string[] }).values;

describe("custom.region_composition", () => {
  const regions = ["R1", "R1", "R1", "R1", "R1", "R1", "R2", "R2", "R2", "R2", "R2", "R3", "R3", "R3", "R3"];
  const types = ["T", "T", "T", "B", "B", "M", "T", "B", "B", "B", "M", "M", "M", "M", "T"];

  it("crosstab and chi-square as pandas + scipy", async () => {
    // crosstab: R1 B2 M1 T3 / R2 B3 M1 T1 / R3 B0 M3 T1; chi2_contingency → 6.1, p 0.1918036437841208, dof 4
    const sd = tableData({
      obs: { region: cat([...regions, null], ["R1", "R2", "R3", "R4"]), cell_type: cat([...types, "T"]) },
    });
    const { ctx, logs } = testContext();
    const change = await region_composition(sd, { region_key: "region", cell_type_key: "cell_type" }, ctx);
    const t = applyChange(sd, change).sdata.tables.table!;
    const out = (p: string) => unsGet(t.uns, `region_cell_type_composition/${p}`);
    const counts = out("counts") as DataFrame;
    expect(counts.index.values).toEqual(["R1", "R2", "R3", "R4"]);
    expect(counts.columnOrder).toEqual(["T", "B", "M"]);
    expect(col(counts, "T")).toEqual([3, 1, 1, 0]);
    expect(col(counts, "B")).toEqual([2, 3, 0, 0]);
    expect(col(counts, "M")).toEqual([1, 1, 3, 0]);
    expect(out("chi2") as number).toBeCloseTo(6.1, 12);
    expect(Math.abs((out("pvalue") as number) / 0.1918036437841208 - 1)).toBeLessThan(1e-10);
    expect(out("dof")).toBe(4); // the empty region R4 is left out of the test
    const fr = out("fractions") as DataFrame;
    expect(col(fr, "T")[0]).toBeCloseTo(0.5, 15);
    expect(col(fr, "T")[3]).toBeNaN();
    const res = out("residuals") as DataFrame;
    // (3 − 6·5/15) / √(6·5/15)
    expect(col(res, "T")[0]).toBeCloseTo((3 - 2) / Math.sqrt(2), 12);
    expect(logs.join("\n")).toMatch(/3 regions × 3 types/);
  });

  it("names the column that is missing or not categorical", async () => {
    const sd = tableData({ obs: { region: cat(regions), score: dense(new Float64Array(15)) } });
    const { ctx } = testContext();
    await expect(
      region_composition(sd, { region_key: "region", cell_type_key: "nope" }, ctx),
    ).rejects.toThrow(/no obs column "nope"/);
    await expect(
      region_composition(sd, { region_key: "region", cell_type_key: "score" }, ctx),
    ).rejects.toThrow(/"score" .* not categorical/);
  });
});

describe("custom.region_feature_kruskal", () => {
  const regions = ["A", "A", "A", "A", "B", "B", "B", "B", "C", "C", "C", "C", "A", "A", "B", "B", "C", "C"];
  const types = [...Array(12).fill("x"), ...Array(6).fill("y")];
  const g1 = [0, 0, 1, 2, 3, 4, 5, 5, 0, 0, 0, 1, 1, 2, 1, 2, 0, 0];
  const g2 = [1, 0, 1, 0, 1, 0, 1, 0, 2, 0, 1, 0, 0, 3, 0, 4, 5, 6];
  const g3 = [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1];
  const denseX = dense(Float32Array.from(g1.flatMap((_, i) => [g1[i]!, g2[i]!, g3[i]!])), [18, 3]);
  function csr(): SparseMatrix {
    const indptr = [0];
    const indices: number[] = [];
    const data: number[] = [];
    for (let i = 0; i < 18; i++) {
      [g1[i]!, g2[i]!, g3[i]!].forEach((v, j) => {
        if (v !== 0) {
          indices.push(j);
          data.push(v);
        }
      });
      indptr.push(indices.length);
    }
    return {
      kind: "csr",
      dtype: "float32",
      shape: [18, 3],
      data: Float32Array.from(data),
      indices: Int32Array.from(indices),
      indptr: Int32Array.from(indptr),
    };
  }

  for (const [name, X] of [
    ["dense X", denseX],
    ["CSR X", csr()],
  ] as const) {
    it(`matches scipy.stats.kruskal per type with BH (${name})`, async () => {
      const sd = tableData({
        obs: { region: cat(regions), cell_type: cat(types) },
        X,
        genes: ["g1", "g2", "g3"],
      });
      const { ctx } = testContext();
      const change = await region_feature_kruskal(
        sd,
        { region_key: "region", cell_type_key: "cell_type", min_cells: 2, n_top: 2 },
        ctx,
      );
      const t = applyChange(sd, change).sdata.tables.table!;
      const res = unsGet(t.uns, "region_feature_kruskal/results") as DataFrame;
      // x: g1 H 8.260416666666666 p 0.016079528571830305 (bh 0.04823859), g2 H 0.14285714285714896
      //    p 0.93106277970402 (bh 1), g3 all tied (scipy raises; here NaN, counted as p = 1)
      // y: g1 H 3.7499999999999987 p 0.15335496684492855, g2 H 3.6029411764705883
      //    p 0.1650559802738224 (bh 0.24758397 both)
      expect(strs(res, "cell_type")).toEqual(["x", "x", "y", "y"]);
      expect(strs(res, "gene")).toEqual(["g1", "g2", "g1", "g2"]);
      const h = col(res, "statistic");
      const p = col(res, "pvalue");
      const q = col(res, "pvalue_adj");
      const want = [
        [8.260416666666666, 0.016079528571830305, 0.04823859],
        [0.14285714285714896, 0.93106277970402, 1],
        [3.7499999999999987, 0.15335496684492855, 0.24758397],
        [3.6029411764705883, 0.1650559802738224, 0.24758397],
      ];
      want.forEach(([wh, wp, wq], i) => {
        expect(h[i]).toBeCloseTo(wh!, 10);
        expect(Math.abs(p[i]! / wp! - 1)).toBeLessThan(1e-9);
        expect(q[i]).toBeCloseTo(wq!, 7);
      });
      const means = unsGet(t.uns, "region_feature_kruskal/means") as DataFrame;
      expect(means.columnOrder).toEqual(["A", "B", "C"]);
      expect(col(means, "B")[0]).toBeCloseTo(4.25, 12); // mean of g1 over type x in region B
      expect(col(means, "C")[3]).toBeCloseTo(5.5, 12); // mean of g2 over type y in region C
    });
  }

  it("skips types without two regions of min_cells cells, and names unknown genes", async () => {
    const sd = tableData({
      obs: { region: cat(regions), cell_type: cat(types) },
      X: denseX,
      genes: ["g1", "g2", "g3"],
    });
    const { ctx, logs } = testContext();
    const change = await region_feature_kruskal(
      sd,
      { region_key: "region", cell_type_key: "cell_type" },
      ctx,
    );
    const res = unsGet(
      applyChange(sd, change).sdata.tables.table!.uns,
      "region_feature_kruskal/results",
    ) as DataFrame;
    expect(new Set(strs(res, "cell_type"))).toEqual(new Set(["x"]));
    expect(logs.join("\n")).toMatch(/skipped 1 cell types/);
    await expect(
      region_feature_kruskal(sd, { region_key: "region", genes: ["g1", "nope"] }, testContext().ctx),
    ).rejects.toThrow(/no gene "nope"/);
  });
});

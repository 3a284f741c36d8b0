import { beforeAll, describe, expect, it } from "vitest";
import { spatial_autocorr } from "../../../src/plugins/squidpy/autocorr.js";
import { spatial_neighbors } from "../../../src/plugins/squidpy/spatial-neighbors.js";
import type { DenseArray, SparseMatrix } from "../../../src/sdk/data/arrays.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { isUnsDict, unsGet } from "../../../src/sdk/data/uns.js";
import { makeCtx } from "../scanpy/ctx.js";
import { applied, refCsv, sdOf, synthTable } from "./synth.js";

// Reference: sq.gr.spatial_neighbors(coord_type="generic", n_neighs=6), then spatial_autocorr over the
// 100 genes of moran.csv with 100 permutations (seed 0), on synth_10k after filter/normalize/log1p.

let sd: SpatialData;

beforeAll(async () => {
  const t = await synthTable();
  sd = sdOf(t);
  sd = applied(sd, await spatial_neighbors(sd, { coord_type: "generic", n_neighs: 6 }, makeCtx()));
}, 120_000);

function frame(s: SpatialData, key: string): DataFrame {
  const df = unsGet(s.tables.table!.uns, key);
  if (!df || (df as DataFrame).kind !== "dataframe") throw new Error(`no data frame at uns ${key}`);
  return df as DataFrame;
}

function col(df: DataFrame, name: string): Float64Array {
  return (df.columns[name] as DenseArray<Float64Array>).data;
}

describe("gr.spatial_neighbors (kNN 6) on synth_10k", () => {
  it("writes squidpy's keys: 6 neighbours per cell, float32 ones, float64 distances, uns params", () => {
    const t = sd.tables.table!;
    const c = t.obsp.spatial_connectivities as SparseMatrix;
    const d = t.obsp.spatial_distances as SparseMatrix;
    const n = c.shape[0];
    expect(c.dtype).toBe("float32");
    expect(d.dtype).toBe("float64");
    expect(Number(c.indptr[n])).toBe(6 * n);
    expect(Number(d.indptr[n])).toBe(6 * n);
    const u = unsGet(t.uns, "spatial_neighbors");
    expect(isUnsDict(u)).toBe(true);
    expect(unsGet(t.uns, "spatial_neighbors/connectivities_key")).toBe("spatial_connectivities");
    expect(unsGet(t.uns, "spatial_neighbors/distances_key")).toBe("spatial_distances");
    expect(unsGet(t.uns, "spatial_neighbors/params/n_neighbors")).toBe(6);
    expect(unsGet(t.uns, "spatial_neighbors/params/coord_type")).toBe("generic");
  });
});

for (const mode of ["moran", "geary"] as const) {
  describe(`gr.spatial_autocorr(mode="${mode}") against squidpy 1.8.3`, () => {
    const file = mode === "moran" ? "moran.csv" : "geary.csv";
    const stat = mode === "moran" ? "I" : "C";
    const ref = refCsv(file);
    const at = (name: string) => ref.header.indexOf(name);
    let df: DataFrame;

    beforeAll(async () => {
      const genes = ref.rows.map((r) => r.name);
      const ctx = { ...makeCtx(), threads: 2 };
      const out = applied(sd, await spatial_autocorr(sd, { mode, genes, n_perms: 100, seed: 0 }, ctx));
      df = frame(out, mode === "moran" ? "moranI" : "gearyC");
    }, 120_000);

    it("has squidpy's columns in squidpy's order, genes sorted like squidpy's", () => {
      expect(df.columnOrder).toEqual(ref.header);
      expect(df.index.values).toEqual(ref.rows.map((r) => r.name));
    });

    it(`${stat}, var_norm and pval_norm equal squidpy's (relative 1e-5)`, () => {
      const byName = new Map(df.index.values.map((g, i) => [g!, i]));
      for (const r of ref.rows) {
        const i = byName.get(r.name)!;
        expect(col(df, stat)[i]).toBeCloseTo(r.values[at(stat)]!, 6);
        const v = col(df, "var_norm")[i]!;
        expect(Math.abs(v - r.values[at("var_norm")]!) / v).toBeLessThan(1e-5);
        const p = r.values[at("pval_norm")]!;
        const mine = col(df, "pval_norm")[i]!;
        expect(Math.abs(mine - p)).toBeLessThanOrEqual(1e-5 * Math.max(p, 1e-300) + 1e-12);
      }
    });

    // Permutation values agree in distribution, not digit for digit (the random streams differ). For a
    // gene expressed in many cells the null is near normal: with k = 100 permutations a sample variance
    // has relative standard error √(2/(k−1)) ≈ 0.14, and the difference of two has √2 times that; a
    // permutation p-value (m + 1)/(k + 1), m ~ Binomial(k, p), has standard error √(p(1−p)/k). Genes in
    // fewer than 200 of the 9,955 cells have discrete, heavy-tailed nulls (many permutations tie with
    // the observation): for them only loose bounds hold.
    it("var_sim, pval_sim and pval_z_sim agree within Monte Carlo error", async () => {
      const t = await synthTable();
      const X = t.X as SparseMatrix;
      const expressing = new Map<string, number>();
      const names = t.var.index.values;
      for (let p = 0; p < X.indices.length; p++) {
        const g = names[Number(X.indices[p])]!;
        expressing.set(g, (expressing.get(g) ?? 0) + 1);
      }
      const byName = new Map(df.index.values.map((g, i) => [g!, i]));
      const se = Math.sqrt(2) * Math.sqrt(2 / 99);
      let logSum = 0;
      let dense = 0;
      for (const r of ref.rows) {
        const i = byName.get(r.name)!;
        const ratio = col(df, "var_sim")[i]! / r.values[at("var_sim")]!;
        const pMine = col(df, "pval_sim")[i]!;
        const pTheirs = r.values[at("pval_sim")]!;
        if ((expressing.get(r.name) ?? 0) >= 200) {
          dense++;
          logSum += Math.log(ratio);
          expect(Math.abs(Math.log(ratio))).toBeLessThan(4.5 * se);
          const p = Math.max(pMine, pTheirs);
          expect(Math.abs(pMine - pTheirs)).toBeLessThanOrEqual(
            4.5 * Math.sqrt((2 * p * (1 - p)) / 100) + 2 / 101,
          );
          const zm = col(df, "pval_z_sim")[i]!;
          const zt = r.values[at("pval_z_sim")]!;
          // Both tiny (< 1e-6) or within a factor that two z estimates 4.5 SE apart allow.
          if (zt > 1e-6 || zm > 1e-6)
            expect(Math.abs(Math.log10(Math.max(zm, 1e-300) / Math.max(zt, 1e-300)))).toBeLessThan(3);
        } else {
          expect(ratio).toBeGreaterThan(1 / 3);
          expect(ratio).toBeLessThan(3);
        }
      }
      expect(dense).toBeGreaterThan(75);
      // No bias: the mean log ratio over the dense genes is within 4 of its standard errors of 0.
      expect(Math.abs(logSum / dense)).toBeLessThan((4 * se) / Math.sqrt(dense));
    });

    it("pval_norm_fdr_bh equals squidpy's (BH over the analytic p-values)", () => {
      const byName = new Map(df.index.values.map((g, i) => [g!, i]));
      for (const r of ref.rows) {
        const theirs = r.values[at("pval_norm_fdr_bh")]!;
        const mine = col(df, "pval_norm_fdr_bh")[byName.get(r.name)!]!;
        expect(Math.abs(mine - theirs)).toBeLessThanOrEqual(1e-5 * theirs + 1e-12);
      }
    });
  });
}

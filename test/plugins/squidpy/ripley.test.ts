import { beforeAll, describe, expect, it } from "vitest";
import { ripley } from "../../../src/plugins/squidpy/ripley.js";
import type { Categorical, DenseArray, StringArray } from "../../../src/sdk/data/arrays.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { makeCtx } from "../scanpy/ctx.js";
import { applied, refLines, sdOf, synthTable } from "./synth.js";

let sd: SpatialData;
beforeAll(async () => {
  sd = sdOf(await synthTable());
}, 120_000);

const num = (df: DataFrame, c: string) => (df.columns[c] as DenseArray<Float64Array>).data;

describe("gr.ripley against squidpy 1.8.3 (synth_10k, cell_type)", () => {
  it("mode L: the observed curves (exact pair counts) equal squidpy's; the simulations are Poisson", async () => {
    const out = applied(sd, await ripley(sd, { cluster_key: "cell_type", mode: "L", seed: 0 }, makeCtx()));
    const u = (p: string) => unsGet(out.tables.table!.uns, `cell_type_ripley_L/${p}`);
    const df = u("L_stat") as DataFrame;
    expect(df.columnOrder).toEqual(["bins", "cell_type", "stats"]);
    const ref = refLines("ripley_L.csv")
      .slice(1)
      .map((l) => l.split(","));
    expect(ref).toHaveLength(600);
    const cat = df.columns.cell_type as Categorical;
    const labels = (cat.categories as StringArray).values;
    ref.forEach(([, bins, type, stat], i) => {
      expect(num(df, "bins")[i]).toBeCloseTo(Number(bins), 9);
      expect(labels[cat.codes[i]!]).toBe(type);
      expect(Math.abs(num(df, "stats")[i]! - Number(stat))).toBeLessThanOrEqual(
        1e-9 * Math.max(1, Number(stat)),
      );
    });
    // Simulated curves: 1,000 uniform points in the hull, scored with squidpy's intensity of all N
    // cells, so L_sim(t) ≈ (1000 / N)·t away from the hull's edges (edge effects only lower it).
    const sims = u("sims_stat") as DataFrame;
    const bins = (u("bins") as DenseArray<Float64Array>).data;
    const n = sd.tables.table!.obs.index.values.length;
    const s = 10;
    let mean = 0;
    for (let k = 0; k < 100; k++) mean += num(sims, "stats")[k * 50 + s]! / 100;
    expect(mean / ((1000 / n) * bins[s]!)).toBeGreaterThan(0.8);
    expect(mean / ((1000 / n) * bins[s]!)).toBeLessThan(1.02);
    const p = (u("pvalues") as DenseArray<Float64Array>).data;
    expect(p.length).toBe(12 * 50);
    expect(p.every((v) => v >= 0 && v <= 0.5)).toBe(true);
  }, 120_000);

  it("modes F and G: cumulative distributions from 0 up to 1, with p-values", async () => {
    for (const mode of ["F", "G"] as const) {
      const out = applied(
        sd,
        await ripley(
          sd,
          { cluster_key: "cell_type", mode, n_simulations: 20, n_observations: 500, seed: 1 },
          makeCtx(),
        ),
      );
      const df = unsGet(out.tables.table!.uns, `cell_type_ripley_${mode}/${mode}_stat`) as DataFrame;
      const st = num(df, "stats");
      for (let c = 0; c < 12; c++) {
        const curve = st.subarray(c * 50, c * 50 + 50);
        expect(curve[0]).toBe(0);
        for (let b = 1; b < 50; b++) expect(curve[b]!).toBeGreaterThanOrEqual(curve[b - 1]!);
        expect(curve[49]!).toBeLessThanOrEqual(1);
        expect(curve[49]!).toBeGreaterThan(0.5);
      }
    }
  }, 120_000);

  it("names a bad cluster key", async () => {
    await expect(ripley(sd, { cluster_key: "nope" }, makeCtx())).rejects.toThrow(/no obs column "nope"/);
  });
});

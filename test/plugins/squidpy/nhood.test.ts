import { beforeAll, describe, expect, it } from "vitest";
import {
  centrality_scores,
  interaction_matrix,
  nhood_enrichment,
} from "../../../src/plugins/squidpy/nhood.js";
import { spatial_neighbors } from "../../../src/plugins/squidpy/spatial-neighbors.js";
import type { DenseArray } from "../../../src/sdk/data/arrays.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { makeCtx } from "../scanpy/ctx.js";
import { applied, refCsv, sdOf, synthTable } from "./synth.js";

// Reference: squidpy 1.8.3 on synth_10k's kNN-6 spatial graph, cluster_key="cell_type" (12 types).

let sd: SpatialData;
const ctx2 = () => ({ ...makeCtx(), threads: 2 });

beforeAll(async () => {
  sd = sdOf(await synthTable());
  sd = applied(sd, await spatial_neighbors(sd, { coord_type: "generic", n_neighs: 6 }, makeCtx()));
}, 120_000);

function dense(s: SpatialData, path: string): DenseArray {
  return unsGet(s.tables.table!.uns, path) as DenseArray;
}

describe("gr.nhood_enrichment against squidpy 1.8.3", () => {
  let out: SpatialData;
  beforeAll(async () => {
    out = applied(
      sd,
      await nhood_enrichment(sd, { cluster_key: "cell_type", n_perms: 1000, seed: 0 }, ctx2()),
    );
  }, 120_000);

  it("counts are squidpy's, exactly", () => {
    const ref = refCsv("nhood_count.csv");
    const c = dense(out, "cell_type_nhood_enrichment/count");
    expect(c.dtype).toBe("uint32");
    expect(c.shape).toEqual([12, 12]);
    expect(Array.from(c.data as Uint32Array)).toEqual(ref.rows.flatMap((r) => r.values));
  });

  it("z-scores agree within Monte Carlo error", () => {
    // z = (count − m̂)/ŝ from 1000 permutations: m̂ has standard error s/√1000 and ŝ relative error
    // ≈ 1/√2000, so Var(ẑ − z) ≈ 1/1000 + z²/2000 for each of the two runs; 5 standard errors of the
    // difference bound every one of the 144 cells.
    const ref = refCsv("nhood_zscore.csv").rows.flatMap((r) => r.values);
    const z = dense(out, "cell_type_nhood_enrichment/zscore").data as Float64Array;
    ref.forEach((zr, i) => {
      const se = Math.sqrt(2 * (1 / 1000 + (zr * zr) / 2000));
      expect(Math.abs(z[i]! - zr)).toBeLessThan(5 * se);
    });
  });

  it("z-scores do not depend on the number of threads (each permutation has its own seed)", async () => {
    const one = applied(
      sd,
      await nhood_enrichment(sd, { cluster_key: "cell_type", n_perms: 50, seed: 3 }, makeCtx()),
    );
    const two = applied(
      sd,
      await nhood_enrichment(sd, { cluster_key: "cell_type", n_perms: 50, seed: 3 }, ctx2()),
    );
    const a = dense(one, "cell_type_nhood_enrichment/zscore").data as Float64Array;
    const b = dense(two, "cell_type_nhood_enrichment/zscore").data as Float64Array;
    a.forEach((v, i) => {
      if (Number.isNaN(v)) expect(b[i]).toBeNaN();
      else expect(b[i]).toBeCloseTo(v, 9);
    });
  });

  it("names a missing column and a bad graph key", async () => {
    await expect(nhood_enrichment(sd, { cluster_key: "nope" }, makeCtx())).rejects.toThrow(
      /no obs column "nope"/,
    );
    await expect(
      nhood_enrichment(sd, { cluster_key: "cell_type", connectivity_key: "other" }, makeCtx()),
    ).rejects.toThrow(/no obsp "other_connectivities"/);
  });
});

describe("gr.interaction_matrix and gr.centrality_scores against squidpy 1.8.3", () => {
  it("interaction matrix: exact", async () => {
    const out = applied(sd, await interaction_matrix(sd, { cluster_key: "cell_type" }, makeCtx()));
    const ref = refCsv("interaction_matrix.csv");
    expect(Array.from(dense(out, "cell_type_interactions").data as Float64Array)).toEqual(
      ref.rows.flatMap((r) => r.values),
    );
    const norm = applied(
      sd,
      await interaction_matrix(sd, { cluster_key: "cell_type", normalized: true }, makeCtx()),
    );
    const m = dense(norm, "cell_type_interactions").data as Float64Array;
    for (let a = 0; a < 12; a++)
      expect(m.slice(a * 12, a * 12 + 12).reduce((s, v) => s + v, 0)).toBeCloseTo(1, 12);
  });

  it("centrality scores: exact (relative 1e-12)", async () => {
    const out = applied(sd, await centrality_scores(sd, { cluster_key: "cell_type" }, makeCtx()));
    const df = unsGet(out.tables.table!.uns, "cell_type_centrality_scores") as DataFrame;
    const ref = refCsv("centrality.csv");
    expect(df.columnOrder).toEqual(ref.header);
    expect(df.index.values).toEqual(ref.rows.map((r) => r.name));
    ref.header.forEach((h, j) => {
      const mine = (df.columns[h] as DenseArray<Float64Array>).data;
      ref.rows.forEach((r, i) => {
        expect(Math.abs(mine[i]! - r.values[j]!)).toBeLessThanOrEqual(1e-12 * Math.abs(r.values[j]!));
      });
    });
  });
});

import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { ligrec } from "../../../src/plugins/squidpy/ligrec.js";
import type { DenseArray } from "../../../src/sdk/data/arrays.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { reference } from "../../fixtures.js";
import { makeCtx } from "../scanpy/ctx.js";
import { applied, refLines, sdOf, synthTable } from "./synth.js";

// Reference: sq.gr.ligrec(adata, cluster_key="cell_type", interactions=lr_pairs, use_raw=False,
// n_perms=1000, seed=0) on synth_10k after filter/normalize/log1p.

function refMatrix(file: string): { rows: string[]; cols: string[]; values: number[][] } {
  const lines = refLines(file);
  const c1 = lines[0]!.split(",").slice(2);
  const c2 = lines[1]!.split(",").slice(2);
  const body = lines.slice(3).map((l) => l.split(","));
  return {
    rows: body.map((r) => `${r[0]}|${r[1]}`),
    cols: c1.map((a, j) => `${a}|${c2[j]}`),
    values: body.map((r) => r.slice(2).map((v) => (v === "" ? Number.NaN : Number(v)))),
  };
}

const pairs = readFileSync(reference("synth_10k/lr_pairs.csv"), "utf8")
  .split("\n")
  .slice(1)
  .filter((l) => l.length > 0)
  .map((l) => l.split(","));

let out: SpatialData;
beforeAll(async () => {
  const sd = sdOf(await synthTable());
  const r = await ligrec(
    sd,
    { cluster_key: "cell_type", interactions: pairs, use_raw: false, n_perms: 1000, seed: 0 },
    { ...makeCtx(), threads: 2 },
  );
  out = applied(sd, r);
}, 180_000);

const frame = (p: string) => unsGet(out.tables.table!.uns, `cell_type_ligrec/${p}`) as DataFrame;
const cell = (df: DataFrame, row: number, col: string) =>
  (df.columns[col] as DenseArray<Float64Array>).data[row]!;

describe("gr.ligrec against squidpy 1.8.3", () => {
  it("interactions and cluster pairs in squidpy's order; means equal to float32 input rounding (relative 1e-6)", () => {
    const ref = refMatrix("ligrec_means.csv.gz");
    const means = frame("means");
    expect(means.index.values).toEqual(ref.rows);
    expect(means.columnOrder).toEqual(ref.cols);
    ref.values.forEach((row, i) => {
      row.forEach((v, j) => {
        expect(Math.abs(cell(means, i, ref.cols[j]!) - v)).toBeLessThanOrEqual(1e-12 + 1e-6 * v);
      });
    });
  });

  it("p-values: the same cells untested (NaN), the others within binomial error of squidpy's", () => {
    // p = m/1000 with m ~ Binomial(1000, p) in both runs: 5 standard errors of the difference (the
    // variance floored at that of p = 0.003, so cells at 0 or 1 in one run still get a bound).
    const ref = refMatrix("ligrec_pvalues.csv.gz");
    const pv = frame("pvalues");
    let tested = 0;
    ref.values.forEach((row, i) => {
      row.forEach((v, j) => {
        const mine = cell(pv, i, ref.cols[j]!);
        if (Number.isNaN(v)) {
          expect(mine).toBeNaN();
          return;
        }
        tested++;
        const p = (v + mine) / 2;
        const variance = Math.max(p * (1 - p), 0.003 * 0.997);
        expect(Math.abs(mine - v)).toBeLessThanOrEqual(5 * Math.sqrt((2 * variance) / 1000));
      });
    });
    expect(tested).toBeGreaterThan(1000);
  });

  it("levels are kept as frames; corr_method adjusts within the axis", async () => {
    expect(frame("interactions").columnOrder).toEqual(["source", "target"]);
    expect(frame("clusters").index.values).toHaveLength(144);
    const sd = sdOf(await synthTable());
    const small = pairs.slice(0, 10);
    const a = applied(
      sd,
      await ligrec(
        sd,
        { cluster_key: "cell_type", interactions: small, use_raw: false, n_perms: 50 },
        makeCtx(),
      ),
    );
    const b = applied(
      sd,
      await ligrec(
        sd,
        { cluster_key: "cell_type", interactions: small, use_raw: false, n_perms: 50, corr_method: "fdr_bh" },
        makeCtx(),
      ),
    );
    const pa = unsGet(a.tables.table!.uns, "cell_type_ligrec/pvalues") as DataFrame;
    const pb = unsGet(b.tables.table!.uns, "cell_type_ligrec/pvalues") as DataFrame;
    for (const c of pa.columnOrder) {
      const x = (pa.columns[c] as DenseArray<Float64Array>).data;
      const y = (pb.columns[c] as DenseArray<Float64Array>).data;
      x.forEach((v, i) => {
        if (Number.isNaN(v)) expect(y[i]).toBeNaN();
        else expect(y[i]!).toBeGreaterThanOrEqual(v);
      });
    }
  }, 120_000);

  it("errors name the problem", async () => {
    const sd = sdOf(await synthTable());
    await expect(ligrec(sd, { cluster_key: "cell_type", interactions: pairs }, makeCtx())).rejects.toThrow(
      /no raw/,
    );
    await expect(
      ligrec(sd, { cluster_key: "cell_type", interactions: [["NOPE1", "NOPE2"]], use_raw: false }, makeCtx()),
    ).rejects.toThrow(/no interactions remain/);
  });
});

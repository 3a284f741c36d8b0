import { describe, expect, it } from "vitest";
import { var_by_distance } from "../../../src/plugins/squidpy/var-by-distance.js";
import type { DenseArray } from "../../../src/sdk/data/arrays.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeCtx } from "../scanpy/ctx.js";
import { applied, sdOf, synthTable } from "./synth.js";

describe("tl.var_by_distance", () => {
  it("distances to the nearest anchor cell, raw and min–max scaled as squidpy does", async () => {
    const t = await synthTable();
    const sd = sdOf(t);
    const out = applied(
      sd,
      await var_by_distance(sd, { groups: ["T03", "T07"], cluster_key: "cell_type" }, makeCtx()),
    );
    const df = out.tables.table!.obsm.design_matrix as DataFrame;
    expect(df.columnOrder).toEqual(["cell_type", "T03", "T03_raw", "T07", "T07_raw"]);
    const xy = (t.obsm.spatial as DenseArray<Float64Array>).data;
    const codes = (t.obs.columns.cell_type as { codes: Int32Array }).codes;
    const raw = (df.columns.T03_raw as DenseArray<Float64Array>).data;
    const scaled = (df.columns.T03 as DenseArray<Float64Array>).data;
    const anchor = [...codes.keys()].filter((i) => codes[i] === 3);
    let max = 0;
    for (let i = 0; i < codes.length; i += 37) {
      let best = Number.POSITIVE_INFINITY;
      for (const a of anchor)
        best = Math.min(best, Math.hypot(xy[2 * i]! - xy[2 * a]!, xy[2 * i + 1]! - xy[2 * a + 1]!));
      expect(raw[i]).toBeCloseTo(best, 9);
    }
    for (let i = 0; i < raw.length; i++) max = Math.max(max, raw[i]!);
    for (let i = 0; i < raw.length; i++) {
      if (codes[i] === 3) expect(scaled[i]).toBeNaN();
      else if (scaled[i] !== 0) expect(scaled[i]).toBeCloseTo(raw[i]! / max, 12);
    }
    expect(Array.from(scaled).filter((v) => v === 0)).toHaveLength(1);
    await expect(
      var_by_distance(sd, { groups: "nope", cluster_key: "cell_type" }, makeCtx()),
    ).rejects.toThrow(/not a category/);
  }, 60_000);
});

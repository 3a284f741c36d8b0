import { describe, expect, it } from "vitest";
import { co_occurrence } from "../../../src/plugins/squidpy/co-occurrence.js";
import type { DenseArray } from "../../../src/sdk/data/arrays.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { reference } from "../../fixtures.js";
import { readNpy } from "../../helpers/npy.js";
import { makeCtx } from "../scanpy/ctx.js";
import { applied, sdOf, synthTable } from "./synth.js";

describe("gr.co_occurrence against squidpy 1.8.3 (synth_10k, cell_type, 50 intervals)", () => {
  it("intervals and probabilities equal squidpy's to 1e-6", async () => {
    const sd = sdOf(await synthTable());
    const out = applied(
      sd,
      await co_occurrence(sd, { cluster_key: "cell_type" }, { ...makeCtx(), threads: 2 }),
    );
    const occ = unsGet(out.tables.table!.uns, "cell_type_co_occurrence/occ") as DenseArray<Float64Array>;
    const iv = unsGet(out.tables.table!.uns, "cell_type_co_occurrence/interval") as DenseArray<Float32Array>;
    const refOcc = await readNpy(reference("synth_10k/scanpy-squidpy/co_occurrence.npy"));
    const refIv = await readNpy(reference("synth_10k/scanpy-squidpy/co_occurrence_interval.npy"));
    expect(iv.dtype).toBe("float32");
    expect(Array.from(iv.data)).toEqual(Array.from(refIv.data as Float32Array));
    expect(occ.shape).toEqual(refOcc.shape);
    const want = refOcc.data as Float64Array;
    let worst = 0;
    want.forEach((v, i) => {
      worst = Math.max(worst, Math.abs(occ.data[i]! - v));
    });
    expect(worst).toBeLessThan(1e-6);
  }, 120_000);

  it("explicit thresholds; a bad interval is named", async () => {
    const sd = sdOf(await synthTable());
    const out = applied(
      sd,
      await co_occurrence(sd, { cluster_key: "cell_type", interval: [50, 10, 100] }, makeCtx()),
    );
    const iv = unsGet(out.tables.table!.uns, "cell_type_co_occurrence/interval") as DenseArray<Float32Array>;
    expect(Array.from(iv.data)).toEqual([10, 50, 100]);
    expect((unsGet(out.tables.table!.uns, "cell_type_co_occurrence/occ") as DenseArray).shape).toEqual([
      12, 12, 2,
    ]);
    await expect(co_occurrence(sd, { cluster_key: "cell_type", interval: 1 }, makeCtx())).rejects.toThrow(
      /interval/,
    );
  }, 120_000);
});

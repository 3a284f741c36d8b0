/**
 * Smaller squidpy parameters: `use_raw` in `gr.spatial_autocorr` (raw X, genes looked up in raw's var
 * names) and `gr.ligrec`'s `interactions_file` (CSV with a header or TSV without, under the data dir,
 * contained like every path param), on synth_10k and the squidpy Visium test data.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spatial_autocorr } from "../../../src/plugins/squidpy/autocorr.js";
import { spatial_neighbors } from "../../../src/plugins/squidpy/spatial-neighbors.js";
import type { DenseArray } from "../../../src/sdk/data/arrays.js";
import type { DataFrame } from "../../../src/sdk/data/dataframe.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { Tessera } from "../../../src/sdk/tessera.js";
import { fixture } from "../../fixtures.js";
import { makeCtx } from "../scanpy/ctx.js";
import { applied, sdOf, synthTable } from "./synth.js";

describe("spatial_autocorr use_raw", () => {
  let sd: SpatialData;
  beforeAll(async () => {
    sd = sdOf(await synthTable());
    sd = applied(sd, await spatial_neighbors(sd, { coord_type: "generic", n_neighs: 6 }, makeCtx()));
  }, 120_000);

  it("scores raw X by raw's gene names: the same as X when raw holds X's values", async () => {
    const t = sd.tables.table!;
    const genes = (t.var.index.values as string[]).slice(0, 12);
    const base = applied(sd, await spatial_autocorr(sd, { genes, n_perms: 0 }, makeCtx()));
    // raw = today's X (genes in reverse order), X replaced by zeros: only raw can give the same I.
    const names = [...(t.var.index.values as string[])].reverse();
    const { loadMatrix } = await import("../../../src/sdk/data/lazy.js");
    const x = (await loadMatrix(t.X!)) as { kind: string };
    expect(x.kind).toBe("csr");
    const csr = x as unknown as {
      indptr: Int32Array;
      indices: Int32Array;
      data: Float32Array;
      shape: number[];
    };
    const w = csr.shape[1]!;
    const rawX = { ...csr, indices: Int32Array.from(csr.indices, (j) => w - 1 - j) };
    const { dataFrame } = await import("../../../src/sdk/data/dataframe.js");
    const rawTable = {
      ...t,
      X: { ...csr, data: new Float32Array(csr.data.length) },
      raw: { X: rawX as never, var: dataFrame(names, {}), varm: {} },
    };
    const sd2 = { ...sd, tables: { table: rawTable } } as unknown as SpatialData;
    const withRaw = applied(
      sd2,
      await spatial_autocorr(sd2, { genes, n_perms: 0, use_raw: true }, makeCtx()),
    );
    const I = (s: SpatialData) => {
      const df = unsGet(s.tables.table!.uns, "moranI") as DataFrame;
      const v = (df.columns.I as DenseArray<Float64Array>).data;
      return Object.fromEntries(df.index.values.map((g, i) => [g, v[i]!]));
    };
    const a = I(base);
    const b = I(withRaw);
    for (const g of genes) expect(Math.abs(a[g]! - b[g]!)).toBeLessThan(1e-12);
    await expect(spatial_autocorr(sd, { genes, use_raw: true }, makeCtx())).rejects.toThrow(/no raw/);
  }, 120_000);
});

describe("ligrec interactions_file", () => {
  let dataDir: string;
  let t: Tessera;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tessera-ligrec-file-"));
    await cp(fixture("squidpy-tests/test_data.h5ad"), join(dataDir, "visium.h5ad"));
    await writeFile(join(tmpdir(), "tessera-ligrec-outside.csv"), "source,target\nA,B\n");
    t = await Tessera.start({ dataDir, plugins: ["tessera", "squidpy"] });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("a CSV with a header and a TSV without one give the pairs given inline; paths stay in the data dir", async () => {
    const s = await t.open("visium.h5ad");
    // Pairs of the data's own genes (squidpy drops pairs whose genes are missing).
    const genes = (s.session.data.tables.table!.var.index.values as string[]).slice(0, 12);
    const pairs = Array.from({ length: 6 }, (_, i) => [genes[2 * i]!, genes[2 * i + 1]!]);
    await mkdir(join(dataDir, "pairs"), { recursive: true });
    await writeFile(
      join(dataDir, "pairs", "lr.csv"),
      `genesymbol_intercell_source,source,target\n${pairs.map(([a, b]) => `x,${a},${b}`).join("\n")}\n`,
    );
    await writeFile(join(dataDir, "pairs", "lr.tsv"), `${pairs.map(([a, b]) => `${a}\t${b}`).join("\n")}\n`);
    const common = { cluster_key: "leiden", use_raw: false, n_perms: 20, seed: 1 };
    const means = async (extra: Record<string, unknown>, key: string) => {
      const o = await s.run("gr.ligrec", { ...common, ...extra, key_added: key });
      expect(o.error ?? o.status).toBe("completed");
      const df = unsGet(s.session.data.tables.table!.uns, `${key}/means`) as DataFrame;
      return {
        rows: [...df.index.values],
        values: df.columnOrder.map((c) => Array.from((df.columns[c] as DenseArray).data as Float64Array)),
      };
    };
    const inline = await means({ interactions: pairs }, "lr_inline");
    expect(inline.rows.length).toBeGreaterThan(0);
    expect(await means({ interactions_file: "pairs/lr.csv" }, "lr_csv")).toEqual(inline);
    expect(await means({ interactions_file: "pairs/lr.tsv" }, "lr_tsv")).toEqual(inline);
    await expect(
      s.run("gr.ligrec", { ...common, interactions_file: "../tessera-ligrec-outside.csv" }),
    ).rejects.toThrow(/interactions_file/);
    await expect(
      s.run("gr.ligrec", { ...common, interactions: pairs, interactions_file: "pairs/lr.csv" }),
    ).rejects.toThrow(/not both/);
    await expect(s.run("gr.ligrec", common)).rejects.toThrow(/interactions_file/);
  }, 300_000);
});

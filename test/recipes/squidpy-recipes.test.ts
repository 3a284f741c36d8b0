/**
 * The squidpy recipes, run end to end through the SDK facade (real worker threads) on real data:
 * squidpy's own Visium test fixture (49 spots of mouse brain with Leiden clusters, uns `spatial`, so
 * the graph is a grid) and a 1,500-cell subsample of the synth_10k reference counts. ligrec's means
 * on the Visium fixture are checked against squidpy's stored reference; the recipes' plot steps draw.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DenseArray, Matrix, StringArray } from "../../src/sdk/data/arrays.js";
import { type Column, columnLength, columnValue, type DataFrame } from "../../src/sdk/data/dataframe.js";
import { loadMatrix } from "../../src/sdk/data/lazy.js";
import { unsGet } from "../../src/sdk/data/uns.js";
import { readH5ad } from "../../src/sdk/io/anndata/read-h5ad.js";
import { Tessera, type TesseraSession } from "../../src/sdk/tessera.js";
import { fixture, reference } from "../fixtures.js";

let dataDir: string;
let t: Tessera;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "tessera-sq-recipes-"));
  await cp(fixture("squidpy-tests/test_data.h5ad"), join(dataDir, "visium.h5ad"));
  await cp(reference("synth_10k/input.h5ad"), join(dataDir, "synth.h5ad"));
  t = await Tessera.start({ dataDir, plugins: ["tessera", "scanpy", "squidpy", "plots"] });
});
afterAll(async () => {
  await t?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function expectAllCompleted(outcomes: { status: string; error?: string }[]): void {
  expect(outcomes.filter((o) => o.status !== "completed").map((o) => o.error)).toEqual([]);
}

const uns = (s: TesseraSession, path: string) => unsGet(s.session.data.tables.table!.uns, path);

describe("squidpy recipes end to end", () => {
  it("every squidpy recipe is discovered", () => {
    const names = t.recipes().map((r) => r.name);
    for (const n of [
      "nhood_enrichment",
      "spatially_variable_moran",
      "region_graph_topology",
      "spatial_point_patterns",
      "cluster_nhood_enrichment",
      "spatially_variable_geary",
      "spatially_variable_sepal",
      "ligand_receptor",
    ]) {
      expect(names).toContain(n);
    }
  });

  it("nhood_enrichment, region_graph_topology and spatial_point_patterns on the Visium fixture", async () => {
    const s = await t.open("visium.h5ad");
    expectAllCompleted(await s.runRecipe(t.recipe("nhood_enrichment"), { cluster_key: "leiden" }));
    // A hexagonal grid: every spot has at most 6 neighbours, all at ring distance 1.
    const g = s.session.data.tables.table!.obsp.spatial_connectivities as Matrix;
    expect(unsGet(s.session.data.tables.table!.uns, "spatial_neighbors/params/coord_type")).toBe("grid");
    const m = g.kind === "csr" ? g : null;
    expect(m).not.toBeNull();
    for (let i = 0; i < 49; i++)
      expect(Number(m!.indptr[i + 1]) - Number(m!.indptr[i])).toBeLessThanOrEqual(6);
    const z = uns(s, "leiden_nhood_enrichment/zscore") as DenseArray;
    expect(z.shape).toEqual([5, 5]);
    expectAllCompleted(await s.runRecipe(t.recipe("region_graph_topology"), { cluster_key: "leiden" }));
    const cs = uns(s, "leiden_centrality_scores") as DataFrame;
    expect(cs.columnOrder).toEqual(["degree_centrality", "average_clustering", "closeness_centrality"]);
    const im = uns(s, "leiden_interactions") as DenseArray<Float64Array>;
    for (let a = 0; a < 5; a++) {
      const row = im.data.slice(a * 5, a * 5 + 5);
      const sum = row.reduce((x, y) => x + y, 0);
      if (!Number.isNaN(sum)) expect(sum).toBeCloseTo(1, 12);
    }
    expectAllCompleted(await s.runRecipe(t.recipe("spatial_point_patterns"), { cluster_key: "leiden" }));
    expect((uns(s, "leiden_ripley_L/L_stat") as DataFrame).columnOrder).toEqual(["bins", "leiden", "stats"]);
    // The recipes' plot steps drew their figures.
    const drawn = s.appState.plots.filter((p) => p.status === "drawn").map((p) => p.function);
    expect(drawn).toEqual(["nhood_enrichment", "centrality_scores", "interaction_matrix", "ripley"]);
  }, 180_000);

  it("spatially_variable_moran and _geary on the Visium fixture's highly variable genes", async () => {
    const s = await t.open("visium.h5ad");
    expectAllCompleted(await s.runRecipe(t.recipe("spatially_variable_moran"), { n_perms: 20 }));
    const moran = uns(s, "moranI") as DataFrame;
    const hv = s.session.data.tables.table!.var.columns.highly_variable as DenseArray;
    const nHv = Array.from(hv.data as Uint8Array).filter((v) => v).length;
    expect(moran.index.values).toHaveLength(nHv);
    const I = (moran.columns.I as DenseArray<Float64Array>).data;
    for (let k = 1; k < I.length; k++) if (!Number.isNaN(I[k]!)) expect(I[k]!).toBeLessThanOrEqual(I[k - 1]!);
    expectAllCompleted(await s.runRecipe(t.recipe("spatially_variable_geary"), { n_perms: 20 }));
    expect((uns(s, "gearyC") as DataFrame).columnOrder).toEqual(
      expect.arrayContaining(["C", "pval_norm", "var_norm", "pval_sim", "pval_norm_fdr_bh"]),
    );
  }, 180_000);

  it("spatially_variable_sepal on the Visium fixture", async () => {
    const s = await t.open("visium.h5ad");
    const names = s.session.data.tables.table!.var.index.values.slice(0, 24) as string[];
    expectAllCompleted(await s.runRecipe(t.recipe("spatially_variable_sepal"), { genes: names }));
    const df = uns(s, "sepal_score") as DataFrame;
    const v = (df.columns.sepal_score as DenseArray<Float64Array>).data;
    expect(v.length).toBe(24);
    const finite = Array.from(v).filter((x) => !Number.isNaN(x));
    expect(finite.length).toBeGreaterThan(0);
    for (let k = 1; k < finite.length; k++) expect(finite[k]!).toBeLessThanOrEqual(finite[k - 1]!);
    expect(finite.every((x) => x >= 0 && Number.isInteger(Math.round(x * 1000)))).toBe(true);
  }, 180_000);

  it("ligand_receptor on the Visium fixture: means equal squidpy's stored reference", async () => {
    const { table: ref } = await readH5ad(fixture("squidpy-tests/ligrec_pvalues_reference.h5ad"));
    const strings = (c: Column): string[] =>
      Array.from({ length: columnLength(c) }, (_, i) => String(columnValue(c, i)));
    const src = strings(ref.obs.columns.source!);
    const tgt = strings(ref.obs.columns.target!);
    const c1 = strings(ref.var.columns.cluster_1!);
    const c2 = strings(ref.var.columns.cluster_2!);
    const interactions = src.map((a, i) => [a, tgt[i]!]);
    const s = await t.open("visium.h5ad");
    expectAllCompleted(
      await s.runRecipe(t.recipe("ligand_receptor"), { cluster_key: "leiden", interactions }),
    );
    const means = uns(s, "leiden_ligrec/means") as DataFrame;
    const want = (await loadMatrix(ref.layers.means!)) as DenseArray;
    const nCols = ref.var.index.values.length;
    let compared = 0;
    src.forEach((a, i) => {
      const row = means.index.values.indexOf(`${a.toUpperCase()}|${tgt[i]!.toUpperCase()}`);
      if (row < 0) return; // squidpy dropped pairs whose genes are missing; so do we.
      for (let j = 0; j < nCols; j++) {
        const col = `${c1[j]}|${c2[j]}`;
        const mine = (means.columns[col] as DenseArray<Float64Array>).data[row]!;
        const theirs = Number((want.data as ArrayLike<number>)[i * nCols + j]);
        expect(Math.abs(mine - theirs)).toBeLessThanOrEqual(1e-6 * Math.abs(theirs) + 1e-9);
        compared++;
      }
    });
    expect(compared).toBeGreaterThan(100);
  }, 180_000);

  it("cluster_nhood_enrichment from raw counts (1,500 synth_10k cells)", async () => {
    const s = await t.open("synth.h5ad");
    await s.run("sc.pp.subsample", { n_obs: 1500, random_state: 0 });
    expectAllCompleted(await s.runRecipe(t.recipe("cluster_nhood_enrichment"), {}));
    const k = (s.session.data.tables.table!.obs.columns.leiden as { categories: StringArray }).categories
      .values.length;
    expect(k).toBeGreaterThan(2);
    const count = uns(s, "leiden_nhood_enrichment/count") as DenseArray;
    // 6 neighbours per cell: the counts sum to 6 × 1,500 edges.
    expect(Array.from(count.data as Uint32Array).reduce((a, b) => a + b, 0)).toBe(6 * 1500);
  }, 180_000);
});

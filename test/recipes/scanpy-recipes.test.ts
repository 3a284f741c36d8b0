/**
 * Every shipped scanpy recipe, run end to end through the SDK facade (real worker threads) on real
 * data: a 1 500-cell subsample of the synth_10k reference counts, and the MCMICRO exemplar's
 * multiplexed-protein table.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Tessera, type TesseraSession } from "../../src/sdk/tessera.js";
import { fixture, reference } from "../fixtures.js";

let dataDir: string;
let t: Tessera;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "tessera-recipes-"));
  await cp(reference("synth_10k/input.h5ad"), join(dataDir, "synth.h5ad"));
  await cp(
    fixture("vitessce-exemplar-001-crop/exemplar-001.crop.cells.adata.zarr"),
    join(dataDir, "cells.adata.zarr"),
    { recursive: true },
  );
  t = await Tessera.start({ dataDir, plugins: ["tessera", "scanpy", "plots"] });
});
afterAll(async () => {
  await t?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A fresh session on a 1 500-cell subsample of the reference counts. */
async function countsSession(): Promise<TesseraSession> {
  const s = await t.open("synth.h5ad");
  await s.run("sc.pp.subsample", { n_obs: 1500, random_state: 0 });
  return s;
}

function expectAllCompleted(outcomes: { status: string; error?: string }[]): void {
  const failed = outcomes.filter((o) => o.status !== "completed").map((o) => o.error);
  expect(failed).toEqual([]);
}

async function categories(s: TesseraSession, path: string): Promise<Set<unknown>> {
  return new Set(await s.values(path));
}

describe("scanpy recipes end to end", () => {
  it("every shipped recipe is discovered and names only registered functions", () => {
    const names = t.recipes().map((r) => r.name);
    for (const n of [
      "preprocess_qc",
      "cluster_markers",
      "counts_to_clusters",
      "tsne_diffmap",
      "paga_trajectory",
      "cluster_hierarchy_markers",
      "protein_clustering",
    ]) {
      expect(names).toContain(n);
    }
  });

  it("preprocess_qc then cluster_markers", async () => {
    const s = await countsSession();
    expectAllCompleted(await s.runRecipe(t.recipe("preprocess_qc"), { qc_vars: ["mt"], n_top_genes: 500 }));
    const table = s.session.data.tables.table!;
    expect(table.obs.columnOrder).toEqual(
      expect.arrayContaining(["total_counts", "pct_counts_mt", "n_genes"]),
    );
    expect(table.var.columnOrder).toEqual(expect.arrayContaining(["highly_variable", "dispersions_norm"]));
    expectAllCompleted(await s.runRecipe(t.recipe("cluster_markers"), { n_comps: 30 }));
    const clusters = await categories(s, "obs:leiden");
    expect(clusters.size).toBeGreaterThan(3);
    expect(s.session.data.tables.table!.obsm.X_umap).toBeDefined();
    expect(Object.keys(s.session.data.tables.table!.uns.entries)).toEqual(
      expect.arrayContaining(["rank_genes_groups", "leiden", "umap", "neighbors", "pca"]),
    );
    // The dot plot of each cluster's top genes is drawn (recorded as a pl plot).
    expect(s.appState.plots.map((p) => [p.namespace, p.function, p.status])).toEqual([
      ["pl", "rank_genes_groups_dotplot", "drawn"],
    ]);
  });

  it("counts_to_clusters, then tsne_diffmap, paga_trajectory and cluster_hierarchy_markers", async () => {
    const s = await countsSession();
    expectAllCompleted(await s.runRecipe(t.recipe("counts_to_clusters"), { n_top_genes: 500, n_comps: 30 }));
    expect((await categories(s, "obs:leiden")).size).toBeGreaterThan(3);
    expectAllCompleted(await s.runRecipe(t.recipe("tsne_diffmap"), { n_comps: 30 }));
    const tab = () => s.session.data.tables.table!;
    expect(Object.keys(tab().obsm)).toEqual(
      expect.arrayContaining(["X_pca", "X_umap", "X_tsne", "X_diffmap"]),
    );
    expectAllCompleted(await s.runRecipe(t.recipe("paga_trajectory"), { n_comps: 30 }));
    expect(tab().uns.entries.paga).toBeDefined();
    expect(tab().obsm.X_draw_graph_fa).toBeDefined();
    expectAllCompleted(await s.runRecipe(t.recipe("cluster_hierarchy_markers"), { n_comps: 30 }));
    expect(tab().uns.entries.dendrogram_leiden).toBeDefined();
    // The audit log holds every step, and the session exports back as a recipe.
    expect(s.appState.compute_history.filter((h) => h.status === "completed").length).toBeGreaterThan(20);
    expect(s.exportRecipe().steps.length).toBeGreaterThan(20);
  });

  it("protein_clustering on the MCMICRO exemplar (218 cells × 4 markers)", async () => {
    const s = await t.open("cells.adata.zarr");
    expectAllCompleted(await s.runRecipe(t.recipe("protein_clustering"), { n_neighbors: 10 }));
    expect((await categories(s, "obs:leiden")).size).toBeGreaterThan(1);
    expect(s.session.data.tables.table!.obsm.X_umap).toBeDefined();
  });
});

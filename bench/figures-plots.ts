/**
 * Plots benchmark (`npx tsx bench/figures-plots.ts`): every `sc.pl` and squidpy `pl` plot kind at
 * 200,000 cells, drawn to SVG + PNG (144 dpi) + vector PDF as the engine runs them (the operation
 * functions called on the main thread). Prints wall time, CPU seconds (all threads) and output sizes per plot; a benchmark never
 * passes or fails.
 *
 * Data: the peers' `synth_200k.h5ad` (200,000 × 5,000, from ../shared/bench/gen_data.py) when
 * `--data DIR` holds it (default /tmp/bench-data), else the demo generator at 200,000 cells × 300
 * genes. The inputs the plots read are computed first by the real operations (normalize_total,
 * log1p, seurat HVGs, PCA, t-test ranking, spatial kNN graph, nhood_enrichment, interaction_matrix,
 * degree centrality, ripley L, ligrec), except two stand-ins that do not change what a plot costs:
 * `X_umap` is PCA's first two components (the drawing is the same for any 2-d embedding), and
 * co-occurrence and Ripley's L (quadratic in cells; the peers skipped them at 200k) are computed on every
 * tenth cell (20,000): their plots draw curves whose size does not depend on the number of cells.
 *
 * The plots that read genes are then drawn twice more: reading X (a CSR column scan per plot, what a
 * job did before) and reading the session's column mirror (`ctx.mirrorGene`, served from a checkpoint
 * of the same table written here, as a session loaded from it serves its jobs). `--no-mirror` skips it.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as embedding from "../src/plugins/plots/embedding.js";
import * as grouped from "../src/plugins/plots/grouped.js";
import * as pre from "../src/plugins/plots/preprocessing.js";
import * as rank from "../src/plugins/plots/rank.js";
import * as sqGraph from "../src/plugins/plots/squidpy-graph.js";
import * as sqLigrec from "../src/plugins/plots/squidpy-ligrec.js";
import * as sqSpatial from "../src/plugins/plots/squidpy-spatial.js";
import { highly_variable_genes } from "../src/plugins/scanpy/pp/highly-variable-genes.js";
import { normalize_total } from "../src/plugins/scanpy/pp/normalization.js";
import { pca } from "../src/plugins/scanpy/pp/pca.js";
import { log1p } from "../src/plugins/scanpy/pp/simple.js";
import { rank_genes_groups } from "../src/plugins/scanpy/tl/rank-genes-groups.js";
import { co_occurrence } from "../src/plugins/squidpy/co-occurrence.js";
import { ligrec } from "../src/plugins/squidpy/ligrec.js";
import { centrality_scores, interaction_matrix, nhood_enrichment } from "../src/plugins/squidpy/nhood.js";
import { ripley } from "../src/plugins/squidpy/ripley.js";
import { spatial_neighbors } from "../src/plugins/squidpy/spatial-neighbors.js";
import { applyChange, type Change } from "../src/sdk/data/change.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { frameRows, matrixRows } from "../src/sdk/data/subset.js";
import { makeTable } from "../src/sdk/data/table.js";
import { generateDemo } from "../src/sdk/demo/generate.js";
import { readH5ad } from "../src/sdk/io/anndata/read-h5ad.js";
import { openCheckpoint, readGeneFromMirror } from "../src/sdk/io/checkpoint/read.js";
import { writeCheckpoint } from "../src/sdk/io/checkpoint/write.js";
import type { PlotResult } from "../src/sdk/jobs/operation.js";
import { benchCtx } from "./context.js";

const { values: args } = parseArgs({
  options: { data: { type: "string", default: "/tmp/bench-data" }, "no-mirror": { type: "boolean" } },
});
const ctx = benchCtx("table");
const apply = (sd: SpatialData, c: Change) => applyChange(sd, c).sdata;
const secs = (t0: number) => ((performance.now() - t0) / 1000).toFixed(2);

async function load(): Promise<{ sd: SpatialData; groupby: string; source: string }> {
  const file = join(args.data!, "synth_200k.h5ad");
  if (existsSync(file)) {
    const { table } = await readH5ad(file);
    return { sd: makeSpatialData({ tables: { table } }), groupby: "cell_type", source: file };
  }
  const demo = generateDemo({ nCells: 200_000, nGenes: 300, nTranscripts: 1000, imageSize: 256 });
  const name = Object.keys(demo.tables)[0]!;
  return {
    sd: makeSpatialData({ tables: { table: demo.tables[name]! } }),
    groupby: "cell_type",
    source: "demo generator",
  };
}

let t0 = performance.now();
let { sd, groupby, source } = await load();
const t = () => sd.tables.table!;
console.log(
  `data: ${source}, ${t().obs.index.values.length.toLocaleString("en")} cells × ${t().var.index.values.length.toLocaleString("en")} genes (${secs(t0)} s)`,
);
t0 = performance.now();
const step = (name: string) => console.log(`  ${name} (${secs(t0)} s)`);
sd = apply(sd, await normalize_total(sd, {}, ctx));
sd = apply(sd, await log1p(sd, {}, ctx));
sd = apply(sd, await highly_variable_genes(sd, { flavor: "seurat", n_top_genes: 1000 }, ctx));
sd = apply(sd, await pca(sd, { n_comps: 20 }, ctx));
{
  const xp = t().obsm.X_pca!;
  if (xp.kind !== "dense") throw new Error("X_pca is not dense");
  const n = xp.shape[0]!;
  const w = xp.shape[1]!;
  const u = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    u[i * 2] = Number(xp.data[i * w]);
    u[i * 2 + 1] = Number(xp.data[i * w + 1]);
  }
  sd = apply(sd, {
    tables: { table: { obsm: { X_umap: { kind: "dense", dtype: "float32", shape: [n, 2], data: u } } } },
  });
}
step("normalize_total, log1p, highly_variable_genes, pca");
sd = apply(sd, await rank_genes_groups(sd, { groupby, method: "t-test" }, ctx));
step("rank_genes_groups");
sd = apply(sd, await spatial_neighbors(sd, { coord_type: "generic", n_neighs: 6 }, ctx));
sd = apply(sd, await nhood_enrichment(sd, { cluster_key: groupby, n_perms: 20, seed: 0 }, ctx));
sd = apply(sd, await interaction_matrix(sd, { cluster_key: groupby }, ctx));
sd = apply(sd, await centrality_scores(sd, { cluster_key: groupby, score: ["degree_centrality"] }, ctx));
step("spatial_neighbors, nhood_enrichment, interaction_matrix, centrality_scores");
{
  const pos = Int32Array.from({ length: 20_000 }, (_, i) => i * 10);
  const spatial = t().obsm.spatial!;
  if (spatial.kind === "dataframe") throw new Error("obsm spatial is a frame");
  const table = makeTable({
    obs: frameRows(t().obs, pos).df,
    var: t().var,
    obsm: { spatial: matrixRows(spatial as never, pos) },
  });
  const small = makeSpatialData({ tables: { table } });
  const occ = await co_occurrence(small, { cluster_key: groupby }, ctx);
  const rip = await ripley(small, { cluster_key: groupby, mode: "L", n_simulations: 20, seed: 0 }, ctx);
  for (const [key, c] of [
    [`${groupby}_co_occurrence`, occ],
    [`${groupby}_ripley_L`, rip],
  ] as const)
    sd = apply(sd, { tables: { table: { uns: { [key]: c.tables!.table!.uns![key]! } } } });
}
const lrFile = join(args.data!, "synth_200k_lr_pairs.csv");
const genes = t().var.index.values.map(String);
const pairs = existsSync(lrFile)
  ? readFileSync(lrFile, "utf8")
      .trim()
      .split("\n")
      .slice(1, 21)
      .map((l) => l.split(",").slice(0, 2) as [string, string])
  : Array.from({ length: 10 }, (_, i) => [genes[i]!, genes[i + 10]!] as [string, string]);
sd = apply(
  sd,
  await ligrec(sd, { cluster_key: groupby, interactions: pairs, n_perms: 20, seed: 0, use_raw: false }, ctx),
);
console.log(`inputs computed (${secs(t0)} s)`);

const top = genes.slice(0, 8);
const topRanked = (() => {
  const names = (t().uns.entries.rank_genes_groups as unknown as { entries: Record<string, never> }).entries
    .names as {
    columnOrder: string[];
  };
  return names.columnOrder.length;
})();
const cases: [string, () => Promise<PlotResult>][] = [
  ["sc.pl.umap", () => embedding.umap(sd, { color: groupby }, ctx)],
  ["sc.pl.embedding (gene)", () => embedding.embedding(sd, { basis: "pca", color: top[0]! }, ctx)],
  ["sc.pl.violin", () => grouped.violin(sd, { keys: top[0]!, groupby }, ctx)],
  ["sc.pl.dotplot", () => grouped.dotplot(sd, { var_names: top, groupby }, ctx)],
  ["sc.pl.matrixplot", () => grouped.matrixplot(sd, { var_names: top, groupby }, ctx)],
  ["sc.pl.heatmap", () => grouped.heatmap(sd, { var_names: top, groupby }, ctx)],
  ["sc.pl.stacked_violin", () => grouped.stacked_violin(sd, { var_names: top, groupby }, ctx)],
  ["sc.pl.rank_genes_groups_dotplot", () => rank.rank_genes_groups_dotplot(sd, { n_genes: 3 }, ctx)],
  ["sc.pl.rank_genes_groups_matrixplot", () => rank.rank_genes_groups_matrixplot(sd, { n_genes: 3 }, ctx)],
  ["sc.pl.rank_genes_groups_heatmap", () => rank.rank_genes_groups_heatmap(sd, { n_genes: 3 }, ctx)],
  [
    "sc.pl.rank_genes_groups_stacked_violin",
    () => rank.rank_genes_groups_stacked_violin(sd, { n_genes: 3 }, ctx),
  ],
  ["sc.pl.highly_variable_genes", () => pre.highly_variable_genes(sd, {}, ctx)],
  ["sc.pl.pca_variance_ratio", () => pre.pca_variance_ratio(sd, {}, ctx)],
  ["pl.nhood_enrichment", () => sqGraph.nhood_enrichment(sd, { cluster_key: groupby }, ctx)],
  ["pl.interaction_matrix", () => sqGraph.interaction_matrix(sd, { cluster_key: groupby }, ctx)],
  ["pl.centrality_scores", () => sqGraph.centrality_scores(sd, { cluster_key: groupby }, ctx)],
  [
    "pl.co_occurrence",
    () => sqSpatial.co_occurrence(sd, { cluster_key: groupby, clusters: groupsOf().slice(0, 2) }, ctx),
  ],
  ["pl.ripley", () => sqSpatial.ripley(sd, { cluster_key: groupby, mode: "L" }, ctx)],
  ["pl.spatial_scatter", () => sqSpatial.spatial_scatter(sd, { color: groupby }, ctx)],
  ["pl.ligrec", () => sqLigrec.ligrec(sd, { cluster_key: groupby }, ctx)],
];
function groupsOf(): string[] {
  const c = t().obs.columns[groupby]!;
  return c.kind === "categorical" && c.categories.kind === "string" ? c.categories.values.map(String) : [];
}

console.log(
  `\n${"plot".padEnd(40)} ${"time s".padStart(7)} ${"CPU s".padStart(7)} ${"svg KB".padStart(8)} ${"png KB".padStart(8)} ${"pdf KB".padStart(8)}`,
);
for (const [name, run] of cases) {
  const s0 = performance.now();
  const c0 = process.cpuUsage();
  try {
    const r = await run();
    const c = process.cpuUsage(c0);
    const cpu = ((c.user + c.system) / 1e6).toFixed(2).padStart(7);
    const kb = (n: number | undefined) => ((n ?? 0) / 1024).toFixed(0).padStart(8);
    console.log(
      `${name.padEnd(40)} ${secs(s0).padStart(7)} ${cpu} ${kb(Buffer.byteLength(r.svg))} ${kb(r.png?.length)} ${kb(r.pdf?.length)}`,
    );
  } catch (err) {
    console.log(`${name.padEnd(40)} failed: ${(err as Error).message}`);
  }
}
console.log(`(${topRanked} ranked groups; RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB)`);

if (!args["no-mirror"]) {
  // The gene plots reading X against reading the column mirror of a checkpoint of this table.
  const dir = await mkdtemp(join(tmpdir(), "tessera-bench-plots-"));
  try {
    t0 = performance.now();
    const file = join(dir, "plots.sdata.zarr.zip");
    await writeCheckpoint(sd, file);
    const cp = await openCheckpoint(file);
    console.log(`\ncheckpoint with the column mirror written and opened (${secs(t0)} s)`);
    const cache = new Map<string, Float32Array>();
    const mirrorCtx = {
      ...ctx,
      // what the session's reader does: the mirror read, then its cache (a viewer and the plots share it)
      mirrorGene: async (table: string, gene: string) => {
        const key = `${table}/${gene}`;
        const hit = cache.get(key);
        if (hit) return hit;
        const v = await readGeneFromMirror(cp, table, gene);
        cache.set(key, v);
        return v;
      },
    };
    const geneCases: [string, (c: typeof ctx) => Promise<PlotResult>][] = [
      ["sc.pl.embedding (gene)", (c) => embedding.embedding(sd, { basis: "pca", color: top[0]! }, c)],
      ["pl.spatial_scatter (gene)", (c) => sqSpatial.spatial_scatter(sd, { color: top[0]! }, c)],
      ["sc.pl.violin", (c) => grouped.violin(sd, { keys: top[0]!, groupby }, c)],
      ["sc.pl.dotplot", (c) => grouped.dotplot(sd, { var_names: top, groupby }, c)],
      ["sc.pl.matrixplot", (c) => grouped.matrixplot(sd, { var_names: top, groupby }, c)],
      ["sc.pl.heatmap", (c) => grouped.heatmap(sd, { var_names: top, groupby }, c)],
      ["sc.pl.stacked_violin", (c) => grouped.stacked_violin(sd, { var_names: top, groupby }, c)],
      ["sc.pl.rank_genes_groups_dotplot", (c) => rank.rank_genes_groups_dotplot(sd, { n_genes: 3 }, c)],
    ];
    const timed = async (run: () => Promise<PlotResult>) => {
      const s0 = performance.now();
      const c0 = process.cpuUsage();
      await run();
      const c = process.cpuUsage(c0);
      return `${secs(s0).padStart(7)} ${((c.user + c.system) / 1e6).toFixed(2).padStart(7)}`;
    };
    console.log(
      `${"gene plot".padEnd(40)} ${"X: s".padStart(7)} ${"CPU s".padStart(7)}   ${"mirror: s".padStart(9)} ${"CPU s".padStart(7)}`,
    );
    for (const [name, run] of geneCases) {
      try {
        const fromX = await timed(() => run(ctx));
        // first mirror read of these genes (the cache is cleared so every plot pays its reads)
        cache.clear();
        const fromMirror = await timed(() => run(mirrorCtx));
        console.log(`${name.padEnd(40)} ${fromX}   ${fromMirror.padStart(17)}`);
      } catch (err) {
        console.log(`${name.padEnd(40)} failed: ${(err as Error).message}`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * squidpy's spatial statistics (`gr.*`) on the peers' generated data, with squidpy 1.8.3's seconds
 * beside ours (../shared/bench/README.md; same calls and parameters).
 *
 *   npx tsx bench/squidpy.ts [--sizes 50k,200k] [--data /tmp/bench-data] [--skip co_occurrence,ripley]
 *
 * Data: `synth_{50k,200k}.h5ad` and `synth_*_lr_pairs.csv` written by ../shared/bench/gen_data.py
 * (the files squidpy was timed on, byte for byte:
 * `/tmp/scverse/venv/bin/python ../shared/bench/gen_data.py 50k 200k --out /tmp/bench-data`).
 * X is normalised (median total) and log1p'd first, as in the peers' pipeline; the 100 Moran/Geary
 * genes are the top 100 HVGs (seurat, by dispersions_norm). Operations run on the main thread with
 * `BENCH_THREADS` threads (squidpy had 2; run with BENCH_THREADS=2 to compare). squidpy was timed
 * warm, so steps under 5 CPU seconds run twice and the second (warm) run is printed. A benchmark
 * prints figures; it never passes or fails.
 */
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { highly_variable_genes } from "../src/plugins/scanpy/pp/highly-variable-genes.js";
import { normalize_total } from "../src/plugins/scanpy/pp/normalization.js";
import { log1p } from "../src/plugins/scanpy/pp/simple.js";
import { spatial_autocorr } from "../src/plugins/squidpy/autocorr.js";
import { co_occurrence } from "../src/plugins/squidpy/co-occurrence.js";
import { ligrec } from "../src/plugins/squidpy/ligrec.js";
import { centrality_scores, interaction_matrix, nhood_enrichment } from "../src/plugins/squidpy/nhood.js";
import { ripley } from "../src/plugins/squidpy/ripley.js";
import { spatial_neighbors } from "../src/plugins/squidpy/spatial-neighbors.js";
import type { DenseArray } from "../src/sdk/data/arrays.js";
import { applyChange, type Change } from "../src/sdk/data/change.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { readH5ad } from "../src/sdk/io/anndata/read-h5ad.js";
import { BENCH_THREADS, benchCtx } from "./context.js";

/** squidpy 1.8.3 seconds (50k × 3k, 200k × 5k; null: not run by the peers). */
const SQUIDPY: Record<string, [number, number | null]> = {
  "spatial_neighbors(delaunay)": [0.43, 2.05],
  "spatial_neighbors(knn=6)": [0.15, 1.26],
  "spatial_neighbors(radius=20)": [0.483, 3.22],
  "spatial_autocorr(moran)": [26.4, 99.0],
  "spatial_autocorr(geary)": [27.9, 97],
  nhood_enrichment: [2.32, 13.7],
  interaction_matrix: [0.0151, 0.066],
  centrality_scores: [7.87, 42.4],
  co_occurrence: [86.6, null],
  "ripley(L)": [29.2, null],
  ligrec: [27.6, 74.4],
};

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "50k,200k" },
    data: { type: "string", default: "/tmp/bench-data" },
    skip: { type: "string", default: "" },
  },
});
const skip = new Set((values.skip ?? "").split(",").filter(Boolean));

function apply(sd: SpatialData, c: Change): SpatialData {
  return applyChange(sd, c).sdata;
}

/** Steps whose first run took less CPU than this are timed again, warm (see `run`). */
const WARM_BELOW_CPU_S = 5;

/** Wall seconds and CPU seconds (every thread of the process) of one step. */
async function timed(f: () => Promise<Change>): Promise<{ s: number; cpu: number; change: Change }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const change = await f();
  const c = process.cpuUsage(c0);
  return { s: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6, change };
}

for (const size of (values.sizes ?? "").split(",").filter(Boolean)) {
  const col = size === "50k" ? 0 : 1;
  const file = join(values.data as string, `synth_${size}.h5ad`);
  if (!existsSync(file)) {
    console.log(
      `${file}: missing; generate it with ../shared/bench/gen_data.py (see the header of this file)`,
    );
    continue;
  }
  const pairs = readFileSync(join(values.data as string, `synth_${size}_lr_pairs.csv`), "utf8")
    .split("\n")
    .slice(1)
    .filter((l) => l.length > 0)
    .map((l) => l.split(","));
  const { table } = await readH5ad(file);
  let sd = makeSpatialData({ tables: { table } });
  const ctx = benchCtx();
  sd = apply(sd, await normalize_total(sd, {}, ctx));
  sd = apply(sd, await log1p(sd, {}, ctx));
  sd = apply(sd, await highly_variable_genes(sd, { flavor: "seurat", n_top_genes: 1000 }, ctx));
  const t = sd.tables.table!;
  const disp = (t.var.columns.dispersions_norm as DenseArray).data as unknown as ArrayLike<number>;
  const names = t.var.index.values;
  const genes = Array.from({ length: names.length }, (_, j) => j)
    .filter((j) => !Number.isNaN(disp[j]))
    .sort((a, b) => (disp[b] as number) - (disp[a] as number))
    .slice(0, 100)
    .map((j) => names[j] as string);
  const n = names.length ? t.obs.index.values.length : 0;
  console.log(`\n${size}: ${n} cells × ${names.length} genes, ${BENCH_THREADS} thread(s)`);
  // The machine may be shared: the load average says how much of the CPU the wall figures had. CPU
  // seconds (all threads) do not grow with other processes' load the way wall seconds do.
  console.log(
    `load average ${loadavg()
      .map((v) => v.toFixed(1))
      .join(" ")}`,
  );
  console.log("| step | squidpy s | Tessera wall s | Tessera CPU s | wall ratio |");
  console.log("|---|---|---|---|---|");
  const run = async (label: string, f: () => Promise<Change>, keep = false) => {
    if (skip.has(label.replace(/\(.*$/, ""))) return;
    let { s, cpu, change } = await timed(f);
    // squidpy's figures are warm (numba compiled beforehand): a short step runs again, warm, and
    // that run is reported (a long one's first-call compilation is a negligible share of it).
    if (cpu < WARM_BELOW_CPU_S) ({ s, cpu, change } = await timed(f));
    const ref = SQUIDPY[label]?.[col];
    console.log(
      `| ${label} | ${ref ?? "—"} | ${s.toFixed(3)} | ${cpu.toFixed(3)} | ${ref ? (s / ref).toFixed(2) : "—"} |`,
    );
    if (keep) sd = apply(sd, change);
  };
  await run("spatial_neighbors(delaunay)", () =>
    spatial_neighbors(sd, { coord_type: "generic", delaunay: true }, ctx),
  );
  await run("spatial_neighbors(radius=20)", () =>
    spatial_neighbors(sd, { coord_type: "generic", radius: 20 }, ctx),
  );
  await run(
    "spatial_neighbors(knn=6)",
    () => spatial_neighbors(sd, { coord_type: "generic", n_neighs: 6 }, ctx),
    true,
  );
  await run("spatial_autocorr(moran)", () =>
    spatial_autocorr(sd, { mode: "moran", genes, n_perms: 100, seed: 0 }, ctx),
  );
  await run("spatial_autocorr(geary)", () =>
    spatial_autocorr(sd, { mode: "geary", genes, n_perms: 100, seed: 0 }, ctx),
  );
  await run("nhood_enrichment", () =>
    nhood_enrichment(sd, { cluster_key: "cell_type", n_perms: 1000, seed: 0 }, ctx),
  );
  await run("interaction_matrix", () => interaction_matrix(sd, { cluster_key: "cell_type" }, ctx));
  await run("centrality_scores", () => centrality_scores(sd, { cluster_key: "cell_type" }, ctx));
  if (col === 0) {
    await run("co_occurrence", () => co_occurrence(sd, { cluster_key: "cell_type" }, ctx));
    await run("ripley(L)", () => ripley(sd, { cluster_key: "cell_type", mode: "L", seed: 0 }, ctx));
  }
  await run("ligrec", () =>
    ligrec(
      sd,
      { cluster_key: "cell_type", interactions: pairs, use_raw: false, n_perms: 1000, seed: 0 },
      ctx,
    ),
  );
  console.log(
    `peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB; load average ${loadavg()
      .map((v) => v.toFixed(1))
      .join(" ")}`,
  );
}

/**
 * Benchmark of the `sc.pp` preprocessing operations, run in scanpy's order on generated raw counts
 * (`generateLargeTable(n, genes)`): calculate_qc_metrics (qc_vars mt), filter_cells + filter_genes,
 * normalize_total, log1p, highly_variable_genes (seurat, n_top_genes 1000), scale on the dense HVG
 * subset (max_value 10), and highly_variable_genes(seurat_v3) on the counts. Prints seconds per step
 * beside scanpy's time from `../shared/bench/README.md`, and the RSS. Never passes or fails.
 *
 * Run: `npx tsx bench/scanpy-pp.ts [--cells 10000,100000] [--genes 2000] [--seed 0]`.
 *
 * scanpy's figures: the 10k column is measured at 10,000 × 2,000 (the same shape). For 100k cells ×
 * 2,000 genes there is no measured figure; it is estimated from the 50,000 × 3,000 column scaled by the
 * number of non-zeros (×2 cells, ×2/3 genes = ×4/3), which is how these steps grow.
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { highly_variable_genes } from "../src/plugins/scanpy/pp/highly-variable-genes.js";
import { normalize_total } from "../src/plugins/scanpy/pp/normalization.js";
import { calculate_qc_metrics } from "../src/plugins/scanpy/pp/qc.js";
import { scale } from "../src/plugins/scanpy/pp/scale.js";
import { filter_cells, filter_genes, log1p } from "../src/plugins/scanpy/pp/simple.js";
import { allocArray, type DenseArray, type SparseMatrix } from "../src/sdk/data/arrays.js";
import { applyChange, type Change } from "../src/sdk/data/change.js";
import { withColumn } from "../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { makeTable, updateTable } from "../src/sdk/data/table.js";
import { benchCtx } from "./context.js";
import { generateLargeTable } from "./generate.js";

const { values: args } = parseArgs({
  options: {
    cells: { type: "string", default: "10000,100000" },
    genes: { type: "string", default: "2000" },
    seed: { type: "string", default: "0" },
  },
});
const SIZES = String(args.cells).split(",").map(Number);
const GENES = Number(args.genes);

/** scanpy 1.12.3 seconds: [10k × 2k measured, 50k × 3k measured]. */
const SCANPY: Record<string, [number, number] | null> = {
  calculate_qc_metrics: [0.175, 1.43],
  "filter_cells+filter_genes": [0.0671, 0.983],
  normalize_total: [0.0068, 0.0591],
  log1p: [0.0024, 0.0176],
  "highly_variable_genes(seurat)": [0.0266, 0.519],
  "scale(HVG, dense)": [0.245, 2.09],
  "highly_variable_genes(seurat_v3)": null,
};

const ctx = benchCtx;

function scanpyFigure(step: string, cells: number): string {
  const f = SCANPY[step];
  if (!f) return "—";
  if (cells === 10_000 && GENES === 2000) return f[0].toFixed(4);
  // Scale the 50k × 3k figure by non-zeros.
  const est = f[1] * (cells / 50_000) * (GENES / 3000);
  return `~${est.toFixed(3)} (est.)`;
}

async function timed(
  label: string,
  cells: number,
  sd: SpatialData,
  f: () => Promise<Change>,
): Promise<SpatialData> {
  const t0 = performance.now();
  const change = await f();
  const out = applyChange(sd, change).sdata;
  const s = (performance.now() - t0) / 1000;
  const rss = process.memoryUsage().rss / 2 ** 20;
  console.log(
    `${label.padEnd(34)} ${s.toFixed(4).padStart(9)} s   scanpy ${scanpyFigure(label, cells).padStart(16)}   rss ${rss.toFixed(0)} MB`,
  );
  return out;
}

for (const n of SIZES) {
  const t0 = performance.now();
  let table = generateLargeTable(n, GENES, Number(args.seed));
  // A mitochondrial flag for qc_vars: the first 13 genes, as a panel of MT- genes would be.
  const mt = allocArray("bool", GENES) as Uint8Array;
  mt.fill(1, 0, Math.min(13, GENES));
  table = updateTable(table, {
    var: withColumn(table.var, "mt", { kind: "dense", dtype: "bool", shape: [GENES], data: mt }),
  });
  const x = table.X as SparseMatrix;
  console.log(
    `\n${n.toLocaleString("en")} cells × ${GENES.toLocaleString("en")} genes, ${x.data.length.toLocaleString("en")} non-zeros (generated in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  console.log(`${"step".padEnd(34)} ${"tessera".padStart(9)}     ${"scanpy s".padStart(16)}`);
  const counts = makeSpatialData({ tables: { table } });
  let sd = counts;
  sd = await timed("calculate_qc_metrics", n, sd, () => calculate_qc_metrics(sd, { qc_vars: ["mt"] }, ctx()));
  {
    const t1 = performance.now();
    sd = applyChange(sd, await filter_cells(sd, { min_genes: 20 }, ctx())).sdata;
    sd = applyChange(sd, await filter_genes(sd, { min_cells: 10 }, ctx())).sdata;
    const s = (performance.now() - t1) / 1000;
    console.log(
      `${"filter_cells+filter_genes".padEnd(34)} ${s.toFixed(4).padStart(9)} s   scanpy ${scanpyFigure("filter_cells+filter_genes", n).padStart(16)}   rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`,
    );
  }
  sd = await timed("normalize_total", n, sd, () => normalize_total(sd, {}, ctx()));
  sd = await timed("log1p", n, sd, () => log1p(sd, {}, ctx()));
  sd = await timed("highly_variable_genes(seurat)", n, sd, () =>
    highly_variable_genes(sd, { n_top_genes: 1000 }, ctx()),
  );
  // scanpy's bench scales a dense copy of the HVG subset: make that copy outside the timing.
  const hvSd = applyChange(
    sd,
    await highly_variable_genes(sd, { n_top_genes: 1000, subset: true }, ctx()),
  ).sdata;
  const hx = hvSd.tables.table!.X as SparseMatrix;
  const [rows, cols] = hx.shape;
  const denseData = allocArray("float32", rows * cols) as Float32Array;
  for (let i = 0; i < rows; i++)
    for (let k = hx.indptr[i]!; k < hx.indptr[i + 1]!; k++)
      denseData[i * cols + hx.indices[k]!] = hx.data[k] as number;
  const denseX: DenseArray = { kind: "dense", dtype: "float32", shape: [rows, cols], data: denseData };
  const t = hvSd.tables.table!;
  const denseSd = makeSpatialData({ tables: { table: makeTable({ X: denseX, obs: t.obs, var: t.var }) } });
  await timed("scale(HVG, dense)", n, denseSd, () => scale(denseSd, { max_value: 10 }, ctx()));
  await timed("highly_variable_genes(seurat_v3)", n, counts, () =>
    highly_variable_genes(counts, { flavor: "seurat_v3", n_top_genes: 2000 > GENES ? GENES : 1000 }, ctx()),
  );
}

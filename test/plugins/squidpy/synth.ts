/**
 * The reference pipeline's table for squidpy's `gr` calls: synth_10k filtered to the kept cells and
 * genes, normalize_total to the median total and log1p (float32 arithmetic as scanpy does), with obs
 * `cell_type` and obsm `spatial`; and readers for the reference CSVs.
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { allocArray, type Categorical, type SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { applyChange, type Change } from "../../../src/sdk/data/change.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable, type Table } from "../../../src/sdk/data/table.js";
import { readH5ad } from "../../../src/sdk/io/anndata/read-h5ad.js";
import { reference } from "../../fixtures.js";

/** Lines of a reference file (gunzipped when it ends in .gz). */
export function refLines(file: string): string[] {
  const raw = readFileSync(reference(`synth_10k/scanpy-squidpy/${file}`));
  const text = file.endsWith(".gz") ? gunzipSync(raw).toString("utf8") : raw.toString("utf8");
  return text.split("\n").filter((l) => l.length > 0);
}

/** A CSV with a header and an index column: header names and rows [index, numbers...]. */
export function refCsv(file: string): { header: string[]; rows: { name: string; values: number[] }[] } {
  const [head, ...rest] = refLines(file);
  const header = head!.split(",").slice(1);
  return {
    header,
    rows: rest.map((l) => {
      const [name, ...v] = l.split(",");
      return { name: name!, values: v.map(Number) };
    }),
  };
}

function names(file: string): string[] {
  return refLines(file)
    .slice(1)
    .map((l) => l.replace(/^"|"$/g, ""));
}

let cached: Promise<Table> | null = null;

/** The lognormalised, filtered synth_10k table (read once per test file). */
export function synthTable(): Promise<Table> {
  cached ??= build();
  return cached;
}

async function build(): Promise<Table> {
  const { table } = await readH5ad(reference("synth_10k/input.h5ad"));
  const X = (await loadMatrix(table.X!)) as SparseMatrix;
  const keptObs = names("kept_obs_names.csv");
  const keptVar = names("kept_var_names.csv");
  const obsAt = new Map(table.obs.index.values.map((n, i) => [n!, i]));
  const varAt = new Map(table.var.index.values.map((n, i) => [n!, i]));
  const colMap = new Int32Array(X.shape[1]).fill(-1);
  keptVar.forEach((g, j) => {
    colMap[varAt.get(g)!] = j;
  });
  const rows = keptObs.map((c) => obsAt.get(c)!);
  let nnz = 0;
  for (const r of rows)
    for (let p = X.indptr[r]!; p < X.indptr[r + 1]!; p++) if (colMap[X.indices[p]!]! >= 0) nnz++;
  const data = allocArray("float32", nnz) as Float32Array;
  const indices = allocArray("int32", nnz) as Int32Array;
  const indptr = allocArray("int32", rows.length + 1) as Int32Array;
  const totals = new Float32Array(rows.length);
  let q = 0;
  rows.forEach((r, i) => {
    let s = 0;
    for (let p = X.indptr[r]!; p < X.indptr[r + 1]!; p++) {
      const j = colMap[X.indices[p]!]!;
      if (j < 0) continue;
      data[q] = X.data[p] as number;
      indices[q++] = j;
      s += X.data[p] as number;
    }
    totals[i] = s;
    indptr[i + 1] = q;
  });
  const median = Float32Array.from(totals).sort()[(totals.length - 1) / 2]!;
  for (let i = 0; i < rows.length; i++) {
    const f = Math.fround(totals[i]! / median);
    for (let p = indptr[i]!; p < indptr[i + 1]!; p++)
      data[p] = Math.fround(Math.log1p(Math.fround(data[p]! / f)));
  }
  const ct = table.obs.columns.cell_type as Categorical;
  const cellType: Categorical = { ...ct, codes: Int32Array.from(rows, (r) => ct.codes[r]!) };
  const sp = (await loadMatrix(table.obsm.spatial as never)) as unknown as { data: Float64Array };
  const spatial = allocArray("float64", rows.length * 2) as Float64Array;
  rows.forEach((r, i) => {
    spatial[2 * i] = sp.data[2 * r]!;
    spatial[2 * i + 1] = sp.data[2 * r + 1]!;
  });
  return makeTable({
    X: { kind: "csr", dtype: "float32", shape: [rows.length, keptVar.length], data, indices, indptr },
    obs: dataFrame(keptObs, { cell_type: cellType }),
    var: dataFrame(keptVar, {}),
    obsm: { spatial: { kind: "dense", dtype: "float64", shape: [rows.length, 2], data: spatial } },
  });
}

/** A SpatialData holding `t` as table "table". */
export function sdOf(t: Table): SpatialData {
  return makeSpatialData({ tables: { table: t } });
}

/** `sd` with `change` applied. */
export function applied(sd: SpatialData, change: Change): SpatialData {
  return applyChange(sd, change).sdata;
}

/** Test operations on data: big results, shared-memory evidence, rasters, column sums. */
import { type DenseArray, dense, strings } from "../../../../src/sdk/data/arrays.js";
import type { Change } from "../../../../src/sdk/data/change.js";
import { dataFrame, withColumn } from "../../../../src/sdk/data/dataframe.js";
import { lazyMatrix } from "../../../../src/sdk/data/lazy.js";
import { makeSpatialData, type SpatialData } from "../../../../src/sdk/data/spatialdata.js";
import { makeTable, updateTable } from "../../../../src/sdk/data/table.js";
import type { OpContext } from "../../../../src/sdk/jobs/operation.js";

/** A Change carrying a big obsm matrix (private buffer, moved back) and an obs column. */
export function bigChange(sd: SpatialData, params: { cols: number }, ctx: OpContext): Change {
  const t = sd.tables[ctx.table]!;
  const n = t.obs.index.values.length;
  const emb = new Float32Array(n * params.cols);
  for (let i = 0; i < emb.length; i++) emb[i] = i * 0.5;
  const score = new Float64Array(n);
  for (let i = 0; i < n; i++) score[i] = i + 0.25;
  return {
    tables: { [ctx.table]: { obsm: { X_big: dense(emb, [n, params.cols]) }, obs: { score: dense(score) } } },
  };
}

/**
 * Reports what the worker sees of `uns.big` (a SAB-backed matrix) and writes a marker byte into
 * `uns.scratch` (a small SAB-backed scratch array that only tests own).
 */
export function probeShared(sd: SpatialData, params: { marker: number }, ctx: OpContext): unknown {
  const uns = sd.tables[ctx.table]!.uns.entries;
  const big = uns.big as DenseArray<Float64Array>;
  const scratch = uns.scratch as DenseArray<Uint8Array>;
  scratch.data[0] = params.marker;
  let sum = 0;
  for (let i = 0; i < big.data.length; i += 4096) sum += big.data[i]!;
  return {
    shared: big.data.buffer instanceof SharedArrayBuffer,
    scratchShared: scratch.data.buffer instanceof SharedArrayBuffer,
    bytes: big.data.byteLength,
    sum,
    rssMb: process.memoryUsage().rss / 2 ** 20,
  };
}

/** Reads pixels of every image level it can, and records the error of those it cannot. */
export async function readRasters(sd: SpatialData): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, img] of Object.entries(sd.images)) {
    try {
      const px = await img.levels[0]!.source.read();
      out[name] = Array.from(px.data as Uint16Array).slice(0, 4);
    } catch (e) {
      out[name] = `error: ${(e as Error).message}`;
    }
  }
  return out;
}

/** Sums the X matrix of the active table (CSR or dense) and returns counts per cell as a change. */
export function sumX(sd: SpatialData, _params: unknown, ctx: OpContext): Change {
  const t = sd.tables[ctx.table]!;
  const X = t.X;
  if (!X || X.kind === "lazy") throw new Error("X is not loaded");
  const n = X.shape[0]!;
  const totals = new Float64Array(n);
  if (X.kind === "csr") {
    const { data, indptr } = X;
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let k = indptr[r]!; k < indptr[r + 1]!; k++) s += data[k] as number;
      totals[r] = s;
    }
  } else if (X.kind === "dense") {
    const m = X.shape[1]!;
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let c = 0; c < m; c++) s += X.data[r * m + c] as number;
      totals[r] = s;
    }
  } else throw new Error(`unsupported X layout ${X.kind}`);
  return { tables: { [ctx.table]: { obs: { sum_counts: dense(totals) } } } };
}

/** Reads the obs names (decoding them in the worker) and adds a big new string column. */
export function relabel(sd: SpatialData, _params: unknown, ctx: OpContext): Change {
  const t = sd.tables[ctx.table]!;
  const names = t.obs.index.values;
  const label = strings(names.map((n, i) => (i % 7 === 0 ? null : `${n}→é`)));
  return { replaceTables: { [ctx.table]: updateTable(t, { obs: withColumn(t.obs, "label", label) }) } };
}

/** Returns the table's obs without reading its names. */
export function sameObs(sd: SpatialData, _params: unknown, ctx: OpContext): unknown {
  return { obs: sd.tables[ctx.table]!.obs };
}

/** A reader: returns a SpatialData holding a lazy matrix and a store-like raster source (functions). */
export async function fakeRead(
  _sd: SpatialData,
  params: { n: number },
  ctx: OpContext,
): Promise<SpatialData> {
  ctx.progress(0.5, "opening");
  ctx.log("reading");
  const n = params.n;
  const X = lazyMatrix({ format: "dense", dtype: "float64", shape: [n, 1] }, async () =>
    dense(
      Float64Array.from({ length: n }, (_, i) => i),
      [n, 1],
    ),
  );
  const table = makeTable({
    X,
    obs: dataFrame(Array.from({ length: n }, (_, i) => `r${i}`)),
    var: dataFrame(["g"]),
  });
  return makeSpatialData({ tables: { table } });
}

/** A reader that waits for its signal. */
export async function slowRead(_sd: SpatialData, _params: unknown, ctx: OpContext): Promise<SpatialData> {
  await new Promise((_, reject) =>
    ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true }),
  );
  return makeSpatialData();
}

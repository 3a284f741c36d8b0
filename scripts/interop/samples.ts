/**
 * A small sample of values from each element, as Tessera reads them, for `check.py` to compare with what Python
 * reads from Tessera's output: the top-left block of X, the first rows of obs/var/obsm, a corner of each raster's
 * finest level, the first points.
 */
import type { AxisSelection } from "../../src/sdk/data/elements.js";
import { type Column, columnValue, type DataFrame } from "../../src/sdk/data/dataframe.js";
import { loadMatrix, type MatrixSlot } from "../../src/sdk/data/lazy.js";
import type { SpatialData } from "../../src/sdk/data/spatialdata.js";

/** Rows and columns sampled from each matrix and frame. */
const N = 5;

type Scalar = string | number | boolean | null;

function scalar(v: ReturnType<typeof columnValue>): Scalar {
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number" && !Number.isFinite(v)) return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
  return v;
}

function frameSample(df: DataFrame): { index: string[]; columns: Record<string, Scalar[]> } {
  const n = Math.min(N, df.index.values.length);
  const columns: Record<string, Scalar[]> = {};
  for (const name of df.columnOrder) {
    const col: Column = df.columns[name]!;
    if (col.kind === "dense" && col.shape.length > 1) continue;
    columns[name] = Array.from({ length: n }, (_, i) => scalar(columnValue(col, i)));
  }
  return { index: df.index.values.slice(0, n).map(String), columns };
}

/** The top-left `rows × cols` block of a matrix, dense, row-major. */
async function matrixBlock(slot: MatrixSlot, rows = N, cols = N): Promise<{ shape: number[]; values: Scalar[] }> {
  const m = await loadMatrix(slot);
  const [r, c] = [Math.min(rows, m.shape[0]!), Math.min(cols, m.shape[1] ?? 1)];
  const out = new Array<number>(r * c).fill(0);
  if (m.kind === "dense") {
    const width = m.shape[1] ?? 1;
    for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[i * c + j] = Number(m.data[i * width + j]);
  } else {
    const major = m.kind === "csr" ? r : c;
    for (let a = 0; a < major; a++) {
      for (let k = Number(m.indptr[a]); k < Number(m.indptr[a + 1]); k++) {
        const b = Number(m.indices[k]);
        const [i, j] = m.kind === "csr" ? [a, b] : [b, a];
        if (i < r && j < c) out[i * c + j] = Number(m.data[k]);
      }
    }
  }
  return { shape: [r, c], values: out.map((v) => scalar(v)) };
}

/** A corner of the finest level: the first 2 of every leading axis, 4 × 4 pixels in y and x. */
async function rasterCorner(level: {
  shape: readonly number[];
  source: { read(sel?: readonly AxisSelection[]): Promise<{ data: ArrayLike<number | bigint> }> };
}) {
  const sel: [number, number][] = level.shape.map((n, i) => [0, Math.min(i < level.shape.length - 2 ? 2 : 4, n)]);
  const block = await level.source.read(sel);
  return { selection: sel, values: Array.from(block.data, (v) => Number(v)) };
}

/** Samples of every element of `sd`, keyed like the inventory. */
export async function valueSamples(sd: SpatialData): Promise<Record<string, unknown>> {
  const tables: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(sd.tables)) {
    const obsm: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(t.obsm)) obsm[k] = v.kind === "dataframe" ? frameSample(v) : await matrixBlock(v, N, 3);
    tables[name] = {
      X: t.X ? await matrixBlock(t.X) : null,
      obs: frameSample(t.obs),
      var: frameSample(t.var),
      obsm,
    };
  }
  const rasters = async (rec: SpatialData["images"] | SpatialData["labels"]) => {
    const out: Record<string, unknown> = {};
    for (const [name, el] of Object.entries(rec)) out[name] = await rasterCorner(el.levels[0]!);
    return out;
  };
  const points: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(sd.points)) points[name] = frameSample(p.frame);
  return { tables, images: await rasters(sd.images), labels: await rasters(sd.labels), points };
}

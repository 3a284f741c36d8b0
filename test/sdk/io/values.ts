/**
 * Materialise every value of a SpatialData object into plain, comparable data (lazy matrices loaded,
 * level-0 pixels read), so two objects can be compared with `toEqual` after a write/read round trip.
 */
import type { DenseArray, SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { type Column, columnValue, type DataFrame } from "../../../src/sdk/data/dataframe.js";
import type { ImageElement, LabelsElement } from "../../../src/sdk/data/elements.js";
import { loadMatrix, type MatrixSlot } from "../../../src/sdk/data/lazy.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { isUnsDict, type UnsValue } from "../../../src/sdk/data/uns.js";

const num = (v: unknown) => (typeof v === "bigint" ? Number(v) : v);

function frame(df: DataFrame) {
  return {
    index: [...df.index.values],
    columns: Object.fromEntries(
      df.columnOrder.map((c) => {
        const col: Column = df.columns[c]!;
        const n =
          col.kind === "dense"
            ? col.data.length
            : col.kind === "string"
              ? col.values.length
              : col.kind === "nullable"
                ? col.data.length
                : col.codes.length;
        return [c, Array.from({ length: n }, (_, i) => num(columnValue(col, i)))];
      }),
    ),
  };
}

/** Dense row-major numbers of a matrix (sparse densified: fixtures are small). */
function matrixValues(m: DenseArray | SparseMatrix): { shape: number[]; values: number[] } {
  if (m.kind === "dense")
    return {
      shape: [...m.shape],
      values: Array.from(m.data as ArrayLike<number | bigint>, (v) => Number(v)),
    };
  const [r, c] = m.shape;
  const out = new Array<number>(r * c).fill(0);
  const major = m.kind === "csr" ? r : c;
  for (let a = 0; a < major; a++) {
    for (let k = Number(m.indptr[a]); k < Number(m.indptr[a + 1]); k++) {
      const b = Number(m.indices[k]);
      const [i, j] = m.kind === "csr" ? [a, b] : [b, a];
      out[i * c + j] = Number(m.data[k]);
    }
  }
  return { shape: [r, c], values: out };
}

async function slot(s: MatrixSlot | DataFrame) {
  if (s.kind === "dataframe") return frame(s);
  return matrixValues(await loadMatrix(s));
}

async function uns(v: UnsValue): Promise<unknown> {
  if (v === null || typeof v !== "object") return num(v);
  if (isUnsDict(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v.entries)) out[k] = await uns(x);
    return out;
  }
  if (v.kind === "dataframe") return frame(v);
  if (v.kind === "dense" || v.kind === "csr" || v.kind === "csc") return matrixValues(v);
  if (v.kind === "string") return [...v.values];
  const col = v as Column & { kind: "nullable" | "categorical" };
  const n = col.kind === "nullable" ? col.data.length : col.codes.length;
  return Array.from({ length: n }, (_, i) => num(columnValue(col, i)));
}

/** Every value of `sd`, materialised. */
export async function materialise(sd: SpatialData): Promise<unknown> {
  const tables: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(sd.tables)) {
    const rec = async (r: Readonly<Record<string, MatrixSlot | DataFrame>>) =>
      Object.fromEntries(
        await Promise.all(Object.entries(r).map(async ([k, v]) => [k, await slot(v)] as const)),
      );
    tables[name] = {
      X: t.X ? await slot(t.X) : null,
      obs: frame(t.obs),
      var: frame(t.var),
      obsm: await rec(t.obsm),
      varm: await rec(t.varm),
      obsp: await rec(t.obsp),
      varp: await rec(t.varp),
      layers: await rec(t.layers),
      uns: await uns(t.uns),
      raw: t.raw ? { X: await slot(t.raw.X), var: frame(t.raw.var) } : null,
      annotation: t.annotation,
    };
  }
  const rasters = async (rec: Readonly<Record<string, ImageElement | LabelsElement>>) => {
    const out: Record<string, unknown> = {};
    for (const [name, el] of Object.entries(rec)) {
      out[name] = {
        axes: el.axes,
        dtype: el.dtype,
        shapes: el.levels.map((l) => [...l.shape]),
        level0: Array.from((await el.levels[0]!.source.read()).data as ArrayLike<number | bigint>, Number),
        transformations: el.transformations,
      };
    }
    return out;
  };
  return {
    tables,
    images: await rasters(sd.images),
    labels: await rasters(sd.labels),
    points: Object.fromEntries(
      Object.entries(sd.points).map(([n, p]) => [
        n,
        { frame: frame(p.frame), axes: p.axes, featureKey: p.featureKey, transformations: p.transformations },
      ]),
    ),
    shapes: Object.fromEntries(
      Object.entries(sd.shapes).map(([n, s]) => [
        n,
        {
          frame: frame(s.frame),
          type: s.geometry.type,
          coords: [...s.geometry.coords],
          geomOffsets: s.geometry.geomOffsets ? [...s.geometry.geomOffsets] : null,
          polygonOffsets: s.geometry.polygonOffsets ? [...s.geometry.polygonOffsets] : null,
          ringOffsets: s.geometry.ringOffsets ? [...s.geometry.ringOffsets] : null,
          transformations: s.transformations,
        },
      ]),
    ),
  };
}

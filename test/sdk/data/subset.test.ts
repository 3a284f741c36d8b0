import { describe, expect, it } from "vitest";
import type {
  Categorical,
  DenseArray,
  Matrix,
  SparseMatrix,
  StringArray,
} from "../../../src/sdk/data/arrays.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { selectInPolygons } from "../../../src/sdk/data/polygon-select.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import {
  geometryRows,
  subsetCoordinateSystem,
  subsetSpatialData,
  subsetTableRows,
} from "../../../src/sdk/data/subset.js";
import { makeTable, type Table } from "../../../src/sdk/data/table.js";
import { defaultAxes } from "../../../src/sdk/data/transforms.js";
import { unsDict } from "../../../src/sdk/data/uns.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { toCsc } from "../../../src/sdk/math/sparse.js";

/** A matrix as rows of plain numbers (the oracle's view). */
function rowsOf(m: Matrix): number[][] {
  const [r, c] = m.shape as [number, number];
  const out = Array.from({ length: r }, () => new Array<number>(c).fill(0));
  if (m.kind === "dense") {
    for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[i]![j] = Number(m.data[i * c + j]);
    return out;
  }
  const outer = m.kind === "csr" ? r : c;
  for (let o = 0; o < outer; o++)
    for (let k = m.indptr[o]!; k < m.indptr[o + 1]!; k++) {
      const inner = m.indices[k]!;
      const [i, j] = m.kind === "csr" ? [o, inner] : [inner, o];
      out[i]![j] = Number(m.data[k]);
    }
  return out;
}

function denseFrom(rows: number[][]): DenseArray {
  return {
    kind: "dense",
    dtype: "float64",
    shape: [rows.length, rows[0]!.length],
    data: Float64Array.from(rows.flat()),
  };
}

function csrFrom(rows: number[][]): SparseMatrix {
  const indptr = [0];
  const indices: number[] = [];
  const data: number[] = [];
  for (const r of rows) {
    r.forEach((v, j) => {
      if (v !== 0) {
        indices.push(j);
        data.push(v);
      }
    });
    indptr.push(indices.length);
  }
  return {
    kind: "csr",
    dtype: "float32",
    shape: [rows.length, rows[0]!.length],
    data: Float32Array.from(data),
    indices: Int32Array.from(indices),
    indptr: Int32Array.from(indptr),
  };
}

const demo = (): SpatialData => generateDemo({ nCells: 120, nGenes: 30, imageSize: 128, nTranscripts: 400 });

/** The demo table with an obsp graph, a CSC layer, an unused-after-subset category and its colours. */
async function richTable(sd: SpatialData): Promise<{ t: Table; graph: number[][] }> {
  const t = sd.tables.table!;
  const n = t.obs.index.values.length;
  const rng = new Rng(3);
  const graph = Array.from({ length: n }, () =>
    Array.from({ length: n }, () => (rng.next() < 0.05 ? rng.next() : 0)),
  );
  const x = await loadMatrix(t.X!);
  const grp: Categorical = {
    kind: "categorical",
    codes: Int32Array.from({ length: n }, (_, i) => (i === 0 ? 2 : i % 2)),
    categories: { kind: "string", shape: [3], values: ["even", "odd", "first"] },
    ordered: false,
  };
  return {
    graph,
    t: makeTable({
      ...t,
      obs: { ...t.obs, columns: { ...t.obs.columns, grp }, columnOrder: [...t.obs.columnOrder, "grp"] },
      obsp: { g: csrFrom(graph) },
      layers: { counts_csc: toCsc(x as SparseMatrix) },
      uns: unsDict({
        ...t.uns.entries,
        grp_colors: { kind: "string", shape: [3], values: ["#000000", "#111111", "#222222"] },
      }),
    }),
  };
}

describe("subsetTableRows", () => {
  it("slices every obs-aligned slot consistently (obsp on both axes, CSC layers, categories and colours)", async () => {
    const sd = demo();
    const { t, graph } = await richTable(sd);
    const n = t.obs.index.values.length;
    const mask = new Uint8Array(n);
    for (let i = 1; i < n; i += 3) mask[i] = 1;
    const keep = [...mask.keys()].filter((i) => mask[i]);
    const s = await subsetTableRows(t, mask);
    expect(s.obs.index.values).toEqual(keep.map((i) => t.obs.index.values[i]));
    const x = rowsOf(await loadMatrix(t.X!));
    expect(rowsOf(await loadMatrix(s.X!))).toEqual(keep.map((i) => x[i]));
    expect(rowsOf(await loadMatrix(s.layers.counts_csc!))).toEqual(keep.map((i) => x[i]));
    const g = rowsOf(await loadMatrix(s.obsp.g!));
    expect(g).toEqual(keep.map((i) => keep.map((j) => Math.fround(graph[i]![j]!))));
    const sp = rowsOf((await loadMatrix(t.obsm.spatial as Matrix)) as Matrix);
    expect(rowsOf(s.obsm.spatial as DenseArray)).toEqual(keep.map((i) => sp[i]));
    // Rows 1, 4, 7 … alternate odd/even; "first" (row 0 only) is dropped with its colour.
    const grp = s.obs.columns.grp as Categorical;
    expect((grp.categories as StringArray).values).toEqual(["even", "odd"]);
    expect((s.uns.entries.grp_colors as StringArray).values).toEqual(["#000000", "#111111"]);
    expect(s.var).toBe(t.var);
    // Keeping everything shares the table.
    expect(await subsetTableRows(t, new Uint8Array(n).fill(1))).toBe(t);
  });

  it("takes dense rows of wider arrays", async () => {
    const rows = [
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ];
    const sd = demo();
    const base = sd.tables.table!;
    const t3 = makeTable({
      obs: {
        ...base.obs,
        index: { kind: "string", shape: [3], values: ["a", "b", "c"] },
        columns: {},
        columnOrder: [],
      },
      var: {
        ...base.var,
        index: { kind: "string", shape: [3], values: ["g1", "g2", "g3"] },
        columns: {},
        columnOrder: [],
      },
      X: denseFrom(rows),
      obsm: { e: denseFrom(rows) },
    });
    const s = await subsetTableRows(t3, Uint8Array.from([1, 0, 1]));
    expect(rowsOf(s.X as Matrix)).toEqual([rows[0], rows[2]]);
    expect(rowsOf(s.obsm.e as Matrix)).toEqual([rows[0], rows[2]]);
  });
});

describe("geometryRows", () => {
  it("keeps the chosen polygons and multipolygons whole", () => {
    const poly = {
      type: "multipolygon" as const,
      coords: Float64Array.from([0, 0, 1, 0, 1, 1, 0, 0, 5, 5, 6, 5, 6, 6, 5, 5, 9, 9, 10, 9, 10, 10, 9, 9]),
      geomOffsets: Int32Array.from([0, 2, 3]),
      polygonOffsets: Int32Array.from([0, 1, 2, 3]),
      ringOffsets: Int32Array.from([0, 4, 8, 12]),
    };
    const second = geometryRows(poly, Int32Array.from([1]));
    expect([...second.coords]).toEqual([9, 9, 10, 9, 10, 10, 9, 9]);
    expect([...second.geomOffsets!]).toEqual([0, 1]);
    const first = geometryRows(poly, Int32Array.from([0]));
    expect([...first.polygonOffsets!]).toEqual([0, 1, 2]);
    expect([...first.ringOffsets!]).toEqual([0, 4, 8]);
  });
});

describe("subsetSpatialData", () => {
  it("by polygon: shapes follow the kept cells, points the polygon, rasters are shared", async () => {
    const sd = demo();
    const t = sd.tables.table!;
    const n = t.obs.index.values.length;
    const sp = (await loadMatrix(t.obsm.spatial as Matrix)) as DenseArray;
    const ring = [
      [10, 10],
      [40, 10],
      [40, 50],
      [10, 50],
    ];
    const mask = selectInPolygons(sp.data as Float64Array, n, [ring]);
    const out = await subsetSpatialData(sd, "table", mask, { polygons: [ring] });
    const kept = out.tables.table!;
    const keptIds = new Set(kept.obs.index.values);
    expect(kept.obs.index.values.length).toBe(mask.reduce((a, b) => a + b, 0));
    expect(kept.obs.index.values.length).toBeGreaterThan(5);
    const shapes = out.shapes.cell_boundaries!;
    expect(new Set(shapes.frame.index.values)).toEqual(keptIds);
    const tx = out.points.transcripts!;
    const xs = tx.frame.columns.x as DenseArray;
    const ys = tx.frame.columns.y as DenseArray;
    for (let i = 0; i < xs.data.length; i++) {
      const x = Number(xs.data[i]);
      const y = Number(ys.data[i]);
      expect(x > 10 && x < 40 && y > 10 && y < 50).toBe(true);
    }
    const all = sd.points.transcripts!.frame.columns;
    let inside = 0;
    for (let i = 0; i < (all.x as DenseArray).data.length; i++) {
      const x = Number((all.x as DenseArray).data[i]);
      const y = Number((all.y as DenseArray).data[i]);
      if (x > 10 && x < 40 && y > 10 && y < 50) inside++;
    }
    expect(xs.data.length).toBe(inside);
    expect(out.images.morphology).toBe(sd.images.morphology);
    expect(out.labels.cell_labels).toBe(sd.labels.cell_labels);
    // Inverted: the complement of the cells, the points outside.
    const inv = mask.map((b) => 1 - b);
    const outside = await subsetSpatialData(sd, "table", inv, { polygons: [ring], invert: true });
    expect(outside.tables.table!.obs.index.values.length).toBe(n - keptIds.size);
    expect(outside.points.transcripts!.frame.index.values.length).toBe(
      sd.points.transcripts!.frame.index.values.length - inside,
    );
  });

  it("maps polygons into the points' own system", async () => {
    const base = demo();
    const xy = defaultAxes(["x", "y"]);
    // Points stored at half scale: intrinsic (x, y) sits at (2x, 2y) in global.
    const p = base.points.transcripts!;
    const half = (c: DenseArray): DenseArray => ({
      ...c,
      data: Float32Array.from(c.data as Float32Array, (v) => v / 2),
    });
    const sd: SpatialData = {
      ...base,
      points: {
        transcripts: {
          ...p,
          frame: {
            ...p.frame,
            columns: {
              ...p.frame.columns,
              x: half(p.frame.columns.x as DenseArray),
              y: half(p.frame.columns.y as DenseArray),
            },
          },
          transformations: {
            global: {
              type: "scale",
              scale: [2, 2],
              input: { name: "xy", axes: xy },
              output: { name: "global", axes: xy },
            },
          },
        },
      },
    };
    const ring = [
      [10, 10],
      [40, 10],
      [40, 50],
      [10, 50],
    ];
    const n = sd.tables.table!.obs.index.values.length;
    const out = await subsetSpatialData(sd, "table", new Uint8Array(n).fill(1), { polygons: [ring] });
    const same = await subsetSpatialData(base, "table", new Uint8Array(n).fill(1), { polygons: [ring] });
    const ids = same.points.transcripts!.frame.index.values;
    expect(ids.length).toBeGreaterThan(10);
    expect(ids.length).toBeLessThan(p.frame.index.values.length);
    expect(out.points.transcripts!.frame.index.values).toEqual(ids);
  });

  it("by rows: points follow their cell through the instance key", async () => {
    const sd = demo();
    const n = sd.tables.table!.obs.index.values.length;
    const mask = new Uint8Array(n);
    mask[3] = mask[4] = mask[50] = 1;
    const out = await subsetSpatialData(sd, "table", mask);
    const ids = out.tables.table!.obs.index.values;
    expect(ids).toHaveLength(3);
    const cell = out.points.transcripts!.frame.columns.cell_id as DenseArray;
    for (const v of cell.data) expect(ids).toContain(String(v));
    expect(out.shapes.cell_boundaries!.frame.index.values).toEqual(ids);
  });
});

describe("subsetCoordinateSystem", () => {
  it("derives the region element's system and checks a requested one", () => {
    const sd = demo();
    expect(subsetCoordinateSystem(sd, "table")).toBe("global");
    expect(subsetCoordinateSystem(sd, "table", "global")).toBe("global");
    expect(() => subsetCoordinateSystem(sd, "table", "nope")).toThrow(/unknown coordinate system "nope"/);
  });
});

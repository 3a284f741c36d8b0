/**
 * A small demo object with one of every field kind the Arrow payloads serve and several shapes
 * elements for the GeoArrow route: string, boolean and nullable obs/var columns, a data-frame obsm
 * entry, a CSR obsp graph, a `counts` layer, a multipolygon element placed by a scale (`nuclei`),
 * circles (`spots`), an `annotations` element, and an element with no path into `global` (`floating`).
 */
import { allocArray, strings } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import type { ShapesElement } from "../../../src/sdk/data/elements.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { defaultAxes } from "../../../src/sdk/data/transforms.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";

const cs = (name: string) => ({ name, axes: defaultAxes(["x", "y"]) });

/** The rich demo (300 cells, 40 genes by default). */
export function richDemo(nCells = 300): SpatialData {
  const sd = generateDemo({ nCells, nGenes: 40, imageSize: 256, nTranscripts: 200 });
  const t = sd.tables.table!;
  const n = nCells;
  const g = t.var.index.values.length;
  const cells = sd.shapes.cell_boundaries!;
  const typeCol = t.obs.columns.cell_type!;
  const labels = Array.from({ length: n }, (_, i) =>
    i === 3
      ? null
      : typeCol.kind === "categorical" && typeCol.categories.kind === "string"
        ? typeCol.categories.values[typeCol.codes[i]!]!
        : "x",
  );
  const flag = allocArray("bool", n) as Uint8Array;
  const nint = allocArray("int32", n) as Int32Array;
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    flag[i] = i % 3 === 0 ? 1 : 0;
    nint[i] = i * 2;
    mask[i] = i % 7 === 0 ? 1 : 0;
  }
  const score = allocArray("float32", g) as Float32Array;
  const hv = allocArray("bool", g) as Uint8Array;
  for (let j = 0; j < g; j++) {
    score[j] = j / 4;
    hv[j] = j % 2;
  }
  // obsp: a ring graph i → i+1, i → i+2 (CSR, sorted).
  const indptr = new Int32Array(n + 1);
  const indices = new Int32Array(2 * n);
  const data = new Float32Array(2 * n);
  for (let i = 0; i < n; i++) {
    indptr[i + 1] = 2 * (i + 1);
    const a = (i + 1) % n;
    const b = (i + 2) % n;
    indices[2 * i] = Math.min(a, b);
    indices[2 * i + 1] = Math.max(a, b);
    data[2 * i] = 0.5;
    data[2 * i + 1] = 0.25 + i / 1000;
  }
  const spatial = t.obsm.spatial!;
  if (spatial.kind !== "dense") throw new Error("fixture: spatial not dense");
  const dfx = new Float64Array(n);
  const dfy = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    dfx[i] = Number(spatial.data[2 * i]) + 1;
    dfy[i] = Number(spatial.data[2 * i + 1]) - 1;
  }
  // nuclei: the cell polygons as multipolygons (one polygon each) in a half-scale intrinsic space,
  // placed back in global by a scale of 2.
  const gc = cells.geometry;
  const half = new Float64Array(gc.coords.length);
  for (let k = 0; k < half.length; k++) half[k] = gc.coords[k]! / 2;
  const polyOffsets = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) polyOffsets[i] = gc.geomOffsets![i]!;
  const nuclei: ShapesElement = {
    kind: "shapes",
    name: "nuclei",
    transformations: {
      global: { type: "scale", scale: [2, 2], input: cs("nuclei_xy"), output: cs("global") },
    },
    geometry: {
      type: "multipolygon",
      coords: half,
      geomOffsets: Int32Array.from({ length: n + 1 }, (_, i) => i),
      polygonOffsets: polyOffsets,
      ringOffsets: gc.ringOffsets!,
    },
    frame: cells.frame,
  };
  const spots: ShapesElement = {
    kind: "shapes",
    name: "spots",
    transformations: cells.transformations,
    geometry: { type: "point", coords: new Float64Array([1, 2, 3, 4]) },
    frame: dataFrame(strings(["a", "b"]), {
      radius: { kind: "dense", dtype: "float64", shape: [2], data: new Float64Array([1, 1]) },
    }),
  };
  const box = (name: string, target: string): ShapesElement => ({
    kind: "shapes",
    name,
    transformations: { [target]: { type: "identity", input: cs(`${name}_xy`), output: cs(target) } },
    geometry: {
      type: "polygon",
      coords: new Float64Array([0, 0, 10, 0, 10, 10, 0, 10]),
      geomOffsets: new Int32Array([0, 1]),
      ringOffsets: new Int32Array([0, 4]),
    },
    frame: dataFrame(strings(["b1"]), {}),
  });
  return applyChange(sd, {
    tables: {
      table: {
        obs: {
          label: strings(labels),
          flag: { kind: "dense", dtype: "bool", shape: [n], data: flag },
          nint: { kind: "nullable", dtype: "int32", data: nint, mask },
        },
        var: {
          score: { kind: "dense", dtype: "float32", shape: [g], data: score },
          hv: { kind: "dense", dtype: "bool", shape: [g], data: hv },
        },
        obsm: {
          X_df: dataFrame(t.obs.index, {
            ax: { kind: "dense", dtype: "float64", shape: [n], data: dfx },
            ay: { kind: "dense", dtype: "float64", shape: [n], data: dfy },
          }),
        },
        obsp: { connectivities: { kind: "csr", dtype: "float32", shape: [n, n], data, indices, indptr } },
        layers: { counts: t.X! },
      },
    },
    shapes: {
      nuclei,
      spots,
      annotations: box("annotations", "global"),
      floating: box("floating", "elsewhere"),
    },
  }).sdata;
}

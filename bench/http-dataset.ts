/**
 * The dataset of the HTTP benchmark: `nCells` cells on a jittered 10 µm lattice with raw counts
 * (`generateLargeTable`), `obsm/spatial`, and a `cells` shapes element of hexagonal boundaries for
 * the first `nPolygons` cells, annotated by the table (region `cells`, instance key `cell_id`), so
 * geoarrow answers carry real `cell_index` values. Deterministic per seed.
 */
import { allocArray, strings } from "../src/sdk/data/arrays.js";
import { dataFrame } from "../src/sdk/data/dataframe.js";
import type { ShapesElement } from "../src/sdk/data/elements.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { updateTable } from "../src/sdk/data/table.js";
import { defaultAxes } from "../src/sdk/data/transforms.js";
import { Rng } from "../src/sdk/math/rng.js";
import { generateLargeTable } from "./generate.js";

/** Lattice spacing of the cells, in micrometres. */
export const CELL_SPACING_UM = 10;

/** Side of the square the cells cover, in micrometres. */
export function tissueSide(nCells: number): number {
  return Math.ceil(Math.sqrt(nCells)) * CELL_SPACING_UM;
}

/** Build the benchmark object (see the module comment). */
export function buildHttpDataset(nCells: number, nGenes: number, nPolygons: number, seed = 0): SpatialData {
  const base = generateLargeTable(nCells, nGenes, seed);
  const rng = new Rng(seed).fork("layout");
  const side = Math.ceil(Math.sqrt(nCells));
  const spatial = allocArray("float64", 2 * nCells) as Float64Array;
  for (let i = 0; i < nCells; i++) {
    spatial[2 * i] = ((i % side) + 0.5 + 0.3 * (rng.nextDouble() - 0.5)) * CELL_SPACING_UM;
    spatial[2 * i + 1] = (Math.floor(i / side) + 0.5 + 0.3 * (rng.nextDouble() - 0.5)) * CELL_SPACING_UM;
  }
  const ids = allocArray("int32", nCells) as Int32Array;
  for (let i = 0; i < nCells; i++) ids[i] = i;
  const table = updateTable(base, {
    obs: dataFrame(base.obs.index, {
      ...base.obs.columns,
      cell_id: { kind: "dense", dtype: "int32", shape: [nCells], data: ids },
      region: {
        kind: "categorical",
        codes: new Int32Array(nCells),
        categories: strings(["cells"]),
        ordered: false,
      },
    }),
    obsm: { spatial: { kind: "dense", dtype: "float64", shape: [nCells, 2], data: spatial } },
    annotation: { region: "cells", regionKey: "region", instanceKey: "cell_id" },
  });
  const n = Math.min(nPolygons, nCells);
  const sides = 6;
  const ringOffsets = allocArray("int32", n + 1) as Int32Array;
  const geomOffsets = allocArray("int32", n + 1) as Int32Array;
  const coords = allocArray("float64", 2 * n * (sides + 1)) as Float64Array;
  const r = 0.45 * CELL_SPACING_UM;
  for (let i = 0; i < n; i++) {
    geomOffsets[i + 1] = i + 1;
    ringOffsets[i + 1] = (i + 1) * (sides + 1);
    const off = i * (sides + 1);
    for (let k = 0; k <= sides; k++) {
      const a = ((k % sides) / sides) * 2 * Math.PI;
      coords[2 * (off + k)] = spatial[2 * i]! + r * Math.cos(a);
      coords[2 * (off + k) + 1] = spatial[2 * i + 1]! + r * Math.sin(a);
    }
  }
  const cells: ShapesElement = {
    kind: "shapes",
    name: "cells",
    transformations: {
      global: {
        type: "identity",
        input: { name: "xy", axes: defaultAxes(["x", "y"]) },
        output: { name: "global", axes: defaultAxes(["x", "y"]) },
      },
    },
    geometry: { type: "polygon", coords, geomOffsets, ringOffsets },
    frame: dataFrame(strings(Array.from({ length: n }, (_, i) => String(i))), {}, "cell_id"),
  };
  return makeSpatialData({ shapes: { cells }, tables: { table } });
}

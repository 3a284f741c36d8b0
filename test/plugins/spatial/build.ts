/** Small hand-built tables for the spatial operations' tests: coordinates, label columns and X. */
import type { Categorical, DenseArray, Matrix } from "../../../src/sdk/data/arrays.js";
import { dense, strings } from "../../../src/sdk/data/arrays.js";
import { type Column, dataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";

/** A categorical column from string labels (null: missing), categories in first-seen order unless given. */
export function cat(labels: readonly (string | null)[], categories?: readonly string[]): Categorical {
  const cats = categories ? [...categories] : [...new Set(labels.filter((l): l is string => l !== null))];
  const codes = Int32Array.from(labels, (l) => (l === null ? -1 : cats.indexOf(l)));
  return { kind: "categorical", codes, categories: strings(cats), ordered: false };
}

/** Options of {@link tableData}. */
export interface TableDataInit {
  readonly obs: Record<string, Column>;
  readonly xy?: readonly (readonly [number, number])[];
  readonly X?: Matrix;
  readonly genes?: readonly string[];
}

/** A SpatialData with one table `table`: obs columns, obsm `spatial`, an optional X. */
export function tableData(init: TableDataInit): SpatialData {
  const first = Object.values(init.obs)[0];
  const n =
    init.xy?.length ??
    (first?.kind === "categorical"
      ? first.codes.length
      : ((first as DenseArray | undefined)?.data.length ?? 0));
  const genes = init.genes ?? [];
  const obsm: Record<string, DenseArray> = {};
  if (init.xy) obsm.spatial = dense(Float64Array.from(init.xy.flat()), [n, 2]);
  const table = makeTable({
    X: init.X ?? null,
    obs: dataFrame(
      Array.from({ length: n }, (_, i) => `c${i}`),
      init.obs,
    ),
    var: dataFrame([...genes], {}),
    obsm,
  });
  return makeSpatialData({ tables: { table } });
}

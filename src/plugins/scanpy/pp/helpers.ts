/**
 * Helpers the `sc.pp` operations that model the data (`regress_out`, `combat`, `scrublet`) share: the
 * matrix they read, the ceiling on densifying it, and obs columns read as numbers or as groups.
 */
import type { DType, Matrix } from "../../../sdk/data/arrays.js";
import { type Column, nRows } from "../../../sdk/data/dataframe.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { Table } from "../../../sdk/data/table.js";

const GIB = 1024 ** 3;

/** Default ceiling for a densified matrix (`max_dense_gib`). */
const DEFAULT_MAX_DENSE_GIB = 8;

/** X or `layers[layer]` of a table, read if lazy. */
export async function matrixOf(t: Table, layer: string | null | undefined, op: string): Promise<Matrix> {
  if (layer) {
    const slot = t.layers[layer];
    if (!slot)
      throw new Error(`${op}: no layer "${layer}" (layers: ${Object.keys(t.layers).join(", ") || "none"})`);
    return loadMatrix(slot);
  }
  if (!t.X) throw new Error(`${op}: the table has no X`);
  return loadMatrix(t.X);
}

/** Refuse to densify an n × m matrix of `bytesPer`-byte values above `maxGib` GiB. */
export function checkDenseSize(
  op: string,
  n: number,
  m: number,
  bytesPer: number,
  maxGib: number | undefined,
): void {
  const limit = (maxGib ?? DEFAULT_MAX_DENSE_GIB) * GIB;
  const need = n * m * bytesPer;
  if (need > limit) {
    throw new Error(
      `${op}: the result is a dense ${n} × ${m} matrix (${(need / GIB).toFixed(2)} GiB), above the limit of ` +
        `${(limit / GIB).toFixed(2)} GiB (max_dense_gib). Subset the genes first (for example to the highly ` +
        "variable ones) or raise max_dense_gib if the machine has the memory.",
    );
  }
}

/** Output float dtype: float64 stays float64 (as numpy keeps it); everything else becomes float32. */
export function outputDtype(dtype: DType): "float32" | "float64" {
  return dtype === "float64" || dtype === "int64" || dtype === "uint64" ? "float64" : "float32";
}

/** An obs column as float64 numbers; categorical or string columns and missing values are refused. */
export function numericObs(t: Table, key: string, op: string): Float64Array {
  const col = t.obs.columns[key];
  if (!col) throw new Error(`${op}: no obs column "${key}" (obs: ${t.obs.columnOrder.join(", ")})`);
  if (col.kind === "dense") {
    const d = col.data;
    return Float64Array.from(d as ArrayLike<number | bigint>, (v) => Number(v));
  }
  if (col.kind === "nullable") {
    for (let i = 0; i < col.mask.length; i++) {
      if (col.mask[i]) throw new Error(`${op}: obs column "${key}" has missing values (row ${i})`);
    }
    return Float64Array.from(col.data as ArrayLike<number | bigint>, (v) => Number(v));
  }
  throw new Error(`${op}: obs column "${key}" is ${col.kind}, not numeric`);
}

/** Group codes of an obs column as pandas' `groupby(observed=True)` orders groups. */
interface Groups {
  /** Group of each row. */
  readonly codes: Int32Array;
  /** Label of each group, in order. */
  readonly labels: string[];
}

/**
 * Groups of an obs column: a categorical's observed categories in category order; strings
 * (categorical after scanpy's `sanitize_anndata`) and numbers by sorted unique value. Missing values
 * are refused (`what` names the role of the column in the message).
 */
export function obsGroups(t: Table, key: string, op: string, what: string): Groups {
  const col = t.obs.columns[key];
  if (!col)
    throw new Error(`${op}: no obs column "${key}" for ${what} (obs: ${t.obs.columnOrder.join(", ")})`);
  const n = nRows(t.obs);
  if (col.kind === "categorical") {
    const nCat = col.categories.kind === "string" ? col.categories.values.length : col.categories.data.length;
    const used = new Int32Array(nCat).fill(-1);
    for (let i = 0; i < n; i++) {
      const c = col.codes[i]!;
      if (c < 0) throw new Error(`${op}: obs column "${key}" (${what}) has a missing value at row ${i}`);
      used[c] = 1;
    }
    const labels: string[] = [];
    for (let c = 0; c < nCat; c++) {
      if (used[c]! < 0) continue;
      used[c] = labels.length;
      labels.push(
        col.categories.kind === "string" ? String(col.categories.values[c]) : String(col.categories.data[c]),
      );
    }
    return { codes: Int32Array.from(col.codes, (c) => used[c]!), labels };
  }
  let values: (string | number)[];
  if (col.kind === "string") {
    values = col.values.map((v, i) => {
      if (v === null) throw new Error(`${op}: obs column "${key}" (${what}) has a missing value at row ${i}`);
      return v;
    });
  } else {
    values = Array.from(numericObs(t, key, op));
  }
  const uniq = [...new Set(values)].sort((a, b) =>
    typeof a === "number" && typeof b === "number"
      ? a - b
      : String(a) < String(b)
        ? -1
        : String(a) > String(b)
          ? 1
          : 0,
  );
  const pos = new Map(uniq.map((v, i) => [v, i]));
  return { codes: Int32Array.from(values, (v) => pos.get(v)!), labels: uniq.map(String) };
}

/** Whether an obs column acts as a categorical (categorical, string or boolean, as pandas/patsy see it). */
export function isCategoricalObs(col: Column): boolean {
  return (
    col.kind === "categorical" || col.kind === "string" || (col.kind !== "nullable" && col.dtype === "bool")
  );
}

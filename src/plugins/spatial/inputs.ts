/**
 * What the spatial operations read from the active table — coordinates from an obsm, labels from a
 * categorical obs column, an expression matrix — with errors that name the missing or malformed field,
 * and how they write labels back. Not an operations module (the plugin descriptor does not list it).
 */
import { allocArray, type Categorical, type Matrix } from "../../sdk/data/arrays.js";
import { loadMatrix } from "../../sdk/data/lazy.js";
import { nObs, type Table } from "../../sdk/data/table.js";
import { categoricalColumn, categoryLabels, stringArray } from "../tessera/tables.js";

export { activeTable } from "../tessera/tables.js";

/** Cell coordinates as the spatial kernels take them: n rows of `dim` float64 values, row-major. */
export interface Coordinates {
  readonly xy: Float64Array;
  readonly n: number;
  readonly dim: number;
}

/**
 * The first two columns of obsm `key` as float64 x, y per cell. Throws naming the key when it is
 * absent, not a dense n × ≥2 array, or holds a value that is not finite.
 */
export async function spatialCoordinates(t: Table, table: string, key: string): Promise<Coordinates> {
  const slot = Object.hasOwn(t.obsm, key) ? t.obsm[key] : undefined;
  if (!slot) throw new Error(`table "${table}" has no obsm "${key}" (spatial coordinates)`);
  if (slot.kind === "dataframe")
    throw new Error(`obsm "${key}" of table "${table}" is a frame, not an array`);
  const m = await loadMatrix(slot);
  if (m.kind !== "dense" || m.shape.length !== 2 || (m.shape[1] ?? 0) < 2)
    throw new Error(`obsm "${key}" of table "${table}" is not a dense n × 2 array of coordinates`);
  const n = m.shape[0]!;
  const w = m.shape[1]!;
  const src = m.data as ArrayLike<number | bigint>;
  const xy = new Float64Array(n * 2);
  for (let i = 0; i < n; i++) {
    for (let d = 0; d < 2; d++) {
      const v = Number(src[i * w + d]);
      if (!Number.isFinite(v))
        throw new Error(`obsm "${key}" of table "${table}" holds ${v} at cell ${i} (column ${d})`);
      xy[i * 2 + d] = v;
    }
  }
  return { xy, n, dim: 2 };
}

/** A categorical obs column's codes (−1: missing) and its category labels. */
export interface Labels {
  readonly key: string;
  readonly codes: Int32Array;
  readonly names: string[];
}

/** The categorical obs column `key` of the table, or an error naming it (and what it is instead). */
export function labelsOf(t: Table, table: string, key: string): Labels {
  const col = categoricalColumn(t, table, key);
  return { key, codes: col.codes, names: categoryLabels(col.categories) };
}

/**
 * A categorical of `codes` (−1: missing) over `names`, on shared memory, as scanpy writes cluster
 * labels (unordered string categories).
 */
export function categoricalOf(codes: ArrayLike<number>, names: readonly string[]): Categorical {
  const out = allocArray("int32", codes.length) as Int32Array;
  out.set(codes as ArrayLike<number>);
  return { kind: "categorical", codes: out, categories: stringArray(names), ordered: false };
}

/** X or the layer `layer` of the table as a resident matrix, or an error naming the missing layer. */
export async function expression(t: Table, table: string, layer: string | null | undefined): Promise<Matrix> {
  if (layer) {
    const slot = Object.hasOwn(t.layers, layer) ? t.layers[layer] : undefined;
    if (!slot) throw new Error(`table "${table}" has no layer "${layer}"`);
    return loadMatrix(slot);
  }
  if (!t.X) throw new Error(`table "${table}" has no X`);
  return loadMatrix(t.X);
}

/** Throw unless `n` matches the table's rows (a guard for columns read from elsewhere). */
export function assertRows(t: Table, table: string, n: number, what: string): void {
  if (n !== nObs(t)) throw new Error(`${what} has ${n} rows, table "${table}" has ${nObs(t)}`);
}

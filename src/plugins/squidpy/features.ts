/**
 * Feature extraction for the squidpy operations: chosen genes of X (or a layer), numeric obs columns,
 * or columns of an obsm matrix, as rows of a dense feature × cell float64 matrix on shared memory.
 * Not an operations module.
 */
import { allocArray, type Matrix } from "../../sdk/data/arrays.js";
import { loadMatrix } from "../../sdk/data/lazy.js";
import { nObs, type Table } from "../../sdk/data/table.js";
import type { FeatureRows } from "../../sdk/math/spatial/autocorr.js";

/** Features and their names. */
export interface NamedFeatures extends FeatureRows {
  readonly names: string[];
}

/** Most features one call may extract (memory: features × cells × 8 bytes). */
export const MAX_FEATURES = 50000;

/** Columns `cols` of a cells × genes matrix as feature rows. */
export function matrixColumns(x: Matrix, cols: readonly number[], n: number): Float64Array {
  const m = cols.length;
  const out = allocArray("float64", m * n) as Float64Array;
  const at = new Int32Array(x.shape[1] as number).fill(-1);
  cols.forEach((c, k) => {
    at[c] = k;
  });
  if (x.kind === "csr") {
    for (let i = 0; i < n; i++) {
      for (let p = Number(x.indptr[i]); p < Number(x.indptr[i + 1]); p++) {
        const k = at[Number(x.indices[p])] as number;
        if (k >= 0) out[k * n + i] = Number(x.data[p]);
      }
    }
  } else if (x.kind === "csc") {
    cols.forEach((c, k) => {
      for (let p = Number(x.indptr[c]); p < Number(x.indptr[c + 1]); p++)
        out[k * n + Number(x.indices[p])] = Number(x.data[p]);
    });
  } else {
    const w = x.shape[1] as number;
    const d = x.data as unknown as ArrayLike<number | bigint>;
    for (let i = 0; i < n; i++)
      cols.forEach((c, k) => {
        out[k * n + i] = Number(d[i * w + c]);
      });
  }
  return out;
}

/**
 * Genes of X, a layer or raw X (`useRaw`, squidpy's `use_raw`: raw's own var names): the named ones,
 * else `highly_variable` (of `var`), else all.
 */
export async function geneFeatures(
  t: Table,
  genes: readonly string[] | null,
  layer: string | null,
  what: string,
  useRaw = false,
): Promise<NamedFeatures> {
  const n = nObs(t);
  if (useRaw && layer) throw new Error(`${what}: use_raw and layer cannot be used together`);
  if (useRaw && !t.raw) throw new Error(`${what}: use_raw=true but the table has no raw`);
  const varFrame = useRaw && t.raw ? (t.raw.var ?? t.var) : t.var;
  const names = varFrame.index.values.map((v) => v ?? "");
  let chosen: string[];
  if (genes) chosen = [...genes];
  else {
    const hv = t.var.columns.highly_variable;
    if (hv && hv.kind === "dense") {
      const d = hv.data as unknown as ArrayLike<number>;
      // Highly variable genes are flagged in var; with raw they are looked up by name there.
      chosen = t.var.index.values.filter((_, j) => Number(d[j]) !== 0).map((v) => v ?? "");
    } else chosen = t.var.index.values.map((v) => v ?? "");
  }
  if (chosen.length > MAX_FEATURES) {
    throw new Error(
      `${what}: ${chosen.length} genes asked for; at most ${MAX_FEATURES} at once (pass genes)`,
    );
  }
  const at = new Map(names.map((g, j) => [g, j]));
  const missing = chosen.filter((g) => !at.has(g));
  if (missing.length) {
    throw new Error(
      `${what}: gene${missing.length > 1 ? "s" : ""} not in var_names: ${missing.slice(0, 10).join(", ")}${missing.length > 10 ? " …" : ""}`,
    );
  }
  let slot = useRaw ? (t.raw?.X ?? null) : t.X;
  if (layer) {
    slot = (Object.hasOwn(t.layers, layer) ? t.layers[layer] : undefined) ?? null;
    if (!slot)
      throw new Error(`${what}: no layer "${layer}" (layers: ${Object.keys(t.layers).join(", ") || "none"})`);
  }
  if (!slot) throw new Error(`${what}: the table has no X`);
  const x = await loadMatrix(slot);
  const cols = chosen.map((g) => at.get(g) as number);
  return { data: matrixColumns(x, cols, n), nFeatures: cols.length, nCells: n, names: chosen };
}

/** Numeric obs columns (the named ones, else all numeric ones). */
export function obsFeatures(t: Table, cols: readonly string[] | null, what: string): NamedFeatures {
  const n = nObs(t);
  const names = cols
    ? [...cols]
    : t.obs.columnOrder.filter((c) => {
        const col = t.obs.columns[c];
        return col?.kind === "dense" && col.dtype !== "bool";
      });
  const data = allocArray("float64", names.length * n) as Float64Array;
  names.forEach((c, k) => {
    const col = Object.hasOwn(t.obs.columns, c) ? t.obs.columns[c] : undefined;
    if (!col) throw new Error(`${what}: no obs column "${c}"`);
    if (col.kind !== "dense") throw new Error(`${what}: obs column "${c}" is ${col.kind}, not numeric`);
    const d = col.data as unknown as ArrayLike<number | bigint>;
    for (let i = 0; i < n; i++) data[k * n + i] = Number(d[i]);
  });
  return { data, nFeatures: names.length, nCells: n, names };
}

/** Columns of obsm `key` (the given indices, else all). */
export async function obsmFeatures(
  t: Table,
  key: string | null,
  ixs: readonly number[] | null,
  what: string,
): Promise<NamedFeatures> {
  if (!key) throw new Error(`${what}: attr="obsm" needs layer (the obsm key)`);
  const slot = Object.hasOwn(t.obsm, key) ? t.obsm[key] : undefined;
  if (!slot) throw new Error(`${what}: no obsm "${key}"`);
  if (slot.kind === "dataframe") throw new Error(`${what}: obsm "${key}" is a data frame, not a matrix`);
  const x = await loadMatrix(slot);
  const width = x.shape.length > 1 ? (x.shape[1] as number) : 1;
  const cols = ixs ? [...ixs] : Array.from({ length: width }, (_, j) => j);
  const bad = cols.find((c) => !Number.isInteger(c) || c < 0 || c >= width);
  if (bad !== undefined) throw new Error(`${what}: obsm "${key}" has ${width} columns; no column ${bad}`);
  const n = nObs(t);
  return { data: matrixColumns(x, cols, n), nFeatures: cols.length, nCells: n, names: cols.map(String) };
}

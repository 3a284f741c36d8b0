/**
 * Reading one field (named by a FieldPath) out of a SpatialData object as a small column table:
 * what `tessera inspect --field` prints as CSV, and the base the service's data route serialises.
 */
import { type DenseArray, numberAt, type SparseMatrix, type StringArray, shortFloat32 } from "./arrays.js";
import { type Column, columnValue, type DataFrame, nRows } from "./dataframe.js";
import { formatFieldPath, parseFieldPath } from "./fieldpath.js";
import { loadMatrix, type MatrixSlot } from "./lazy.js";
import { own } from "./own.js";
import { getElement, type SpatialData } from "./spatialdata.js";
import { nObs, type Table, varIndexOf } from "./table.js";
import { isUnsDict, type UnsValue } from "./uns.js";

/** A cell value of a field table. */
export type FieldValue = string | number | boolean | bigint | null;

/** A field read as named columns over an optional row index. */
export interface FieldTable {
  /** Row labels (cell or gene names), or null when rows have no names (e.g. sparse triplets). */
  readonly index: readonly string[] | null;
  readonly indexName: string;
  /** The columns: each a name and the value at a row. */
  readonly columns: readonly {
    /** Column name (the obs column, the gene, `<key>_<i>` for an obsm component …). */
    readonly name: string;
    /** The value at row `row` (0-based). */
    readonly get: (row: number) => FieldValue;
  }[];
  readonly nRows: number;
}

/** The table a field path addresses: its own `tables:<name>`, else the active table, else the only one. */
export function resolveTable(
  sd: SpatialData,
  name?: string,
  active?: string,
): { name: string; table: Table } {
  const pick = name ?? active;
  if (pick) return { name: pick, table: getElement(sd, "tables", pick) };
  const names = Object.keys(sd.tables);
  if (names.length === 0) throw new Error("the object has no table");
  if (names.length > 1 && !names.includes("table")) {
    throw new Error(`several tables (${names.join(", ")}): name one, as in tables:<name>:obs`);
  }
  const chosen = names.includes("table") ? "table" : names[0]!;
  return { name: chosen, table: sd.tables[chosen]! };
}

function frameTable(df: DataFrame, only?: string): FieldTable {
  const names = only === undefined ? df.columnOrder : [only];
  for (const n of names)
    if (!Object.hasOwn(df.columns, n))
      throw new Error(`no column "${n}" (have: ${df.columnOrder.join(", ")})`);
  return {
    index: df.index.values.map((v) => v ?? ""),
    indexName: df.indexName,
    nRows: nRows(df),
    columns: names.map((n) => {
      const col: Column = df.columns[n]!;
      return { name: n, get: (i: number) => columnValue(col, i) };
    }),
  };
}

function matrixColumns(
  m: DenseArray | SparseMatrix,
  prefix: string,
  index: readonly string[] | null,
  indexName: string,
): FieldTable {
  if (m.kind !== "dense") {
    // Sparse: triplets, never densified.
    const rows: number[] = [];
    const cols: number[] = [];
    const vals: number[] = [];
    const major = m.kind === "csr" ? m.shape[0] : m.shape[1];
    for (let a = 0; a < major; a++) {
      for (let k = numberAt(m.indptr, a); k < numberAt(m.indptr, a + 1); k++) {
        const b = numberAt(m.indices, k);
        rows.push(m.kind === "csr" ? a : b);
        cols.push(m.kind === "csr" ? b : a);
        vals.push(m.dtype === "float32" ? shortFloat32(numberAt(m.data, k)) : numberAt(m.data, k));
      }
    }
    return {
      index: null,
      indexName: "",
      nRows: rows.length,
      columns: [
        { name: "row", get: (i) => rows[i]! },
        { name: "col", get: (i) => cols[i]! },
        { name: "value", get: (i) => vals[i]! },
      ],
    };
  }
  const n = m.shape[0] ?? 0;
  const width = m.shape.length > 1 ? m.shape.slice(1).reduce((p, s) => p * s, 1) : 1;
  return {
    index,
    indexName,
    nRows: n,
    columns: Array.from({ length: width }, (_, j) => ({
      name: width === 1 ? prefix : `${prefix}_${j}`,
      get: (i: number) => {
        const v = m.data[i * width + j]!;
        if (m.dtype === "float32") return shortFloat32(v as number);
        return m.dtype === "bool" ? v !== 0 : (v as number | bigint);
      },
    })),
  };
}

function unsTable(v: UnsValue, name: string): FieldTable {
  if (v === null || typeof v !== "object")
    return { index: null, indexName: "", nRows: 1, columns: [{ name, get: () => v }] };
  if (isUnsDict(v)) {
    const keys = Object.keys(v.entries);
    return {
      index: keys,
      indexName: "key",
      nRows: keys.length,
      columns: [{ name: "kind", get: (i) => describeUns(v.entries[keys[i]!]!) }],
    };
  }
  if (v.kind === "dataframe") return frameTable(v);
  if (v.kind === "dense" || v.kind === "csr" || v.kind === "csc") return matrixColumns(v, name, null, "");
  if (v.kind === "string")
    return {
      index: null,
      indexName: "",
      nRows: v.values.length,
      columns: [{ name, get: (i) => (v as StringArray).values[i] ?? null }],
    };
  const col = v as Column;
  const len = col.kind === "categorical" ? col.codes.length : col.kind === "nullable" ? col.data.length : 0;
  return { index: null, indexName: "", nRows: len, columns: [{ name, get: (i) => columnValue(col, i) }] };
}

function describeUns(v: UnsValue): string {
  if (v === null) return "null";
  if (typeof v !== "object") return typeof v;
  if (isUnsDict(v)) return "dict";
  return v.kind;
}

/**
 * Read the field `path` of `sd` as a column table. Matrices are loaded if lazy; `X:<gene>` reads only
 * that gene's column. `active` names the table used when the path names none.
 */
export async function readField(sd: SpatialData, path: string, active?: string): Promise<FieldTable> {
  const fp = parseFieldPath(path);
  if (fp.kind === "element") {
    if (fp.family === "points") return frameTable(getElement(sd, "points", fp.name).frame);
    if (fp.family === "shapes") return frameTable(getElement(sd, "shapes", fp.name).frame);
    throw new Error(`field ${path}: images and labels are rasters, not tabular fields`);
  }
  const { table } = resolveTable(sd, fp.kind === "table-root" ? fp.table : fp.table, active);
  if (fp.kind === "table-root") return frameTable(table.obs);
  const names = table.obs.index.values.map((v) => v ?? "");
  const { slot, key } = fp;
  const fail = (have: string[]): never => {
    throw new Error(
      `field ${formatFieldPath(fp)}: no ${slot} entry "${key}"${have.length ? ` (have: ${have.slice(0, 20).join(", ")})` : ""}`,
    );
  };
  switch (slot) {
    case "obs":
      return frameTable(table.obs, key);
    case "var":
      return frameTable(table.var, key);
    case "X":
    case "layers": {
      const slotValue: MatrixSlot | null =
        slot === "X" ? table.X : key !== undefined ? (own(table.layers, key) ?? null) : null;
      if (slot === "layers" && (key === undefined || !slotValue)) return fail(Object.keys(table.layers));
      if (!slotValue) throw new Error(`field ${path}: the table has no X`);
      const m = await loadMatrix(slotValue);
      if (slot === "X" && key !== undefined) {
        const j = varIndexOf(table, key);
        if (j < 0) throw new Error(`field ${path}: no gene "${key}" in var names`);
        return {
          index: names,
          indexName: table.obs.indexName,
          nRows: nObs(table),
          columns: [{ name: key, get: geneGetter(m, j) }],
        };
      }
      return matrixColumns(m, slot === "X" ? "X" : key!, names, table.obs.indexName);
    }
    case "obsm":
    case "varm":
    case "obsp":
    case "varp": {
      const rec = table[slot] as Readonly<Record<string, MatrixSlot | DataFrame>>;
      const v = key === undefined ? undefined : own(rec, key);
      if (key === undefined || !v) return fail(Object.keys(rec));
      if (v.kind === "dataframe") return frameTable(v);
      const rowNames =
        slot === "obsm" ? names : slot === "varm" ? table.var.index.values.map((x) => x ?? "") : null;
      return matrixColumns(
        await loadMatrix(v),
        key,
        rowNames,
        slot === "varm" ? table.var.indexName : table.obs.indexName,
      );
    }
    case "uns": {
      if (key === undefined) return unsTable(table.uns, "uns");
      let node: UnsValue | undefined = table.uns;
      for (const part of key.split("/")) node = isUnsDict(node) ? own(node.entries, part) : undefined;
      if (node === undefined) return fail(Object.keys(table.uns.entries));
      return unsTable(node, key);
    }
    case "raw": {
      if (!table.raw) throw new Error(`field ${path}: the table has no raw`);
      return matrixColumns(await loadMatrix(table.raw.X), "raw", names, table.obs.indexName);
    }
  }
}

function geneGetter(m: DenseArray | SparseMatrix, j: number): (row: number) => FieldValue {
  if (m.kind === "dense") {
    const cols = m.shape[1]!;
    return m.dtype === "float32"
      ? (i) => shortFloat32(numberAt(m.data, i * cols + j))
      : (i) => numberAt(m.data, i * cols + j);
  }
  const values = new Float64Array(m.shape[0]);
  if (m.kind === "csc") {
    for (let k = numberAt(m.indptr, j); k < numberAt(m.indptr, j + 1); k++)
      values[numberAt(m.indices, k)] = numberAt(m.data, k);
  } else {
    for (let i = 0; i < m.shape[0]; i++) {
      for (let k = numberAt(m.indptr, i); k < numberAt(m.indptr, i + 1); k++) {
        if (numberAt(m.indices, k) === j) values[i] = numberAt(m.data, k);
      }
    }
  }
  return m.dtype === "float32" ? (i) => shortFloat32(values[i]!) : (i) => values[i]!;
}

/** Format a field table as CSV (RFC 4180 quoting; header row first). */
export function fieldToCsv(t: FieldTable): string {
  const q = (v: FieldValue): string => {
    if (v === null) return "";
    const s = typeof v === "number" && !Number.isFinite(v) ? String(v) : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  const header = [...(t.index ? [t.indexName || "index"] : []), ...t.columns.map((c) => c.name)]
    .map(q)
    .join(",");
  const lines = [header];
  for (let i = 0; i < t.nRows; i++) {
    const cells = t.index ? [q(t.index[i] ?? "")] : [];
    for (const c of t.columns) cells.push(q(c.get(i)));
    lines.push(cells.join(","));
  }
  return `${lines.join("\n")}\n`;
}

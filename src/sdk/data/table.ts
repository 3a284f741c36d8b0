/**
 * Table: the AnnData model. X (optional; dense, CSR or CSC, possibly lazy), obs/var frames, obsm/varm,
 * obsp/varp, layers, uns, raw. A table is an immutable value; `withSlot`-style helpers return a new
 * table sharing every slot that did not change.
 */
import type { DenseArray, Matrix, StringArray } from "./arrays.js";
import { type DataFrame, nRows } from "./dataframe.js";
import { type MatrixSlot, matrixInfo } from "./lazy.js";
import { stringLookup } from "./lazy-strings.js";
import type { UnsDict } from "./uns.js";

/** An obsm/varm entry: a 2-d matrix (dense or sparse) or a data frame (anndata allows both). */
export type AxisArray = MatrixSlot | DataFrame;

/** The `raw` attribute of AnnData: an earlier X with its own var. */
export interface RawTable {
  readonly X: MatrixSlot;
  readonly var: DataFrame;
  readonly varm: Readonly<Record<string, AxisArray>>;
}

/** SpatialData's table annotation: which element(s) the rows describe. */
export interface RegionAnnotation {
  /** Element name(s) annotated by this table. */
  readonly region: string | readonly string[];
  /** obs column naming each row's element. */
  readonly regionKey: string;
  /** obs column with each row's instance id inside its element. */
  readonly instanceKey: string;
}

/** An AnnData table. */
export interface Table {
  readonly kind: "table";
  readonly X: MatrixSlot | null;
  readonly obs: DataFrame;
  readonly var: DataFrame;
  readonly obsm: Readonly<Record<string, AxisArray>>;
  readonly varm: Readonly<Record<string, AxisArray>>;
  readonly obsp: Readonly<Record<string, MatrixSlot>>;
  readonly varp: Readonly<Record<string, MatrixSlot>>;
  readonly layers: Readonly<Record<string, MatrixSlot>>;
  readonly uns: UnsDict;
  readonly raw: RawTable | null;
  /** Present when the table belongs to a SpatialData object and annotates elements. */
  readonly annotation: RegionAnnotation | null;
  /**
   * Compressed bytes on disk per slot path (`X`, `obs`, `var`, `uns`, `raw`, `obsm/<key>` …) when the
   * table was read from a store that can tell; absent for tables made in memory.
   */
  readonly diskBytes?: Readonly<Record<string, number>>;
}

/** The slots of a table whose entries are keyed (`<mapping>/<key>` in save slot paths). */
export const KEYED_SLOTS = ["obsm", "varm", "obsp", "varp", "layers"] as const;
/** A keyed slot name. */
export type KeyedSlot = (typeof KEYED_SLOTS)[number];

/** Fields of `makeTable`; obs and var are required, everything else defaults to empty. */
export interface TableInit {
  X?: MatrixSlot | null;
  obs: DataFrame;
  var: DataFrame;
  obsm?: Record<string, AxisArray>;
  varm?: Record<string, AxisArray>;
  obsp?: Record<string, MatrixSlot>;
  varp?: Record<string, MatrixSlot>;
  layers?: Record<string, MatrixSlot>;
  uns?: UnsDict;
  raw?: RawTable | null;
  annotation?: RegionAnnotation | null;
  diskBytes?: Record<string, number>;
}

/** Build a table, checking that every slot agrees with the obs/var lengths. */
export function makeTable(init: TableInit): Table {
  const t: Table = {
    kind: "table",
    X: init.X ?? null,
    obs: init.obs,
    var: init.var,
    obsm: init.obsm ?? {},
    varm: init.varm ?? {},
    obsp: init.obsp ?? {},
    varp: init.varp ?? {},
    layers: init.layers ?? {},
    uns: init.uns ?? { kind: "dict", entries: {} },
    raw: init.raw ?? null,
    annotation: init.annotation ?? null,
    ...(init.diskBytes ? { diskBytes: init.diskBytes } : {}),
  };
  validateTable(t);
  return t;
}

/** Rows (cells) of a table. */
export function nObs(t: Table): number {
  return nRows(t.obs);
}

/** Columns (genes) of a table. */
export function nVars(t: Table): number {
  return nRows(t.var);
}

/** Leading dimension of an obsm/varm entry. */
export function axisArrayLength(a: AxisArray): number {
  return a.kind === "dataframe" ? nRows(a) : (matrixInfo(a).shape[0] ?? 0);
}

/** Columns of an obsm/varm entry (components of an embedding). */
export function axisArrayWidth(a: AxisArray): number {
  if (a.kind === "dataframe") return a.columnOrder.length;
  const shape = matrixInfo(a).shape;
  return shape.length > 1 ? shape.slice(1).reduce((p, s) => p * s, 1) : 1;
}

/** Throw a clear error when a slot's shape disagrees with the table's obs/var lengths. */
export function validateTable(t: Table): void {
  const n = nObs(t);
  const m = nVars(t);
  const fail = (what: string, got: readonly number[], want: string) => {
    throw new Error(`table: ${what} has shape [${got.join(", ")}], expected ${want}`);
  };
  if (t.X) {
    const s = matrixInfo(t.X).shape;
    if (s[0] !== n || s[1] !== m) fail("X", s, `[${n}, ${m}]`);
  }
  for (const [k, v] of Object.entries(t.layers)) {
    const s = matrixInfo(v).shape;
    if (s[0] !== n || s[1] !== m) fail(`layers/${k}`, s, `[${n}, ${m}]`);
  }
  for (const [k, v] of Object.entries(t.obsm)) {
    if (axisArrayLength(v) !== n) fail(`obsm/${k}`, [axisArrayLength(v)], `${n} rows`);
  }
  for (const [k, v] of Object.entries(t.varm)) {
    if (axisArrayLength(v) !== m) fail(`varm/${k}`, [axisArrayLength(v)], `${m} rows`);
  }
  for (const [k, v] of Object.entries(t.obsp)) {
    const s = matrixInfo(v).shape;
    if (s[0] !== n || s[1] !== n) fail(`obsp/${k}`, s, `[${n}, ${n}]`);
  }
  for (const [k, v] of Object.entries(t.varp)) {
    const s = matrixInfo(v).shape;
    if (s[0] !== m || s[1] !== m) fail(`varp/${k}`, s, `[${m}, ${m}]`);
  }
}

/** A new table with some fields replaced; unchanged slots are shared. */
export function updateTable(t: Table, change: Partial<Omit<Table, "kind">>): Table {
  const next: Table = { ...t, ...change, kind: "table" };
  if (t.diskBytes && !("diskBytes" in change)) {
    // Sizes on disk describe the slots as read; a replaced slot is no longer on disk.
    const changed = Object.keys(change);
    const kept = Object.entries(t.diskBytes).filter(([path]) => !changed.includes(path.split("/")[0]!));
    (next as { diskBytes?: Record<string, number> }).diskBytes = Object.fromEntries(kept);
  }
  validateTable(next);
  return next;
}

/** Row index (cell names) of a table. */
export function obsNames(t: Table): StringArray {
  return t.obs.index;
}

/** Column index (gene names) of a table. */
export function varNames(t: Table): StringArray {
  return t.var.index;
}

/**
 * Position of a gene in var names (its first occurrence), or -1: the one gene resolver of the SDK
 * (field reads, Arrow payloads). The lookup is built on first use and kept with the index it was built
 * from (`stringLookup`), so repeated lookups are O(1).
 */
export function varIndexOf(t: Table, gene: string): number {
  return stringLookup(t.var.index)(gene);
}

/** Whether a matrix value is 2-d with the given shape. */
export function hasShape(m: Matrix | DenseArray, rows: number, cols: number): boolean {
  return m.shape[0] === rows && m.shape[1] === cols;
}

/**
 * Change: what a compute operation returns instead of mutating its input. It names the fields it
 * writes (new values) or removes (`null`), per table slot and per element. The engine applies it to
 * the committed object in one synchronous step (`applyChange`), records its structural diff in the
 * history, and bumps the data version of every field path it touched.
 */
import type { Matrix } from "./arrays.js";
import { type Column, type DataFrame, withColumn, withoutColumn } from "./dataframe.js";
import type { ImageElement, LabelsElement, PointsElement, ShapesElement } from "./elements.js";
import type { MatrixSlot } from "./lazy.js";
import { type ElementKind, type SpatialData, withElement, withoutElement } from "./spatialdata.js";
import { type AxisArray, makeTable, type Table } from "./table.js";
import { type UnsValue, unsDelete, unsSet } from "./uns.js";

/** Entries to set (a value) or remove (`null`), by key. */
export type Updates<T> = Readonly<Record<string, T | null>>;

/** Changes to one table. Keys of `uns` are `/`-separated paths. */
export interface TableChange {
  readonly X?: MatrixSlot | null;
  readonly obs?: Updates<Column>;
  readonly var?: Updates<Column>;
  readonly obsm?: Updates<AxisArray>;
  readonly varm?: Updates<AxisArray>;
  readonly obsp?: Updates<MatrixSlot>;
  readonly varp?: Updates<MatrixSlot>;
  readonly layers?: Updates<MatrixSlot>;
  readonly uns?: Updates<UnsValue>;
}

/** Everything an operation changes. */
export interface Change {
  /** Slot-level changes, by table name. */
  readonly tables?: Readonly<Record<string, TableChange>>;
  /** Whole tables to set (for example a filtered table, or a new one) or remove. Applied before `tables`. */
  readonly replaceTables?: Updates<Table>;
  readonly images?: Updates<ImageElement>;
  readonly labels?: Updates<LabelsElement>;
  readonly points?: Updates<PointsElement>;
  readonly shapes?: Updates<ShapesElement>;
}

/** Per slot, the keys a change wrote or removed (`{obsm: ["X_pca"], obs: ["leiden"]}`), as history shows it. */
export type StructuralDiff = Record<string, string[]>;

/** The result of applying a change. */
export interface AppliedChange {
  readonly sdata: SpatialData;
  readonly diff: StructuralDiff;
  /** Field paths whose data changed (`tables:<name>:obs:<col>`, `images:<name>` …). */
  readonly touched: string[];
}

const MAP_SLOTS = ["obsm", "varm", "obsp", "varp", "layers"] as const;

function applyFrame(df: DataFrame, updates: Updates<Column>): DataFrame {
  let out = df;
  for (const [name, col] of Object.entries(updates)) {
    out =
      col === null
        ? Object.hasOwn(out.columns, name)
          ? withoutColumn(out, name)
          : out
        : withColumn(out, name, col);
  }
  return out;
}

function applyMap<T>(rec: Readonly<Record<string, T>>, updates: Updates<T>): Record<string, T> {
  const out: Record<string, T> = { ...rec };
  for (const [k, v] of Object.entries(updates)) {
    if (v === null) delete out[k];
    // A defined own property even for a key such as `__proto__` (an assignment would set the prototype).
    else Object.defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
  }
  return out;
}

/** Apply slot changes to one table (validated: shapes must agree). */
export function applyTableChange(t: Table, c: TableChange): Table {
  let uns = t.uns;
  for (const [path, v] of Object.entries(c.uns ?? {}))
    uns = v === null ? unsDelete(uns, path) : unsSet(uns, path, v);
  const changedSlots = new Set(Object.keys(c));
  const diskBytes = t.diskBytes
    ? Object.fromEntries(Object.entries(t.diskBytes).filter(([p]) => !changedSlots.has(p.split("/")[0]!)))
    : undefined;
  return makeTable({
    X: c.X !== undefined ? c.X : t.X,
    obs: c.obs ? applyFrame(t.obs, c.obs) : t.obs,
    var: c.var ? applyFrame(t.var, c.var) : t.var,
    obsm: c.obsm ? applyMap(t.obsm, c.obsm) : { ...t.obsm },
    varm: c.varm ? applyMap(t.varm, c.varm) : { ...t.varm },
    obsp: c.obsp ? applyMap(t.obsp, c.obsp) : { ...t.obsp },
    varp: c.varp ? applyMap(t.varp, c.varp) : { ...t.varp },
    layers: c.layers ? applyMap(t.layers, c.layers) : { ...t.layers },
    uns,
    raw: t.raw,
    annotation: t.annotation,
    ...(diskBytes ? { diskBytes } : {}),
  });
}

/**
 * Apply `change` to `sd`, returning the new object (sharing everything unchanged), the structural
 * diff and the touched field paths. Throws, leaving `sd` as it was, when the change is inconsistent
 * (a slot of the wrong length, a table that does not exist).
 */
export function applyChange(sd: SpatialData, change: Change): AppliedChange {
  let out = sd;
  const diff: StructuralDiff = {};
  const touched: string[] = [];
  const note = (slot: string, key: string, path: string) => {
    const keys = diff[slot] ?? [];
    if (!keys.includes(key)) keys.push(key);
    diff[slot] = keys;
    touched.push(path);
  };
  for (const [name, t] of Object.entries(change.replaceTables ?? {})) {
    out = t === null ? withoutElement(out, "tables", name) : withElement(out, "tables", name, t);
    note("tables", name, `tables:${name}`);
  }
  for (const [name, tc] of Object.entries(change.tables ?? {})) {
    const t = Object.hasOwn(out.tables, name) ? out.tables[name] : undefined;
    if (!t) throw new Error(`change: no table "${name}" to update`);
    out = withElement(out, "tables", name, applyTableChange(t, tc));
    if (tc.X !== undefined) note("X", "X", `tables:${name}:X`);
    for (const slot of ["obs", "var", ...MAP_SLOTS, "uns"] as const) {
      for (const key of Object.keys(tc[slot] ?? {})) note(slot, key, `tables:${name}:${slot}:${key}`);
    }
  }
  for (const family of ["images", "labels", "points", "shapes"] as const satisfies readonly ElementKind[]) {
    for (const [name, el] of Object.entries(change[family] ?? {})) {
      out = el === null ? withoutElement(out, family, name) : withElement(out, family, name, el as never);
      note(family, name, `${family}:${name}`);
    }
  }
  return { sdata: out, diff, touched };
}

/** Convenience for operations: a change that sets one obs column of a table. */
export function setObs(table: string, name: string, col: Column): Change {
  return { tables: { [table]: { obs: { [name]: col } } } };
}

/** Convenience for operations: a change that sets one obsm entry of a table. */
export function setObsm(table: string, key: string, value: Matrix): Change {
  return { tables: { [table]: { obsm: { [key]: value } } } };
}

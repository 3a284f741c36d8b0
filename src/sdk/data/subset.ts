/**
 * Subsetting a SpatialData object by rows of its active table, keeping the elements consistent with
 * the rows kept (the service's `POST /subset`):
 *
 * - the active table keeps the chosen rows, in their order: X, layers, obs, obsm, obsp (rows and
 *   columns) and raw's rows; var, varm, varp and uns stay; categories no longer used are dropped with
 *   their `uns/<col>_colors` entries, as anndata does;
 * - shapes annotated by the table keep the features whose instance id belongs to a kept row (through
 *   the table's region and instance keys); other tables annotating those shapes keep their rows
 *   whose instance survived;
 * - points: with polygons, the points inside them (outside with `invert`), the polygons being mapped
 *   from the table's coordinate space into the points' own system; with explicit rows, the points
 *   whose instance id belongs to a kept cell (all points when they carry no instance key);
 * - images and labels are kept whole (they are read lazily, so sharing them costs nothing), as are
 *   shapes no table annotates (for example the drawn `annotations`).
 */
import { type AffineMatrix, applyToPoint, identityMatrix, invert, multiply } from "./affine.js";
import {
  allocArray,
  type Categorical,
  type DenseArray,
  type Matrix,
  type SparseMatrix,
  type StringArray,
  type TypedArray,
} from "./arrays.js";
import { type Column, columnValue, type DataFrame, dataFrame, nRows } from "./dataframe.js";
import type { Geometry, PointsElement, ShapesElement } from "./elements.js";
import { loadMatrix, type MatrixSlot } from "./lazy.js";
import { stringAt, takeStrings } from "./lazy-strings.js";
import { type PolygonRing, selectInPolygons } from "./polygon-select.js";
import { coordinateSystems, type SpatialData, transformTo } from "./spatialdata.js";
import { type AxisArray, makeTable, nObs, type RawTable, type Table } from "./table.js";
import { isUnsDict, type UnsDict, unsDict } from "./uns.js";

// ------------------------------------------------------------------ rows of columns and matrices

/** Positions of the 1 bytes of a mask, in order. */
export function maskPositions(mask: Uint8Array): Int32Array {
  let c = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) c++;
  const out = new Int32Array(c);
  for (let i = 0, at = 0; i < mask.length; i++) if (mask[i]) out[at++] = i;
  return out;
}

/** Rows `pos` of a typed array holding rows of `width` values, into a new shared array. */
function gatherRows(dtype: DenseArray["dtype"], src: TypedArray, pos: Int32Array, width: number): TypedArray {
  const out = allocArray(dtype, pos.length * width);
  const o = out as unknown as { set(a: ArrayLike<unknown>, at: number): void };
  if (width === 1) {
    const s = src as unknown as { [i: number]: unknown };
    const d = out as unknown as { [i: number]: unknown };
    for (let i = 0; i < pos.length; i++) d[i] = s[pos[i]!];
  } else {
    for (let i = 0; i < pos.length; i++) {
      const p = pos[i]! * width;
      o.set(src.subarray(p, p + width) as unknown as ArrayLike<unknown>, i * width);
    }
  }
  return out;
}

function denseRows(a: DenseArray, pos: Int32Array): DenseArray {
  const rows = a.shape[0] ?? 0;
  const width = rows ? a.data.length / rows : 0;
  return {
    kind: "dense",
    dtype: a.dtype,
    shape: [pos.length, ...a.shape.slice(1)],
    data: gatherRows(a.dtype, a.data, pos, width),
  };
}

/** Rows `pos` (ascending) of a CSR matrix. */
function csrRows(m: SparseMatrix, pos: Int32Array): SparseMatrix {
  const { indptr } = m;
  let nnz = 0;
  for (const p of pos) nnz += indptr[p + 1]! - indptr[p]!;
  const outPtr = allocArray(nnz > 2 ** 31 - 1 ? "float64" : "int32", pos.length + 1) as
    | Int32Array
    | Float64Array;
  const outIdx = allocArray(m.indices instanceof Float64Array ? "float64" : "int32", nnz) as
    | Int32Array
    | Float64Array;
  const outData = allocArray(m.dtype, nnz);
  const d = outData as unknown as { set(a: ArrayLike<unknown>, at: number): void };
  let at = 0;
  for (let r = 0; r < pos.length; r++) {
    const a = indptr[pos[r]!]!;
    const b = indptr[pos[r]! + 1]!;
    outIdx.set(m.indices.subarray(a, b), at);
    d.set(m.data.subarray(a, b) as unknown as ArrayLike<unknown>, at);
    at += b - a;
    outPtr[r + 1] = at;
  }
  return {
    kind: "csr",
    dtype: m.dtype,
    shape: [pos.length, m.shape[1]],
    data: outData,
    indices: outIdx,
    indptr: outPtr,
  };
}

/** Columns `pos` (ascending, renumbered) of a CSR matrix. */
function csrColumns(m: SparseMatrix, pos: Int32Array): SparseMatrix {
  const cols = m.shape[1];
  const remap = new Int32Array(cols).fill(-1);
  for (let j = 0; j < pos.length; j++) remap[pos[j]!] = j;
  const n = m.shape[0];
  const { indptr, indices } = m;
  let nnz = 0;
  for (let k = 0; k < indptr[n]!; k++) if (remap[indices[k]!]! >= 0) nnz++;
  const outPtr = allocArray("int32", n + 1) as Int32Array;
  const outIdx = allocArray("int32", nnz) as Int32Array;
  const outData = allocArray(m.dtype, nnz);
  const s = m.data as unknown as { [i: number]: unknown };
  const o = outData as unknown as { [i: number]: unknown };
  let at = 0;
  for (let i = 0; i < n; i++) {
    for (let k = indptr[i]!; k < indptr[i + 1]!; k++) {
      const j = remap[indices[k]!]!;
      if (j < 0) continue;
      outIdx[at] = j;
      o[at] = s[k];
      at++;
    }
    outPtr[i + 1] = at;
  }
  return {
    kind: "csr",
    dtype: m.dtype,
    shape: [n, pos.length],
    data: outData,
    indices: outIdx,
    indptr: outPtr,
  };
}

/**
 * Rows `pos` of any matrix. Dense and CSR take them in the order given, repeats allowed (scanpy's
 * `subsample` draws with replacement); CSC is treated as the CSR of its transpose, whose columns must
 * be ascending.
 */
export function matrixRows(m: Matrix, pos: Int32Array): Matrix {
  if (m.kind === "dense") return denseRows(m, pos);
  if (m.kind === "csr") return csrRows(m, pos);
  const t: SparseMatrix = { ...m, kind: "csr", shape: [m.shape[1], m.shape[0]] };
  const r = csrColumns(t, pos);
  return { ...r, kind: "csc", shape: [r.shape[1], r.shape[0]] };
}

/** Columns `pos` (ascending) of any matrix. */
function matrixColumns(m: Matrix, pos: Int32Array): Matrix {
  if (m.kind === "csr") return csrColumns(m, pos);
  if (m.kind === "csc") {
    const t: SparseMatrix = { ...m, kind: "csr", shape: [m.shape[1], m.shape[0]] };
    const r = csrRows(t, pos);
    return { ...r, kind: "csc", shape: [r.shape[1], r.shape[0]] };
  }
  const [rows, cols] = m.shape as [number, number];
  const out = allocArray(m.dtype, rows * pos.length);
  const s = m.data as unknown as { [i: number]: unknown };
  const d = out as unknown as { [i: number]: unknown };
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < pos.length; j++) d[i * pos.length + j] = s[i * cols + pos[j]!];
  return { kind: "dense", dtype: m.dtype, shape: [rows, pos.length], data: out };
}

function categoryCount(c: Categorical): number {
  return c.categories.kind === "string" ? c.categories.values.length : c.categories.data.length;
}

/** Rows `pos` of a categorical with unused categories dropped; `kept` lists the old codes kept. */
function categoricalRows(col: Categorical, pos: Int32Array): { col: Categorical; kept: Int32Array } {
  const nCat = categoryCount(col);
  const used = new Uint8Array(nCat);
  for (const p of pos) {
    const c = col.codes[p]!;
    if (c >= 0) used[c] = 1;
  }
  const kept = maskPositions(used);
  const remap = new Int32Array(nCat).fill(-1);
  for (let i = 0; i < kept.length; i++) remap[kept[i]!] = i;
  const codes = allocArray("int32", pos.length) as Int32Array;
  for (let i = 0; i < pos.length; i++) {
    const c = col.codes[pos[i]!]!;
    codes[i] = c >= 0 ? remap[c]! : -1;
  }
  const cats = col.categories;
  const categories: DenseArray | StringArray =
    cats.kind === "string"
      ? { kind: "string", shape: [kept.length], values: Array.from(kept, (k) => cats.values[k] ?? null) }
      : denseRows(cats, kept);
  return { col: { kind: "categorical", codes, categories, ordered: col.ordered }, kept };
}

/** Rows `pos` of a column (categoricals via `categoricalRows`). */
function columnRows(col: Column, pos: Int32Array): Column {
  switch (col.kind) {
    case "dense":
      return denseRows(col, pos);
    case "string":
      return { kind: "string", shape: [pos.length], values: Array.from(pos, (p) => col.values[p] ?? null) };
    case "nullable":
      return {
        kind: "nullable",
        dtype: col.dtype,
        data: gatherRows(col.dtype, col.data, pos, 1),
        mask: gatherRows("bool", col.mask, pos, 1) as Uint8Array,
      };
    case "categorical":
      return categoricalRows(col, pos).col;
  }
}

/**
 * Rows `pos` of a frame. With `uns`, a categorical column's `uns/<col>_colors` list (aligned with its
 * categories) follows the categories kept; the updated uns is returned alongside.
 */
export function frameRows(df: DataFrame, pos: Int32Array, uns?: UnsDict): { df: DataFrame; uns?: UnsDict } {
  const cols: Record<string, Column> = {};
  let outUns = uns;
  for (const name of df.columnOrder) {
    const col = df.columns[name]!;
    if (col.kind !== "categorical") {
      cols[name] = columnRows(col, pos);
      continue;
    }
    const { col: sub, kept } = categoricalRows(col, pos);
    cols[name] = sub;
    const colors = outUns?.entries[`${name}_colors`];
    if (
      outUns &&
      colors &&
      !isUnsDict(colors) &&
      typeof colors === "object" &&
      colors.kind === "string" &&
      colors.values.length === categoryCount(col)
    ) {
      const next: StringArray = {
        kind: "string",
        shape: [kept.length],
        values: Array.from(kept, (k) => colors.values[k] ?? null),
      };
      outUns = unsDict({ ...outUns.entries, [`${name}_colors`]: next });
    }
  }
  // Rows taken without materialising a range or packed index (a points frame's 50 M ids).
  const index = takeStrings(df.index, pos);
  return { df: dataFrame(index, cols, df.indexName, df.columnOrder), ...(outUns ? { uns: outUns } : {}) };
}

async function slotRows(slot: MatrixSlot, pos: Int32Array): Promise<Matrix> {
  return matrixRows(await loadMatrix(slot), pos);
}

async function axisRows(a: AxisArray, pos: Int32Array): Promise<AxisArray> {
  return a.kind === "dataframe" ? frameRows(a, pos).df : slotRows(a, pos);
}

async function mapValues<V, R>(
  rec: Readonly<Record<string, V>>,
  f: (v: V) => Promise<R>,
  signal?: AbortSignal,
): Promise<Record<string, R>> {
  const out: Record<string, R> = {};
  for (const [k, v] of Object.entries(rec)) {
    signal?.throwIfAborted();
    out[k] = await f(v);
  }
  return out;
}

/**
 * The table restricted to the rows whose mask byte is 1, in order: every obs-aligned slot follows
 * (obsp on both axes, raw's rows), var-aligned slots stay, unused categories go with their colours.
 * A mask keeping every row returns the table itself.
 */
export async function subsetTableRows(t: Table, mask: Uint8Array, signal?: AbortSignal): Promise<Table> {
  const n = nObs(t);
  if (mask.length !== n) throw new Error(`subset: a mask of ${mask.length} for a table of ${n} rows`);
  const pos = maskPositions(mask);
  if (pos.length === n) return t;
  const { df: obs, uns } = frameRows(t.obs, pos, t.uns);
  const raw: RawTable | null = t.raw ? { ...t.raw, X: await slotRows(t.raw.X, pos) } : null;
  return makeTable({
    X: t.X ? await slotRows(t.X, pos) : null,
    obs,
    var: t.var,
    obsm: await mapValues(t.obsm, (a) => axisRows(a, pos), signal),
    varm: { ...t.varm },
    obsp: await mapValues(t.obsp, async (s) => matrixColumns(await slotRows(s, pos), pos), signal),
    varp: { ...t.varp },
    layers: await mapValues(t.layers, (s) => slotRows(s, pos), signal),
    uns: uns ?? t.uns,
    raw,
    annotation: t.annotation,
  });
}

// ------------------------------------------------------------------ elements

/** The features `pos` (ascending) of a geometry. */
export function geometryRows(g: Geometry, pos: Int32Array): Geometry {
  if (g.type === "point") {
    return { type: "point", coords: gatherRows("float64", g.coords, pos, 2) as Float64Array };
  }
  const geom = g.geomOffsets!;
  const rings = g.ringOffsets!;
  const polys = g.type === "multipolygon" ? g.polygonOffsets! : null;
  // Per feature: its ring range (through its polygons for a multipolygon).
  const ringRange = (f: number): [number, number] =>
    polys ? [polys[geom[f]!]!, polys[geom[f + 1]!]!] : [geom[f]!, geom[f + 1]!];
  let nRings = 0;
  let nVerts = 0;
  let nPolys = 0;
  for (const f of pos) {
    const [r0, r1] = ringRange(f);
    nRings += r1 - r0;
    nVerts += rings[r1]! - rings[r0]!;
    if (polys) nPolys += geom[f + 1]! - geom[f]!;
  }
  const coords = allocArray("float64", 2 * nVerts) as Float64Array;
  const ringOut = allocArray("int32", nRings + 1) as Int32Array;
  const geomOut = allocArray("int32", pos.length + 1) as Int32Array;
  const polyOut = polys ? (allocArray("int32", nPolys + 1) as Int32Array) : undefined;
  let v = 0;
  let r = 0;
  let p = 0;
  for (let i = 0; i < pos.length; i++) {
    const f = pos[i]!;
    if (polys && polyOut) {
      for (let q = geom[f]!; q < geom[f + 1]!; q++) {
        for (let k = polys[q]!; k < polys[q + 1]!; k++) {
          const a = rings[k]!;
          const b = rings[k + 1]!;
          coords.set(g.coords.subarray(2 * a, 2 * b), 2 * v);
          v += b - a;
          ringOut[++r] = v;
        }
        polyOut[++p] = r;
      }
      geomOut[i + 1] = p;
    } else {
      const [r0, r1] = ringRange(f);
      for (let k = r0; k < r1; k++) {
        const a = rings[k]!;
        const b = rings[k + 1]!;
        coords.set(g.coords.subarray(2 * a, 2 * b), 2 * v);
        v += b - a;
        ringOut[++r] = v;
      }
      geomOut[i + 1] = r;
    }
  }
  return {
    type: g.type,
    coords,
    geomOffsets: geomOut,
    ringOffsets: ringOut,
    ...(polyOut ? { polygonOffsets: polyOut } : {}),
  };
}

/** A shapes element restricted to the features whose mask byte is 1. */
export function shapesRows(s: ShapesElement, mask: Uint8Array): ShapesElement {
  const pos = maskPositions(mask);
  if (pos.length === mask.length) return s;
  return { ...s, geometry: geometryRows(s.geometry, pos), frame: frameRows(s.frame, pos).df };
}

/** A points element restricted to the points whose mask byte is 1. */
export function pointsRows(p: PointsElement, mask: Uint8Array): PointsElement {
  const pos = maskPositions(mask);
  if (pos.length === mask.length) return p;
  return { ...p, frame: frameRows(p.frame, pos).df };
}

// ------------------------------------------------------------------ the whole object

/** How the rows were chosen; polygons also choose the points. */
export interface SubsetOptions {
  /** Polygons in the table's coordinate space (canvas world), when the rows were chosen by polygons. */
  readonly polygons?: readonly PolygonRing[];
  /** Whether the polygons chose the outside. */
  readonly invert?: boolean;
  /** Coordinate system the polygons are mapped through (default `subsetCoordinateSystem`). */
  readonly coordinateSystem?: string;
  readonly signal?: AbortSignal;
  /** Progress notes (for the job log). */
  readonly log?: (text: string) => void;
}

/** Names of the elements a table annotates. */
function regionsOf(t: Table): string[] {
  const r = t.annotation?.region;
  return r === undefined ? [] : typeof r === "string" ? [r] : [...r];
}

/** The element (of any spatial family) the table's rows live in: its first annotated region. */
function regionElement(sd: SpatialData, t: Table) {
  for (const name of regionsOf(t)) {
    for (const family of [sd.shapes, sd.labels, sd.points, sd.images] as const)
      if (Object.hasOwn(family, name)) return family[name];
  }
  return undefined;
}

/**
 * The coordinate system polygons are mapped through: `requested` when the object has it, else the
 * one the table's region element maps to (`global` when it is among them, else its first recorded
 * one), else `global` or the first system of the object. Never picked from an unordered set.
 */
export function subsetCoordinateSystem(sd: SpatialData, tableName: string, requested?: string): string {
  const all = coordinateSystems(sd);
  if (requested !== undefined) {
    if (!all.includes(requested))
      throw new RangeError(
        `unknown coordinate system "${requested}" (the object has: ${all.join(", ") || "none"})`,
      );
    return requested;
  }
  const t = Object.hasOwn(sd.tables, tableName) ? sd.tables[tableName] : undefined;
  const el = t ? regionElement(sd, t) : undefined;
  const own = el ? Object.keys(el.transformations) : [];
  if (own.includes("global")) return "global";
  if (own.length) return own[0]!;
  return all.includes("global") ? "global" : (all[0] ?? "global");
}

/** Instance id of row `i` of a table as a string (how shapes indices and point instance keys compare). */
function instanceKeyOf(col: Column | undefined, i: number): string | null {
  if (!col) return null;
  const v = columnValue(col, i);
  return v === null ? null : String(v);
}

/** Per annotated element, the instance ids of the kept rows of `t`. */
function keptInstances(t: Table, mask: Uint8Array): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const ann = t.annotation;
  if (!ann) return out;
  const regions = regionsOf(t);
  for (const r of regions) out.set(r, new Set());
  const regionCol = t.obs.columns[ann.regionKey];
  const instCol = t.obs.columns[ann.instanceKey];
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    const region = regions.length === 1 ? regions[0]! : instanceKeyOf(regionCol, i);
    const id = instanceKeyOf(instCol, i);
    if (region !== null && id !== null) out.get(region)?.add(id);
  }
  return out;
}

/** The rows of another table that stay: those whose instance in a filtered element survived. */
function otherTableMask(t: Table, kept: Map<string, Set<string>>): Uint8Array | null {
  const ann = t.annotation;
  if (!ann || !regionsOf(t).some((r) => kept.has(r))) return null;
  const regions = regionsOf(t);
  const regionCol = t.obs.columns[ann.regionKey];
  const instCol = t.obs.columns[ann.instanceKey];
  const n = nObs(t);
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const region = regions.length === 1 ? regions[0]! : instanceKeyOf(regionCol, i);
    const set = region === null ? undefined : kept.get(region);
    const id = instanceKeyOf(instCol, i);
    mask[i] = !set || (id !== null && set.has(id)) ? 1 : 0;
  }
  return mask;
}

/** The numbers of a 1-d numeric frame column as float64 (null when absent or not numeric). */
function numericColumn(df: DataFrame, name: string): ArrayLike<number> | null {
  const c = df.columns[name];
  if (!c || c.kind !== "dense" || c.data instanceof BigInt64Array || c.data instanceof BigUint64Array)
    return null;
  return c.data as ArrayLike<number>;
}

/** Mask of the points inside (or, inverted, outside) polygons given in the table's space. */
function pointsInPolygons(
  p: PointsElement,
  polygons: readonly PolygonRing[],
  invertSel: boolean,
  tableToPoints: AffineMatrix,
): Uint8Array {
  const xs = numericColumn(p.frame, "x");
  const ys = numericColumn(p.frame, "y");
  const n = nRows(p.frame);
  if (!xs || !ys) return new Uint8Array(n).fill(1);
  const coords = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    coords[2 * i] = xs[i]!;
    coords[2 * i + 1] = ys[i]!;
  }
  const mask = selectInPolygons(coords, n, polygons, { map: (x, y) => applyToPoint(tableToPoints, x, y) });
  if (invertSel) for (let i = 0; i < n; i++) mask[i] = mask[i] ? 0 : 1;
  return mask;
}

/**
 * The object restricted to the rows of `tableName` whose mask byte is 1, with the other elements
 * made consistent (see the module comment). Returns a new object sharing everything unchanged.
 */
export async function subsetSpatialData(
  sd: SpatialData,
  tableName: string,
  mask: Uint8Array,
  opts: SubsetOptions = {},
): Promise<SpatialData> {
  const log = opts.log ?? (() => {});
  const t = Object.hasOwn(sd.tables, tableName) ? sd.tables[tableName] : undefined;
  if (!t) throw new Error(`subset: no table "${tableName}"`);
  const tables: Record<string, Table> = { ...sd.tables };
  tables[tableName] = await subsetTableRows(t, mask, opts.signal);
  log(`table "${tableName}": kept ${maskPositions(mask).length} of ${mask.length} rows`);
  const kept = keptInstances(t, mask);
  for (const [name, other] of Object.entries(sd.tables)) {
    if (name === tableName) continue;
    const m = otherTableMask(other, kept);
    if (m) {
      tables[name] = await subsetTableRows(other, m, opts.signal);
      log(`table "${name}": kept ${nObs(tables[name])} of ${m.length} rows`);
    }
  }
  const shapes: Record<string, ShapesElement> = { ...sd.shapes };
  for (const [name, ids] of kept) {
    const s = Object.hasOwn(sd.shapes, name) ? sd.shapes[name] : undefined;
    if (!s) continue;
    const count = nRows(s.frame);
    const m = new Uint8Array(count);
    for (let i = 0; i < count; i++) {
      const id = stringAt(s.frame.index, i);
      m[i] = id !== null && ids.has(id) ? 1 : 0;
    }
    shapes[name] = shapesRows(s, m);
    log(`shapes "${name}": kept ${nRows(shapes[name].frame)} of ${count} features`);
  }
  const points: Record<string, PointsElement> = { ...sd.points };
  const cs = opts.polygons ? subsetCoordinateSystem(sd, tableName, opts.coordinateSystem) : null;
  const region = regionElement(sd, t);
  for (const [name, p] of Object.entries(sd.points)) {
    opts.signal?.throwIfAborted();
    let m: Uint8Array | null = null;
    if (opts.polygons && cs) {
      let toPoints: AffineMatrix;
      try {
        const tableToCs = region ? transformTo(sd, region, cs, ["x", "y"]) : identityMatrix(2);
        toPoints = multiply(invert(transformTo(sd, p, cs, ["x", "y"])), tableToCs);
      } catch {
        log(`points "${name}": no path to coordinate system "${cs}"; kept whole`);
        continue;
      }
      m = pointsInPolygons(p, opts.polygons, opts.invert ?? false, toPoints);
    } else if (p.instanceKey && p.frame.columns[p.instanceKey]) {
      // Points of the kept cells: instance ids of the table's (first) region.
      const ids = kept.get(regionsOf(t)[0] ?? "");
      if (!ids) continue;
      const col = p.frame.columns[p.instanceKey];
      const n = nRows(p.frame);
      m = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const id = instanceKeyOf(col, i);
        m[i] = id !== null && ids.has(id) ? 1 : 0;
      }
    }
    if (m) {
      points[name] = pointsRows(p, m);
      log(`points "${name}": kept ${nRows(points[name].frame)} of ${m.length}`);
    }
  }
  return { ...sd, tables, shapes, points };
}

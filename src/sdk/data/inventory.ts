/**
 * The element inventory of a SpatialData object: what `tessera inspect --json` prints and what the
 * service's `elements` route builds on. Pure function of the object; reads no pixel or matrix data.
 */
import { type ColumnKind, columnKind } from "./dataframe.js";
import { levelSize, pointsCount, shapesCount } from "./elements.js";
import { matrixInfo } from "./lazy.js";
import { coordinateSystems, type SpatialData } from "./spatialdata.js";
import { type AxisArray, axisArrayWidth, nObs, nVars, type Table } from "./table.js";

/** A column as listed: its name and user-facing kind. */
export interface ColumnEntry {
  name: string;
  kind: ColumnKind;
}

/** How a matrix slot is stored: dense, or sparse by rows (CSR) or by columns (CSC). */
export type MatrixKind = "dense" | "csr" | "csc";

/** How an obsm/varm entry is stored: a matrix, or a data frame (anndata allows a pandas DataFrame there). */
export type AxisArrayKind = MatrixKind | "dataframe";

/** An obsm/varm entry as listed. */
export interface AxisArrayEntry {
  name: string;
  /** Storage: `dense`, `csr`, `csc` or `dataframe`. */
  kind: AxisArrayKind;
  /** Width: columns of the matrix, or columns of the data frame. */
  n_components: number;
}

/** A layer as listed (its shape is always n_obs × n_vars). */
export interface LayerEntry {
  name: string;
  /** Storage: `dense`, `csr` or `csc`. */
  kind: MatrixKind;
  /** Element type (`float32`, `int32`, …). */
  dtype: string;
}

/** A table in the inventory. */
export interface TableEntry {
  name: string;
  n_obs: number;
  n_vars: number;
  obs: ColumnEntry[];
  var: ColumnEntry[];
  obsm: AxisArrayEntry[];
  varm: AxisArrayEntry[];
  obsp: string[];
  /** Layer names (kept as plain names for existing readers; `layer_entries` adds kind and dtype). */
  layers: string[];
  layer_entries: LayerEntry[];
  uns: string[];
  /** Whether the table has an expression matrix X. */
  has_x: boolean;
  /** Elements this table annotates (SpatialData `region`), empty when none. */
  region: string[];
}

/** A pyramid level as listed. */
export interface LevelEntry {
  level: number;
  width: number;
  height: number;
}

/** An image or labels element in the inventory. */
export interface RasterEntry {
  name: string;
  levels: LevelEntry[];
  channels: string[];
  dtype: string;
  coordinate_systems: string[];
}

/** A shapes element in the inventory. */
export interface ShapesEntry {
  name: string;
  n: number;
  geometry: string;
  coordinate_systems: string[];
}

/** A points element in the inventory. */
export interface PointsEntry {
  name: string;
  n: number;
  columns: string[];
  coordinate_systems: string[];
}

/** The whole inventory. */
export interface Inventory {
  tables: TableEntry[];
  images: RasterEntry[];
  labels: RasterEntry[];
  shapes: ShapesEntry[];
  points: PointsEntry[];
  coordinate_systems: string[];
}

/** An obsm/varm entry's kind and width, from metadata only (nothing lazy is loaded). */
export function axisArrayEntry(name: string, a: AxisArray): AxisArrayEntry {
  const kind = a.kind === "dataframe" ? "dataframe" : matrixInfo(a).format;
  return { name, kind, n_components: axisArrayWidth(a) };
}

/** List one table's slots. */
export function tableEntry(name: string, t: Table): TableEntry {
  const region = t.annotation
    ? Array.isArray(t.annotation.region)
      ? [...t.annotation.region]
      : [t.annotation.region as string]
    : [];
  return {
    name,
    n_obs: nObs(t),
    n_vars: nVars(t),
    obs: t.obs.columnOrder.map((c) => ({ name: c, kind: columnKind(t.obs.columns[c]!) })),
    var: t.var.columnOrder.map((c) => ({ name: c, kind: columnKind(t.var.columns[c]!) })),
    obsm: Object.entries(t.obsm).map(([k, v]) => axisArrayEntry(k, v)),
    varm: Object.entries(t.varm).map(([k, v]) => axisArrayEntry(k, v)),
    obsp: Object.keys(t.obsp),
    layers: Object.keys(t.layers),
    layer_entries: Object.entries(t.layers).map(([name, v]) => {
      const info = matrixInfo(v);
      return { name, kind: info.format, dtype: info.dtype };
    }),
    uns: Object.keys(t.uns.entries),
    has_x: t.X !== null,
    region,
  };
}

/** Build the inventory of an object (element names sorted within each family). */
export function inventory(sd: SpatialData): Inventory {
  const sorted = <T>(rec: Readonly<Record<string, T>>) =>
    Object.entries(rec).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const raster = (
    name: string,
    el: {
      axes: readonly string[];
      dtype: string;
      levels: readonly { shape: readonly number[] }[];
      transformations: object;
    },
    channels: readonly string[],
  ): RasterEntry => ({
    name,
    levels: el.levels.map((l, i) => ({ level: i, ...levelSize(el.axes, l.shape) })),
    channels: [...channels],
    dtype: el.dtype,
    coordinate_systems: Object.keys(el.transformations).sort(),
  });
  return {
    tables: sorted(sd.tables).map(([n, t]) => tableEntry(n, t)),
    images: sorted(sd.images).map(([n, el]) => raster(n, el, el.channels)),
    labels: sorted(sd.labels).map(([n, el]) => raster(n, el, [])),
    shapes: sorted(sd.shapes).map(([n, el]) => ({
      name: n,
      n: shapesCount(el),
      geometry: el.geometry.type === "point" && el.frame.columns.radius ? "circle" : el.geometry.type,
      coordinate_systems: Object.keys(el.transformations).sort(),
    })),
    points: sorted(sd.points).map(([n, el]) => ({
      name: n,
      n: pointsCount(el),
      columns: [...el.frame.columnOrder],
      coordinate_systems: Object.keys(el.transformations).sort(),
    })),
    coordinate_systems: coordinateSystems(sd),
  };
}

/** Shape of X of a table without reading it, or null. */
export function xShape(t: Table): readonly number[] | null {
  return t.X ? matrixInfo(t.X).shape : null;
}

/**
 * The element inventory as the service serves it (`GET /elements[?sizes=1]`): every table with its
 * row/column counts and whether it is the active one, and the spatial elements with the facts a data
 * inspector and the save dialog need. With sizes, every entry adds `size_mb` (real compressed bytes
 * where the element was read from disk, else an in-memory estimate), images and labels add per-level
 * sizes and tables per-slot sizes. Parts are rounded first and the whole is their sum, so the parts
 * always add up to the total a client shows. Nothing lazy is read.
 */
import { type Inventory, inventory, type LevelEntry } from "./inventory.js";
import { elementBytes, levelBytes, tableSlotSizes, toMb } from "./sizes.js";
import type { SpatialData } from "./spatialdata.js";

/** A table of the inventory. */
export interface TableItem {
  name: string;
  n_obs: number;
  n_vars: number;
  /** Whether this is the table jobs run against and fields resolve in. */
  active: boolean;
  /** Whether the table has an expression matrix X. */
  has_x: boolean;
  /** Elements this table annotates (SpatialData `region`). */
  region: string[];
  size_mb?: number | null;
  slots?: { path: string; size_mb: number | null; required: boolean }[];
}

/** An image or labels element of the inventory. */
export interface RasterItem {
  name: string;
  /** Pyramid levels, finest first (with sizes: each level's `size_mb`). */
  levels: (LevelEntry & { size_mb?: number | null })[];
  /** Channel names (images; empty for labels). */
  channels: string[];
  dtype: string;
  coordinate_systems: string[];
  size_mb?: number | null;
}

/** A shapes element of the inventory. */
export interface ShapesItem {
  name: string;
  /** Number of features. */
  n: number;
  /** `polygon`, `multipolygon`, `circle` or `point`. */
  geometry: string;
  coordinate_systems: string[];
  size_mb?: number | null;
}

/** A points element of the inventory. */
export interface PointsItem {
  name: string;
  /** Number of points. */
  n: number;
  columns: string[];
  /** Column naming each point's feature (gene), when declared. */
  feature_key: string | null;
  coordinate_systems: string[];
  size_mb?: number | null;
}

/** The served inventory. */
export interface ElementInventory {
  tables: TableItem[];
  shapes: ShapesItem[];
  points: PointsItem[];
  images: RasterItem[];
  labels: RasterItem[];
  /** Every coordinate system an element maps to, sorted. */
  coordinate_systems: string[];
}

/** Sum of rounded MB parts, rounded again to kill float noise; null when any part is unknown. */
function sumMb(parts: readonly (number | null)[]): number | null {
  if (parts.some((p) => p === null)) return null;
  return Math.round((parts as number[]).reduce((a, b) => a + b, 0) * 1000) / 1000;
}

/** Bytes as MB, or null when the size cannot be told (not finite). */
function mb(bytes: number | null | undefined): number | null {
  return bytes == null || !Number.isFinite(bytes) ? null : toMb(bytes);
}

/** The inventory of `sd` with `active` flagged; `sizes` adds the size fields. */
export function elementInventory(
  sd: SpatialData,
  active: string | null,
  opts: { sizes?: boolean } = {},
): ElementInventory {
  const inv: Inventory = inventory(sd);
  const sizes = opts.sizes === true;
  const tables = inv.tables.map((t): TableItem => {
    const item: TableItem = {
      name: t.name,
      n_obs: t.n_obs,
      n_vars: t.n_vars,
      active: t.name === active,
      has_x: t.has_x,
      region: t.region,
    };
    if (!sizes) return item;
    const slots = tableSlotSizes(sd.tables[t.name]!).map((s) => ({
      path: s.path,
      size_mb: mb(s.bytes),
      required: s.required,
    }));
    return { ...item, size_mb: sumMb(slots.map((s) => s.size_mb)), slots };
  });
  const raster = (family: "images" | "labels") =>
    inv[family].map((r): RasterItem => {
      if (!sizes) return { ...r };
      const el = sd[family][r.name]!;
      const levels = r.levels.map((l, i) => ({ ...l, size_mb: mb(levelBytes(el.levels[i]!)) }));
      return { ...r, levels, size_mb: sumMb(levels.map((l) => l.size_mb)) };
    });
  const withSize = <T extends { name: string }>(item: T, family: "shapes" | "points"): T =>
    sizes ? { ...item, size_mb: mb(elementBytes(sd[family][item.name]!)) } : item;
  return {
    tables,
    shapes: inv.shapes.map((s) => withSize({ ...s }, "shapes")),
    points: inv.points.map((p) =>
      withSize({ ...p, feature_key: sd.points[p.name]!.featureKey ?? null }, "points"),
    ),
    images: raster("images"),
    labels: raster("labels"),
    coordinate_systems: inv.coordinate_systems,
  };
}

/**
 * The `viewer/` sidecar of a checkpoint: everything the serverless viewer needs to draw the data
 * without a backend, in the attributes of the `viewer` zarr group (so it arrives with the root's
 * consolidated metadata, in the same read as the store layout). Its JSON Schema
 * (`schemas/checkpoint/viewer-sidecar.schema.json`) is generated from these types.
 *
 * Versions: 1 had no shape transforms (a reader still opens it but withholds the cell boundary
 * overlay); 2 adds `to_world` on shapes and points. A checkpoint with no sidecar, or one older than
 * `MIN_SIDECAR_VERSION`, is rejected with a message asking the user to re-save.
 */
import type { ColumnEntry } from "../../data/inventory.js";

/** The sidecar version this build writes. */
export const SIDECAR_VERSION = 2;
/** The oldest sidecar version this build opens. */
export const MIN_SIDECAR_VERSION = 1;
/** Attribute key of the sidecar on the `viewer` group. */
export const SIDECAR_ATTR = "tessera_viewer";
/** Store path of the app state bytes (UTF-8 JSON in a uint8 array). */
export const APP_STATE_PATH = "viewer/app_state";
/** Store folder of the column-major expression mirrors, one group per table. */
export const X_MIRROR_PATH = "viewer/X_csc";
/** Store folder of the drawn plots' figures: `viewer/figures/<plot_id>/<fmt>`. */
export const FIGURES_PATH = "viewer/figures";

/** A 2-d affine `[a, b, c, d, e, f]`: `x' = a·x + b·y + c`, `y' = d·x + e·y + f`. */
export type Affine6 = [number, number, number, number, number, number];

/** An obsm entry: key and number of components. */
export interface SidecarObsm {
  name: string;
  /** @asType integer */
  n_components: number;
}

/** One pyramid level: index (0 = finest), size in pixels, store path of its array. */
export interface SidecarLevel {
  /** @asType integer */
  level: number;
  /** @asType integer */
  width: number;
  /** @asType integer */
  height: number;
  path: string;
}

/** A table as the viewer sees it. */
export interface SidecarTable {
  name: string;
  /** @asType integer */
  n_obs: number;
  /** @asType integer */
  n_vars: number;
  obs: ColumnEntry[];
  obsm: SidecarObsm[];
  has_x: boolean;
  /** Group of the column-major mirror of X (`viewer/X_csc/<table>`), null when X was not saved. */
  x_mirror: string | null;
  /** Elements the table annotates. */
  region: string[];
}

/** An image or labels element as the viewer sees it. */
export interface SidecarRaster {
  name: string;
  /** Store path of the element group (`images/<name>`). */
  path: string;
  levels: SidecarLevel[];
  channels: string[];
  dtype: string;
  /** Level-0 pixel → world (the sidecar's coordinate system) affine. */
  pixel_to_world: Affine6 | null;
}

/** A shapes or points element as the viewer sees it. */
export interface SidecarVector {
  name: string;
  path: string;
  /** @asType integer */
  n: number;
  /** Geometry type (shapes) or `points`. */
  geometry: string;
  /** Element → world affine (version ≥ 2); null when the element has no path to the world system. */
  to_world: Affine6 | null;
}

/** The figure files one drawn plot carries, with byte lengths per format. */
export interface SidecarFigure {
  plot_id: string;
  formats: { svg?: number; pdf?: number; png?: number };
}

/** The viewer sidecar. */
export interface ViewerSidecar {
  /** @asType integer */
  version: number;
  writer: { name: string; version: string };
  /** Dataset (session) name. */
  name: string;
  /** Table the viewer colours cells from; null when the object has no table. */
  active_table: string | null;
  /** The world coordinate system every `*_to_world` refers to. */
  coordinate_system: string;
  tables: SidecarTable[];
  images: SidecarRaster[];
  labels: SidecarRaster[];
  shapes: SidecarVector[];
  points: SidecarVector[];
  figures: SidecarFigure[];
  /** Store path of the app state blob. */
  app_state: string;
}

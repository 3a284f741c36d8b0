/**
 * The `DataSource` interface (client.md 19.2): one interface for a live session over HTTP and for a
 * checkpoint read in the browser over Range. The canvases only ever talk to a DataSource.
 */

import type { ShapeAnnotation } from "../sdk/data/shape-annotations.js";
import type { FieldData } from "../sdk/display/field-data.js";
import type { AppState } from "../sdk/io/checkpoint/app-state.js";
import type { ImageInfo } from "../sdk/raster/info.js";

/** One field decoded from its Arrow payload (shared with the server's figure renderer). */
export type { FieldData } from "../sdk/display/field-data.js";

/** What the active table offers (the SessionState `fields` block). */
export interface SourceFields {
  obs: { name: string; kind: "categorical" | "numeric" }[];
  obsm: { name: string; n_components: number }[];
  has_x: boolean;
  var_names_count: number;
  images: string[];
  shapes: string[];
}

/** A shapes element as the inventory lists it. */
export interface ShapesInfo {
  readonly name: string;
  readonly n: number;
  readonly geometry: string;
}

/** The element inventory subset the canvases use. */
export interface SourceElements {
  readonly shapes: readonly ShapesInfo[];
  readonly images: readonly { name: string; channels: string[] }[];
  /** Name of the active table. */
  readonly activeTable: string | null;
}

/** Boundary polygons flattened for deck.gl: outer rings only, one entry per drawn ring. */
export interface PolygonData {
  /** Number of rings. */
  readonly length: number;
  /** Vertex start of every ring, plus the total at the end (length + 1 entries). */
  readonly startIndices: Int32Array;
  /** Interleaved x, y of every vertex. */
  readonly positions: Float64Array;
  /** Row of the ring's cell in the active table (-1 none). */
  readonly cellIndex: Int32Array;
  /** Number of features the answer held (a multipolygon may give several rings). */
  readonly features: number;
}

/** One image tile's pixels, channel planes of one level. */
export interface TilePixels {
  readonly data: ArrayLike<number>;
  readonly width: number;
  readonly height: number;
}

/** Reads tiles of one image. */
export interface ImageLoader {
  readonly info: ImageInfo;
  /** The tile `(row, col)` of channel `c` at `level` (0 finest); null when it is all fill value. */
  getTile(
    level: number,
    c: number,
    row: number,
    col: number,
    signal?: AbortSignal,
  ): Promise<TilePixels | null>;
}

/** The data a canvas draws, from a live session or a checkpoint. */
export interface DataSource {
  /** Stable id (session id or checkpoint URL): part of the field cache key. */
  readonly id: string;
  /** Whether nothing may be written (serverless, snapshots). */
  readonly readOnly: boolean;
  getFieldData(path: string): Promise<FieldData>;
  getFields(): Promise<SourceFields>;
  getElements(): Promise<SourceElements>;
  searchVarNames(q: string, limit?: number): Promise<string[]>;
  /** Boundaries intersecting `bbox` (`[minx, miny, maxx, maxy]`, canvas world), or all when null. */
  getShapesGeoArrow(element: string, bbox: readonly number[] | null, limit?: number): Promise<PolygonData>;
  getImageInfo(element: string): Promise<ImageInfo>;
  openImageLoader(element: string): Promise<ImageLoader>;
  /** URL of a whole-image preview (null when the source has none). */
  imageThumbnailUrl(element: string, maxPx: number): string | null;
  /** A drawn plot's figure, or null when absent. */
  getPlotFigure(plotId: string, fmt: "svg" | "png" | "pdf"): Promise<Blob | null>;
  /** The app state (displays, history) as the source holds it. */
  getAppState?(): Promise<AppState>;
  /**
   * The shape annotations (the `annotations` element), for a source the app does not reach through
   * the live API (the serverless viewer reads them from its checkpoint, read-only).
   */
  getShapeAnnotations?(): Promise<ShapeAnnotation[]>;
  /**
   * Cells hidden in this browser (serverless viewer, client.md 17.5): `rows[i]` 1 hides cell i;
   * `version` moves with every change. Absent or null: every cell shows.
   */
  readonly hiddenCells?: { rows: Uint8Array; version: number } | null;
}

export type { ImageInfo };

/**
 * The spatial elements of a SpatialData object: images and labels (raster pyramids read lazily),
 * points (a frame of coordinates and features) and shapes (polygons, multipolygons or circles in flat
 * GeoArrow-style buffers). Every element carries its coordinate transformations, keyed by the name of
 * the coordinate system each one maps to.
 */

import type { DenseArray, DType } from "./arrays.js";
import type { DataFrame } from "./dataframe.js";
import { nRows } from "./dataframe.js";
import type { Transformation } from "./transforms.js";

/** Transformations of an element: target coordinate system name → transformation from the element. */
export type ElementTransformations = Readonly<Record<string, Transformation>>;

/** Fields every element has. */
export interface ElementBase {
  readonly name: string;
  readonly transformations: ElementTransformations;
  /** Bytes the element takes on disk (compressed), when it was read from a store that can tell. */
  readonly diskBytes?: number | null;
}

/** A selection along one axis: an index, a half-open `[start, stop)` range, or everything (`null`). */
export type AxisSelection = number | readonly [number, number] | null;

/** Something a raster level's pixels can be read from (a zarr array, a TIFF IFD, memory). */
export interface RasterSource {
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** Chunk (tile) shape in the same axis order. */
  readonly chunks: readonly number[];
  /** Read a region (one selection per axis; omitted = everything) as a C-order dense array. */
  read(selection?: readonly AxisSelection[], signal?: AbortSignal): Promise<DenseArray>;
}

/** One level of a pyramid. */
export interface RasterLevel {
  /** Path of the level inside its element (`0`, `s0` …). */
  readonly path: string;
  readonly shape: readonly number[];
  readonly chunks: readonly number[];
  readonly dtype: DType;
  /** This level's pixel → element-intrinsic transformation (NGFF `datasets[i].coordinateTransformations`). */
  readonly levelTransform: readonly Transformation[];
  readonly source: RasterSource;
  readonly diskBytes?: number | null;
}

/** An image: axes such as `c,y,x` (or `c,z,y,x`), channel names, pyramid levels finest first. */
export interface ImageElement extends ElementBase {
  readonly kind: "image";
  readonly axes: readonly string[];
  readonly channels: readonly string[];
  readonly dtype: DType;
  readonly levels: readonly RasterLevel[];
  /** The NGFF `omero` block as read (channel colours, windows), kept for writing back. */
  readonly omero?: unknown;
}

/** A label image (segmentation mask): integer ids, axes `y,x` or `z,y,x`. */
export interface LabelsElement extends ElementBase {
  readonly kind: "labels";
  readonly axes: readonly string[];
  readonly dtype: DType;
  readonly levels: readonly RasterLevel[];
}

/** Points (for example transcripts): a frame with coordinate columns and a feature column. */
export interface PointsElement extends ElementBase {
  readonly kind: "points";
  /** Spatial axes present as columns, canonical order (`x,y` or `x,y,z`). */
  readonly axes: readonly string[];
  readonly frame: DataFrame;
  /** Column naming each point's feature (gene), SpatialData's `feature_key`. */
  readonly featureKey?: string;
  /** Column naming each point's instance (cell), SpatialData's `instance_key`. */
  readonly instanceKey?: string;
}

/** Geometry types a shapes element holds. */
export type GeometryType = "point" | "polygon" | "multipolygon";

/**
 * Flat geometry buffers, GeoArrow-style. Coordinates are interleaved `x,y` pairs.
 * - point: one coordinate per feature.
 * - polygon: `geomOffsets` (feature → first ring, n+1 entries), `ringOffsets` (ring → first vertex).
 * - multipolygon: `geomOffsets` (feature → first polygon), `polygonOffsets` (polygon → first ring),
 *   `ringOffsets` (ring → first vertex).
 */
export interface Geometry {
  readonly type: GeometryType;
  readonly coords: Float64Array;
  readonly geomOffsets?: Int32Array;
  readonly polygonOffsets?: Int32Array;
  readonly ringOffsets?: Int32Array;
}

/** Shapes: polygons, multipolygons or circles (points with a `radius` column). */
export interface ShapesElement extends ElementBase {
  readonly kind: "shapes";
  readonly geometry: Geometry;
  /** Per-feature attributes (index = feature ids; `radius` for circles). */
  readonly frame: DataFrame;
}

/** Any spatial element. */
export type SpatialElement = ImageElement | LabelsElement | PointsElement | ShapesElement;

/** Number of features of a shapes element. */
export function shapesCount(s: ShapesElement): number {
  return nRows(s.frame);
}

/** Number of points of a points element. */
export function pointsCount(p: PointsElement): number {
  return nRows(p.frame);
}

/** Spatial size (width, height) of a raster level from its shape and axes. */
export function levelSize(
  axes: readonly string[],
  shape: readonly number[],
): { width: number; height: number } {
  const xi = axes.indexOf("x");
  const yi = axes.indexOf("y");
  return { width: shape[xi] ?? 0, height: shape[yi] ?? 0 };
}

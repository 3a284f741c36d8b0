/**
 * Write a shapes element as spatialdata ≥ 0.6 does (shapes format 0.3): `shapes.parquet` in
 * GeoParquet 1.0.0 with WKB geometry in column `geometry` (geopandas' layout: pandas metadata, a
 * RangeIndex as metadata or the index as `__index_level_0__`), and a zarr v3 group with attrs
 * `encoding-type: "ngff:shapes"`, `axes: ["x","y"]`, `coordinateTransformations` and
 * `spatialdata_attrs: {version: "0.3"}`. Circles are Points plus the frame's `radius` column.
 */

import * as zarr from "zarrita";
import { nRows } from "../../data/dataframe.js";
import type { ShapesElement } from "../../data/elements.js";
import { encodeWkbColumn, geometryBbox, geometryCount, geoParquetTypeName } from "../geometry/wkb-write.js";
import { storeKey } from "../parquet/source.js";
import { writeFrameParquet } from "../parquet/write.js";
import { elementGroupAttrs } from "../points/element-attrs.js";
import type { WritableStore } from "../points/write.js";

/** SpatialData's current shapes format version (GeoParquet). */
export const SHAPES_FORMAT_VERSION = "0.3";

/** Encode a shapes element's geometry and frame as GeoParquet 1.0.0 bytes. */
export function shapesToGeoParquet(shapes: ShapesElement): Uint8Array {
  const n = geometryCount(shapes.geometry);
  const rows = nRows(shapes.frame);
  if (n !== rows) throw new Error(`shapes "${shapes.name}": ${n} geometries but ${rows} frame rows`);
  if (shapes.frame.columnOrder.includes("geometry")) {
    throw new Error(
      `shapes "${shapes.name}": the frame has a "geometry" column, which the geometry itself is written as`,
    );
  }
  const bbox = geometryBbox(shapes.geometry);
  const geo = {
    version: "1.0.0",
    primary_column: "geometry",
    columns: {
      geometry: {
        encoding: "WKB",
        // null = "undefined CRS"; an absent crs would mean OGC:CRS84 (lon/lat), which these are not.
        crs: null,
        geometry_types: [geoParquetTypeName(shapes.geometry)],
        ...(bbox ? { bbox } : {}),
      },
    },
    creator: { library: "tessera", version: "0.1.0" },
  };
  return writeFrameParquet(shapes.frame, {
    index: "pandas",
    leading: [{ name: "geometry", values: encodeWkbColumn(shapes.geometry) }],
    kv: [{ key: "geo", value: JSON.stringify(geo) }],
  });
}

/** Write `shapes` to the group at `path` (`/shapes/<name>`); returns the parquet key written. */
export async function writeShapes(
  store: WritableStore,
  path: string,
  shapes: ShapesElement,
): Promise<string> {
  const bytes = shapesToGeoParquet(shapes);
  const key = storeKey(path, "shapes.parquet");
  await store.set(key, bytes);
  const attributes = elementGroupAttrs("ngff:shapes", ["x", "y"], shapes.transformations, {
    version: SHAPES_FORMAT_VERSION,
  });
  await zarr.create(zarr.root(store).resolve(storeKey(path)), { attributes });
  return key;
}

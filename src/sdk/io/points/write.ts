/**
 * Write a points element as spatialdata ≥ 0.6 does: a zarr v3 group with attrs `encoding-type:
 * "ngff:points"`, `axes`, `coordinateTransformations` and `spatialdata_attrs {version: "0.2",
 * feature_key, instance_key}`, and the data in the dask layout `points.parquet/part.0.parquet` (with
 * `__null_dask_index__`), so that dask/spatialdata read it. SNAPPY compression; int64 kept exact; the
 * feature column, when categorical, is a dictionary-encoded string column (see `parquet/write.ts`).
 */
import * as zarr from "zarrita";
import type { PointsElement } from "../../data/elements.js";
import { storeKey } from "../parquet/source.js";
import { writeFrameParquet } from "../parquet/write.js";
import { elementGroupAttrs } from "./element-attrs.js";

/** A store we can write raw keys to (zarrita's `Mutable`). */
export type WritableStore = zarr.Mutable;

/** SpatialData's current points format version. */
export const POINTS_FORMAT_VERSION = "0.2";

/** Write `points` to the group at `path` (`/points/<name>`); returns the parquet key written. */
export async function writePoints(
  store: WritableStore,
  path: string,
  points: PointsElement,
): Promise<string> {
  const where = storeKey(path);
  for (const a of points.axes) {
    if (!points.frame.columnOrder.includes(a))
      throw new Error(`${where}: points have no "${a}" column to write`);
  }
  const sd: Record<string, unknown> = { version: POINTS_FORMAT_VERSION };
  if (points.featureKey !== undefined) sd.feature_key = points.featureKey;
  if (points.instanceKey !== undefined) sd.instance_key = points.instanceKey;
  const attributes = elementGroupAttrs("ngff:points", points.axes, points.transformations, sd);
  const bytes = writeFrameParquet(points.frame, { index: { column: "__null_dask_index__" } });
  const key = storeKey(path, "points.parquet", "part.0.parquet");
  await store.set(key, bytes);
  await zarr.create(zarr.root(store).resolve(where), { attributes });
  return key;
}

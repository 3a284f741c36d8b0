/**
 * Read a SpatialData points element: the group's attrs plus `points.parquet` (a dask folder of
 * `part.N.parquet` files, or one file), into a PointsElement.
 */
import type { PointsElement } from "../../data/elements.js";
import { SPATIAL_AXES } from "../../data/transforms.js";
import { readParquetFrame } from "../parquet/dataset.js";
import { type ByteStore, storeKey } from "../parquet/source.js";
import { parseElementTransformations, spatialdataAttrs } from "./element-attrs.js";

/**
 * Read the points element at group `path` (`/points/transcripts`) whose group attrs are `attrs`.
 * `axes` come from the attrs (legacy stores write `null`; then from the x, y[, z] columns).
 */
export async function readPoints(
  store: ByteStore,
  path: string,
  attrs: Readonly<Record<string, unknown>>,
  name: string,
): Promise<PointsElement> {
  const where = storeKey(path);
  const { frame } = await readParquetFrame(store, storeKey(path, "points.parquet"));
  const cols = new Set(frame.columnOrder);
  const listed = Array.isArray(attrs.axes)
    ? (attrs.axes as unknown[]).filter((a): a is string => typeof a === "string")
    : [];
  const axes = SPATIAL_AXES.filter((a) => (listed.length > 0 ? listed.includes(a) : cols.has(a)));
  for (const a of axes) {
    if (!cols.has(a))
      throw new Error(`${where}: points have no "${a}" column (columns: ${frame.columnOrder.join(", ")})`);
  }
  if (!axes.includes("x") || !axes.includes("y")) throw new Error(`${where}: points need "x" and "y" axes`);
  const sd = spatialdataAttrs(attrs);
  const featureKey = typeof sd.feature_key === "string" ? sd.feature_key : undefined;
  const instanceKey = typeof sd.instance_key === "string" ? sd.instance_key : undefined;
  return {
    kind: "points",
    name,
    transformations: parseElementTransformations(attrs, where),
    axes,
    frame,
    ...(featureKey !== undefined ? { featureKey } : {}),
    ...(instanceKey !== undefined ? { instanceKey } : {}),
  };
}

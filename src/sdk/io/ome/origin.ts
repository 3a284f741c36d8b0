/**
 * Where a raster level read from OME-Zarr lives: the store it was opened on and the array's path in
 * it. The served raster store (src/sdk/raster) uses this to serve an element that is already laid out
 * for tiled viewing straight from its own files (a checkpoint's images) instead of rebuilding it.
 *
 * Kept beside the sources in a WeakMap rather than on the element, so that any copy of an element
 * that keeps its level sources keeps its origin, and nothing is added to the data model.
 */
import type { Readable } from "@zarrita/storage";
import type { RasterSource } from "../../data/elements.js";

/** The store and path a level was read from. */
export interface RasterOrigin {
  /** The store the element's group was opened on (it answers every key of the group). */
  readonly store: Readable;
  /** The store's location (file path or URL), for telling local files from remote ones. */
  readonly location: string | null;
  /** Path of the element's group in the store (`images/blobs_image`, `""` for a root image). */
  readonly groupPath: string;
  /** Path of the level's array inside the group (`s0`, `0`). */
  readonly levelPath: string;
  /** zarr format of the group. */
  readonly zarrFormat: 2 | 3;
  /** Whether the exposed axes are exactly the on-disk axes (no dropped or virtual axis). */
  readonly sameAxes: boolean;
}

const origins = new WeakMap<RasterSource, RasterOrigin>();

/** Remember where `source` reads from. */
export function recordRasterOrigin(source: RasterSource, origin: RasterOrigin): void {
  origins.set(source, origin);
}

/** Where `source` reads from, when it was opened from an OME-Zarr group. */
export function rasterOrigin(source: RasterSource): RasterOrigin | undefined {
  return origins.get(source);
}

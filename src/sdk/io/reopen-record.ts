/**
 * How a file-backed raster can be opened again in another thread: the descriptors and where they are
 * kept. Browser-safe (the readers that record them also run in the web app); the opening itself is in
 * `reopen.ts` (Node only).
 *
 * A raster source read from a file holds handles (a zarrita array on a store, a geotiff object, a
 * sharp pipeline) that cannot cross a worker boundary. Each reader records beside the source a
 * *reopen descriptor*: plain data saying which file or store, which array or level, and inside which
 * folder the paths must stay. The job transfer (`sdk/jobs/transfer.ts`) carries the descriptor in the
 * raster's marker, and the worker calls {@link reopenRaster} on the first read: the same reader opens
 * the same level again, and reads only the windows asked for.
 *
 * Descriptors are kept in a WeakMap beside the sources (like `ome/origin.ts`), so the data model is
 * unchanged and any copy of an element that keeps its level sources keeps them.
 */
import type { RasterSource } from "../data/elements.js";
import type { AxisMapping } from "./ome/axes.js";

/** One level of an OME-Zarr image or labels group, in a local or remote zarr store. */
export interface ZarrReopen {
  readonly kind: "ome-zarr";
  /** The store's location: an absolute folder, a `.zip` file, or an http(s) URL. */
  readonly location: string;
  /**
   * Folder a local store must lie in (and its links lead into); null for a URL. The reader leaves it
   * out (it may run in a browser); {@link portableReopen} adds it on the main thread.
   */
  readonly confine?: string | null;
  /** Path of the level's array in the store (`images/blobs_image/0`). */
  readonly arrayPath: string;
  readonly zarrFormat: 2 | 3;
  /** How the exposed axes map onto the array's axes (as the reader decided it). */
  readonly mapping: AxisMapping;
  /** Key of the array in error messages. */
  readonly where: string;
}

/** One pyramid level of an OME-TIFF (single file or a multi-file set through its companion). */
export interface OmeTiffReopen {
  readonly kind: "ome-tiff";
  /** Absolute path of the file that was opened (the `.ome.tif` or the companion `.ome`). */
  readonly path: string;
  /** Folder the file and every plane file it names must lie in. */
  readonly confine: string;
  readonly series: number;
  readonly level: number;
}

/** Single-plane TIFF files read as the channels of one image (MERSCOPE mosaics). */
export interface TiffPlanesReopen {
  readonly kind: "tiff-planes";
  /** Absolute paths, one per channel. */
  readonly files: readonly string[];
  readonly confine: string;
}

/** A PNG or JPEG decoded by sharp (Visium tissue images). */
export interface PictureReopen {
  readonly kind: "picture";
  readonly path: string;
  readonly confine: string;
  /** `[c, y, x]` as the reader exposed it (an alpha channel dropped). */
  readonly shape: readonly number[];
}

/** How to open a file-backed raster level again, in any thread. Plain data (structured-cloneable). */
export type RasterReopen = ZarrReopen | OmeTiffReopen | TiffPlanesReopen | PictureReopen;

const descriptors = new WeakMap<RasterSource, RasterReopen>();

/** Record how `source` can be opened again (called by the readers that open files). */
export function recordReopen(source: RasterSource, how: RasterReopen): void {
  descriptors.set(source, how);
}

/** How `source` can be opened again, when the reader that made it recorded it. */
export function reopenDescriptor(source: RasterSource): RasterReopen | undefined {
  return descriptors.get(source);
}

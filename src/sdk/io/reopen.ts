/**
 * Reopening a file-backed raster in a worker thread (Node only): the descriptor a reader recorded
 * (`reopen-record.ts`) made ready to cross (`portableReopen`, main thread) and opened again by the
 * same reader (`reopenRaster`, worker), which then reads only the windows asked for.
 */
import { resolve } from "node:path";
import type { RasterSource } from "../data/elements.js";
import { checkInside, confineRootFor } from "./confine.js";
import { type RasterReopen, reopenDescriptor } from "./reopen-record.js";

export type { RasterReopen } from "./reopen-record.js";

/**
 * The reopen descriptor of `source`, complete for another thread: a local zarr store gets its
 * confinement folder (the trusted data dir holding it, as the main thread knows it). Undefined when
 * the source was not opened from a file.
 */
export function portableReopen(source: RasterSource): RasterReopen | undefined {
  const how = reopenDescriptor(source);
  if (!how || how.kind !== "ome-zarr" || how.confine !== undefined) return how;
  const remote = /^https?:\/\//i.test(how.location);
  return { ...how, confine: remote ? null : confineRootFor(how.location) };
}

/** `path` resolved, after checking that it (its real path) lies inside `confine`. */
async function contained(path: string, confine: string, what: string): Promise<string> {
  const abs = resolve(path);
  await checkInside(abs, confine, `${what} ${abs}`);
  return abs;
}

/**
 * Open the raster level `how` describes. Paths are resolved and must stay inside the descriptor's
 * confinement folder (a descriptor is data that crossed a thread boundary: it is checked again, not
 * trusted). Each kind is opened by its own reader, loaded on demand.
 */
export async function reopenRaster(how: RasterReopen): Promise<RasterSource> {
  switch (how.kind) {
    case "ome-zarr": {
      let location = how.location;
      if (!/^https?:\/\//i.test(location)) {
        if (!how.confine) throw new Error(`${location}: a local store needs a confinement folder`);
        location = await contained(location, how.confine, "raster store");
      }
      const { reopenOmeZarrLevel } = await import("./ome/reopen.js");
      return reopenOmeZarrLevel({ ...how, location }, how.confine ?? null);
    }
    case "ome-tiff": {
      const path = await contained(how.path, how.confine, "OME-TIFF");
      const { readOmeTiff } = await import("./tiff/read.js");
      const img = await readOmeTiff(path, { series: how.series, confine: how.confine });
      const level = img.levels[how.level];
      if (!level) throw new Error(`${path}: has ${img.levels.length} pyramid level(s), not ${how.level + 1}`);
      return level.source;
    }
    case "tiff-planes": {
      const files = await Promise.all(how.files.map((f) => contained(f, how.confine, "TIFF plane")));
      const { openTiffPlanesSource } = await import("./vendors/raster-tiff.js");
      return openTiffPlanesSource(files, how.confine);
    }
    case "picture": {
      const path = await contained(how.path, how.confine, "image");
      const { pictureSource } = await import("./vendors/raster-png.js");
      return pictureSource(path, how.shape, how.confine);
    }
    default:
      throw new Error(`unknown raster reopen kind "${(how as { kind?: unknown }).kind}"`);
  }
}

/**
 * One OME-Zarr level opened again from its reopen descriptor, in a worker thread (Node only): the
 * store, the level array (with the chunk checks its codecs need) and the axis mapping the first
 * reader decided, so the source exposes exactly what the main thread's did.
 */
import { stat } from "node:fs/promises";
import type { Readable } from "@zarrita/storage";
import type { RasterSource } from "../../data/elements.js";
import { type RasterReopen, recordReopen } from "../reopen-record.js";
import { FsStore } from "../store/fs-store.js";
import { openStore } from "../store/open-store.js";
import { openLevel } from "./read.js";
import { KeyTrackingStore } from "./store.js";
import { zarrRasterSource } from "./zarr-source.js";

/**
 * Open the level `how` names: a local folder store confined to `confine` (its links may not lead
 * out), else whatever `openStore` makes of the location (a zip file, a URL).
 */
export async function reopenOmeZarrLevel(
  how: Extract<RasterReopen, { kind: "ome-zarr" }>,
  confine: string | null,
): Promise<RasterSource> {
  const isDir = confine !== null && (await stat(how.location).catch(() => null))?.isDirectory() === true;
  const store: Readable = isDir
    ? new FsStore(how.location, { confine })
    : ((await openStore(how.location)) as Readable);
  const tracker = new KeyTrackingStore(store);
  const arr = await openLevel(tracker, how.zarrFormat, how.arrayPath);
  const source = zarrRasterSource(arr, how.mapping, { where: how.where, tracker });
  recordReopen(source, { ...how, confine });
  return source;
}

/**
 * The writing half of a save job: the content a save writes (the whole object, or an export's
 * selection with its displays adjusted), the checkpoint file itself, and reopening the written file
 * so the session reads on from it. `Session` runs this in its queue and adopts the result; where the
 * file goes is `save.ts`'s decision, made before the job was queued.
 */
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { SpatialData } from "../data/spatialdata.js";
import type { AppState } from "../io/checkpoint/app-state.js";
import { stampCheckpoint } from "../io/checkpoint/mirror-gene.js";
import { type Checkpoint, openCheckpoint } from "../io/checkpoint/read.js";
import { type FigureFile, writeCheckpoint, writeCheckpointNamed } from "../io/checkpoint/write.js";
import type { WrittenZip } from "../io/store/zip-writer.js";
import { applySelection, type ExportSelection } from "./export-selection.js";
import type { SaveTarget } from "./save.js";

/** What a save job writes and where. */
export interface SaveWrite {
  readonly data: SpatialData;
  readonly appState: AppState;
  readonly activeTable: string | null;
  /** The name recorded in the file (and the session's name after a whole save). */
  readonly name: string;
  readonly target: SaveTarget;
  /** An export's selection, or null for a whole save. */
  readonly selection: ExportSelection | null;
  readonly figures: FigureFile[];
  /** Staging folder (the service's work dir). */
  readonly workDir: string;
  readonly signal: AbortSignal;
  readonly log: (text: string) => void;
}

/** Write the checkpoint of a save (see the module comment); the written file. */
export async function writeSave(w: SaveWrite): Promise<WrittenZip> {
  const app = { ...w.appState, name: w.name } as AppState;
  // An export writes the selected part, with its displays adjusted to what it keeps.
  const content = w.selection
    ? applySelection(w.data, app, w.selection)
    : { data: w.data, appState: app, activeTable: w.activeTable };
  const opts = {
    appState: content.appState,
    figures: w.figures,
    name: w.name,
    activeTable: content.activeTable,
    workDir: w.workDir,
    signal: w.signal,
    onProgress: (m: string) => w.log(m),
  };
  await mkdir(w.workDir, { recursive: true });
  let written: WrittenZip;
  if (w.target.kind === "named") {
    await mkdir(w.target.folder, { recursive: true });
    written = await writeCheckpointNamed(content.data, w.target.folder, w.target.prefix, opts);
  } else {
    await mkdir(dirname(w.target.path), { recursive: true });
    written = await writeCheckpoint(content.data, w.target.path, opts);
  }
  w.log(`wrote ${written.path}`);
  return written;
}

/** Open a checkpoint a session just wrote; null (the in-memory object stays) if that fails. */
export async function reopenWritten(path: string, log: (t: string) => void): Promise<Checkpoint | null> {
  try {
    const cp = await openCheckpoint(path);
    await stampCheckpoint(cp);
    return cp;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    log(`note: the written checkpoint could not be reopened (${why}); reading on from memory`);
    return null;
  }
}

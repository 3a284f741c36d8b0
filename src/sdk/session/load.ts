/**
 * Loading a session's data: what a `load` source opens (a Tessera checkpoint with its app state, or
 * any other dataset), and how a session recovered after a restart is brought up to its journal. Pure
 * of the session's bookkeeping: these functions return what was read or planned, and `Session` (the
 * job runner) commits it in one synchronous step.
 */
import type { SpatialData } from "../data/spatialdata.js";
import type { AppState, HistEntry } from "../io/checkpoint/app-state.js";
import { stampCheckpoint } from "../io/checkpoint/mirror-gene.js";
import { type Checkpoint, checkpointFromStore, hasSidecar } from "../io/checkpoint/read.js";
import { openData } from "../io/open.js";
import { openStore } from "../io/store/open-store.js";
import type { ReadableStore } from "../io/store/types.js";
import { type ReadPool, readOffThread } from "../io/vendors/off-thread.js";
import { recognizeVendor } from "../io/vendors/recognize.js";
import { openZarr, type ZarrTree } from "../io/zarr/open.js";
import { stepKey } from "../recipes/model.js";
import { settleLoadedState } from "./app-state-machine.js";
import { defaultActiveTable } from "./fields.js";
import type { SessionFunctions } from "./functions.js";

/** What a `load` source gave: the object, its app state, the active table, the checkpoint if it is one. */
export interface LoadedData {
  readonly data: SpatialData;
  /** The app state read with the data (settled: work in flight cannot resume), or null for none. */
  readonly appState: AppState | null;
  readonly activeTable: string | null;
  /** The checkpoint the data was read from (its mirror serves genes), or null for another format. */
  readonly checkpoint: Checkpoint | null;
  /** The name the checkpoint recorded, or null. */
  readonly recordedName: string | null;
}

/** Where an instrument folder's parse runs, and who hears its reader's progress and log. */
export interface LoadWorkers {
  /** The job pool (the parse runs there; without it, on this thread). */
  readonly pool: ReadPool;
  /** The load job's log (reader lines stream as `job.log`). */
  readonly log?: (line: string) => void;
  /** The load job's progress, 0–1 (streams as `job.progress`). */
  readonly progress?: (fraction: number, message?: string) => void;
}

/**
 * Open `path` (a path already contained in the data dir, or the service's own autosave): a Tessera
 * checkpoint restores its app state and active table; an instrument folder is parsed on `workers.pool`
 * (never on this thread when a pool is given); any other input is read with `openData`.
 * `progress` hears the steps (message, percent).
 */
export async function openLoadPath(
  path: string,
  progress: (message: string, pct: number) => void,
  signal: AbortSignal,
  workers?: LoadWorkers,
): Promise<LoadedData> {
  // Open the store and its metadata once: they tell a checkpoint apart and then serve its reading.
  let opened: { store: ReadableStore; tree: ZarrTree } | null = null;
  if (!/\.(h5ad|tiff?|companion\.ome)$/i.test(path)) {
    try {
      const store = await openStore(path);
      const tree = await openZarr(store);
      if (await hasSidecar(tree)) opened = { store, tree };
    } catch {
      // Not a zarr store (or unreadable): `openData` below says what is wrong.
    }
  }
  signal.throwIfAborted();
  if (opened) {
    progress("reading the checkpoint", 20);
    const cp = await checkpointFromStore(opened.store, opened.tree, path);
    signal.throwIfAborted();
    progress("restoring the app state", 80);
    await stampCheckpoint(cp);
    return {
      data: cp.sdata,
      appState: settleLoadedState(cp.appState),
      activeTable: defaultActiveTable(cp.sdata, cp.sidecar.active_table),
      checkpoint: cp,
      recordedName: cp.appState.name ?? cp.sidecar.name ?? null,
    };
  }
  const vendor = workers ? recognizeVendor(path) : null;
  if (vendor && workers) {
    progress(`reading with ${vendor.key}`, 5);
    workers.log?.(`recognised ${path} as ${vendor.key} input; parsing it on a job worker`);
    const { sdata } = await readOffThread(
      workers.pool,
      { path },
      {
        signal,
        log: workers.log,
        progress: (f, m) => {
          workers.progress?.(f, m);
          progress(m ?? "reading", 5 + Math.round(f * 90));
        },
      },
    );
    return {
      data: sdata,
      appState: null,
      activeTable: defaultActiveTable(sdata),
      checkpoint: null,
      recordedName: null,
    };
  }
  progress("reading the dataset", 20);
  const { sdata, appState } = await openData(path);
  signal.throwIfAborted();
  return {
    data: sdata,
    appState: appState ? settleLoadedState(appState) : null,
    activeTable: defaultActiveTable(sdata),
    checkpoint: null,
    recordedName: null,
  };
}

/**
 * How a recovered session, just loaded (from its autosave or its source), reaches its journal: the
 * journal's displays and name, its plots (drawn ones as invalidated: their figures were not kept), its
 * pending steps, and every computation the loaded state lacks, to be queued again in order with its
 * recorded parameters (`replay`).
 */
export function restorePlan(
  loaded: AppState,
  journal: AppState,
  functions: Pick<SessionFunctions, "get">,
): { appState: AppState; replay: HistEntry[] } {
  const has = new Set([...loaded.compute_history, ...loaded.plots].map((e) => e.id));
  const replay: HistEntry[] = [];
  let app: AppState = { ...loaded, displays: journal.displays };
  if (journal.name) app = { ...app, name: journal.name };
  for (const p of journal.plots) {
    if (has.has(p.id)) continue;
    const status =
      p.status === "drawn" || p.status === "invalidated"
        ? "invalidated"
        : p.status === "pending"
          ? "pending"
          : null;
    if (status) app = { ...app, plots: [...app.plots, { ...p, status }] };
  }
  for (const e of journal.compute_history) {
    if (has.has(e.id)) continue;
    if (e.status === "pending") app = { ...app, compute_history: [...app.compute_history, e] };
    else if (
      // Done, or asked for and cut short by the stop: run again.
      (e.status === "completed" || e.status === "queued" || e.status === "running") &&
      functions.get(stepKey(e))?.effect_class === "compute"
    )
      replay.push(e);
  }
  return { appState: app, replay };
}

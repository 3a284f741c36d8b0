/**
 * Writing a checkpoint (`.sdata.zarr.zip`): the SpatialData store, the app state, the `viewer/`
 * sidecar, the column-major X mirrors and the figures, staged in a temporary folder, consolidated,
 * then zipped (STORED, deterministic, atomic rename). See docs/formats/checkpoint.md.
 */
import { mkdtemp, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import * as zarr from "zarrita";
import type { SpatialData } from "../../data/spatialdata.js";
import { writeServedRasterElement } from "../../raster/checkpoint-layout.js";
import { writeSpatialData } from "../spatialdata/write.js";
import { FsStore } from "../store/fs-store.js";
import { recordPendingWrite, stagePrefix } from "../store/pending-writes.js";
import type { ListableWritableStore } from "../store/types.js";
import { contentHashName, type WrittenZip, writeZipFromStore } from "../store/zip-writer.js";
import { writeZarrArray } from "../zarr/arrays.js";
import { consolidateV3 } from "../zarr/consolidated.js";
import { assertV3Hierarchy } from "../zarr/hierarchy-v3.js";
import { type AppState, emptyAppState } from "./app-state.js";
import { buildSidecar } from "./build-sidecar.js";
import { APP_STATE_PATH, FIGURES_PATH, SIDECAR_ATTR, type SidecarFigure, X_MIRROR_PATH } from "./sidecar.js";
import { validateAppState, validateSidecar } from "./validate.js";
import { writeXMirror } from "./x-mirror.js";

/** A drawn plot's figure in one format. */
export interface FigureFile {
  plotId: string;
  format: "svg" | "pdf" | "png";
  bytes: Uint8Array;
}

/** Options of `writeCheckpoint`. */
export interface WriteCheckpointOptions {
  /** App state to store (default: empty). */
  appState?: AppState;
  /** Dataset name recorded in the sidecar (default: the file name without extension). */
  name?: string;
  /** Table the viewer colours from (default: `table`, else the first). */
  activeTable?: string | null;
  /** World coordinate system (default: `global`, else the first). */
  coordinateSystem?: string;
  figures?: FigureFile[];
  /** Folder for the staging store (default: the system temp folder). */
  workDir?: string;
  /** Progress messages. */
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

/** A dataset name from a path: the file or folder name without its format extensions. */
export function datasetName(path: string): string {
  const base = basename(path.replace(/[\\/]+$/, ""));
  return base.replace(/(\.sdata)?(\.ome)?\.(zarr\.zip|zarr|zip|h5ad|tiff?|companion\.ome)$/i, "") || "data";
}

/** Write the column-major copy of each table's X under `viewer/X_csc/<table>`, streaming (see x-mirror.ts). */
async function writeXMirrors(
  sd: SpatialData,
  store: ListableWritableStore,
  signal?: AbortSignal,
): Promise<void> {
  const tables = Object.entries(sd.tables).filter(([, t]) => t.X);
  if (tables.length === 0) return;
  const root = zarr.root(store);
  // zarr v3 has no implicit groups: `viewer/X_csc` needs its own zarr.json for strict readers.
  await zarr.create(root.resolve(X_MIRROR_PATH), { attributes: {} });
  for (const [name, table] of tables.sort(([a], [b]) => (a < b ? -1 : 1))) {
    signal?.throwIfAborted();
    await writeXMirror(root.resolve(`${X_MIRROR_PATH}/${name}`), table.X!, signal ? { signal } : {});
  }
}

/** Store a byte blob as a 1-d uint8 array in one chunk. */
async function writeBlob(store: ListableWritableStore, path: string, bytes: Uint8Array): Promise<void> {
  await writeZarrArray(
    zarr.root(store).resolve(path),
    { dtype: "uint8", shape: [bytes.length], data: bytes },
    {
      chunkShape: [Math.max(1, bytes.length)],
    },
  );
}

/**
 * Write `sd` as a checkpoint at `outPath`. The app state and sidecar are validated first; the file
 * appears under its final name only when complete, and a failure leaves any previous file intact.
 */
export async function writeCheckpoint(
  sd: SpatialData,
  outPath: string,
  opts: WriteCheckpointOptions = {},
): Promise<WrittenZip> {
  const appState = opts.appState ?? emptyAppState();
  validateAppState(appState);
  const figures = opts.figures ?? [];
  const figureIndex = new Map<string, SidecarFigure>();
  for (const f of figures) {
    const e = figureIndex.get(f.plotId) ?? { plot_id: f.plotId, formats: {} };
    e.formats[f.format] = f.bytes.length;
    figureIndex.set(f.plotId, e);
  }
  const sidecar = buildSidecar(sd, {
    // Named after the source, not the output file, so the same data gives the same bytes wherever saved.
    name: opts.name ?? appState.name ?? datasetName(sd.source?.path ?? outPath),
    ...(opts.activeTable !== undefined ? { activeTable: opts.activeTable } : {}),
    ...(opts.coordinateSystem ? { coordinateSystem: opts.coordinateSystem } : {}),
    figures: [...figureIndex.values()],
  });
  validateSidecar(sidecar);

  // Hidden, with this process's pid, so a restart after a crash can tell its scraps (pending-writes.ts).
  const stage = await mkdtemp(join(opts.workDir ?? tmpdir(), stagePrefix()));
  try {
    const store = new FsStore(stage);
    opts.onProgress?.("writing elements");
    await writeSpatialData(sd, store, {
      consolidate: false,
      // Images are saved in the served layout (a full 2× pyramid), so loading needs no rebuild.
      writeRaster: writeServedRasterElement,
      ...(opts.signal ? { signal: opts.signal } : {}),
      onElement: (family, name) => opts.onProgress?.(`writing ${family}/${name}`),
    });
    await zarr.create(zarr.root(store).resolve("viewer"), { attributes: { [SIDECAR_ATTR]: sidecar } });
    await writeBlob(store, APP_STATE_PATH, new TextEncoder().encode(JSON.stringify(appState)));
    opts.onProgress?.("writing the column-major expression mirror");
    await writeXMirrors(sd, store, opts.signal);
    if (figures.length) await zarr.create(zarr.root(store).resolve(FIGURES_PATH), { attributes: {} });
    for (const f of figures) {
      const group = `${FIGURES_PATH}/${f.plotId}`;
      if (!(await store.get(`/${group}/zarr.json`)))
        await zarr.create(zarr.root(store).resolve(group), { attributes: {} });
      await writeBlob(store, `${group}/${f.format}`, f.bytes);
    }
    await consolidateV3(store);
    // Metadata only, cheap: never publish a checkpoint that zarr-python (and so spatialdata) would refuse.
    await assertV3Hierarchy(store);
    opts.signal?.throwIfAborted();
    opts.onProgress?.("zipping");
    return await writeZipFromStore(outPath, store, opts.workDir ? { workDir: opts.workDir } : {});
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/**
 * Write `sd` as `<folder>/<prefix>-<content hash>.sdata.zarr.zip`: written under a temporary name,
 * hashed while written, then renamed to its content-addressed name.
 */
export async function writeCheckpointNamed(
  sd: SpatialData,
  folder: string,
  prefix: string,
  opts: WriteCheckpointOptions = {},
): Promise<WrittenZip> {
  if (!prefix.trim() || prefix.startsWith(".") || /[\\/]/.test(prefix)) {
    throw new Error(
      `invalid checkpoint prefix ${JSON.stringify(prefix)}: it must be a plain, non-blank file name stem`,
    );
  }
  const pending = join(resolve(folder), `.${prefix}.pending-${process.pid}-${Date.now()}.zip`);
  const forget = await recordPendingWrite(opts.workDir, pending);
  try {
    return await publishNamed(sd, pending, prefix, opts);
  } finally {
    await forget();
  }
}

/** Write `sd` at the hidden `pending` path, then rename it to its content-hash name beside. */
async function publishNamed(
  sd: SpatialData,
  pending: string,
  prefix: string,
  opts: WriteCheckpointOptions,
): Promise<WrittenZip> {
  const written = await writeCheckpoint(sd, pending, { name: prefix, ...opts });
  const finalPath = join(dirname(pending), contentHashName(prefix, written.sha256));
  try {
    // Same name, same bytes: keep the file there, which readers may have open (a rename over it would
    // give it a new identity and fail their next read).
    const existing = await stat(finalPath).catch(() => null);
    if (existing?.isFile() && existing.size === written.bytes) {
      await rm(pending, { force: true });
      return { ...written, path: finalPath };
    }
    await rename(pending, finalPath);
  } catch (err) {
    await rm(pending, { force: true });
    throw err;
  }
  return { ...written, path: finalPath };
}

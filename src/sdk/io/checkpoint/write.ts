/**
 * Writing a checkpoint (`.sdata.zarr.zip`): the SpatialData store, the app state, the `viewer/`
 * sidecar, the column-major X mirrors and the figures, staged in a temporary folder, consolidated,
 * then zipped (STORED, deterministic, atomic rename). See docs/formats/checkpoint.md.
 */
import { mkdtemp, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import * as zarr from "zarrita";
import { loadMatrix } from "../../data/lazy.js";
import type { SpatialData } from "../../data/spatialdata.js";
import { toCsc } from "../../math/sparse.js";
import { writeSpatialData } from "../spatialdata/write.js";
import { FsStore } from "../store/fs-store.js";
import type { ListableWritableStore } from "../store/types.js";
import { contentHashName, type WrittenZip, writeZipFromStore } from "../store/zip-writer.js";
import { writeZarrArray } from "../zarr/arrays.js";
import { consolidateV3 } from "../zarr/consolidated.js";
import { assertV3Hierarchy } from "../zarr/hierarchy-v3.js";
import { type AppState, emptyAppState } from "./app-state.js";
import { buildSidecar } from "./build-sidecar.js";
import { APP_STATE_PATH, FIGURES_PATH, SIDECAR_ATTR, type SidecarFigure, X_MIRROR_PATH } from "./sidecar.js";
import { validateAppState, validateSidecar } from "./validate.js";

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

/**
 * Non-zeros per chunk of the mirror: about two genes' worth, so one gene reads one or two chunks, kept
 * between 16 Ki (small tables: few bytes per gene read) and 256 Ki (big tables: not too many files).
 */
export function mirrorChunk(nnz: number, nVars: number): number {
  const perGene = nnz / Math.max(1, nVars);
  const target = 2 ** Math.ceil(Math.log2(Math.max(1, 2 * perGene)));
  return Math.min(262_144, Math.max(16_384, target));
}

/** A dataset name from a path: the file or folder name without its format extensions. */
export function datasetName(path: string): string {
  const base = basename(path.replace(/[\\/]+$/, ""));
  return base.replace(/(\.sdata)?(\.ome)?\.(zarr\.zip|zarr|zip|h5ad|tiff?|companion\.ome)$/i, "") || "data";
}

/**
 * Compressor of the mirror's chunks: gzip, which every reader of a gene has natively (Node's zlib,
 * decoding on its thread pool so the server keeps answering meanwhile; the browser's
 * DecompressionStream). zstd through WebAssembly decoded no faster (46 against 42 ms for one gene of
 * a million cells), blocked the event loop while it did, and made a larger file (512 against 470 MB
 * on the 1M-cell benchmark).
 */
const MIRROR_COMPRESSOR = { name: "gzip", configuration: { level: 1 } } as const;

/** Write the column-major copy of each table's X under `viewer/X_csc/<table>`. */
async function writeXMirrors(
  sd: SpatialData,
  store: ListableWritableStore,
  signal?: AbortSignal,
): Promise<void> {
  const root = zarr.root(store);
  let groupMade = false;
  for (const [name, table] of Object.entries(sd.tables).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!table.X) continue;
    signal?.throwIfAborted();
    const m = await loadMatrix(table.X);
    const csc = toCsc(m);
    if (!groupMade) {
      // zarr v3 has no implicit groups: `viewer/X_csc` needs its own zarr.json for strict readers.
      await zarr.create(root.resolve(X_MIRROR_PATH), { attributes: {} });
      groupMade = true;
    }
    const loc = root.resolve(`${X_MIRROR_PATH}/${name}`);
    await zarr.create(loc, {
      attributes: { "encoding-type": "csc_matrix", "encoding-version": "0.1.0", shape: [...csc.shape] },
    });
    const nnz = csc.data.length;
    const indptr = BigInt64Array.from(csc.indptr as ArrayLike<number>, (v) => BigInt(v));
    await writeZarrArray(loc.resolve("indptr"), { dtype: "int64", shape: [indptr.length], data: indptr });
    const indices = csc.indices instanceof Int32Array ? csc.indices : Int32Array.from(csc.indices);
    const data =
      csc.data instanceof Float32Array ? csc.data : Float32Array.from(csc.data as ArrayLike<number>, Number);
    const chunk = [Math.max(1, Math.min(mirrorChunk(nnz, csc.shape[1]), nnz))];
    const opts = { chunkShape: chunk, compressor: MIRROR_COMPRESSOR };
    await writeZarrArray(loc.resolve("indices"), { dtype: "int32", shape: [nnz], data: indices }, opts);
    await writeZarrArray(loc.resolve("data"), { dtype: "float32", shape: [nnz], data }, opts);
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

  const stage = await mkdtemp(join(opts.workDir ?? tmpdir(), "tessera-save-"));
  try {
    const store = new FsStore(stage);
    opts.onProgress?.("writing elements");
    await writeSpatialData(sd, store, {
      consolidate: false,
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
    return await writeZipFromStore(outPath, store);
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

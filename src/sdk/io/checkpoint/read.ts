/**
 * Opening a checkpoint (a local file or an HTTP URL read with Range requests): the data as a lazy
 * SpatialData object, the app state, the sidecar, the figure index, and one-gene reads from the
 * column-major mirror. A checkpoint without a usable sidecar is rejected with a message to re-save.
 */
import * as zarr from "zarrita";
import type { SpatialData } from "../../data/spatialdata.js";
import { readSpatialData } from "../spatialdata/read.js";
import { type OpenStoreOptions, openStore } from "../store/open-store.js";
import type { ReadableStore } from "../store/types.js";
import { registerCodecs } from "../zarr/codecs.js";
import { openZarr, type ZarrTree } from "../zarr/open.js";
import type { AppState } from "./app-state.js";
import {
  FIGURES_PATH,
  MIN_SIDECAR_VERSION,
  SIDECAR_ATTR,
  SIDECAR_VERSION,
  type ViewerSidecar,
} from "./sidecar.js";
import { validateAppState } from "./validate.js";

/** An opened checkpoint. */
export interface Checkpoint {
  readonly location: string;
  readonly sdata: SpatialData;
  readonly appState: AppState;
  readonly sidecar: ViewerSidecar;
  readonly warnings: string[];
  /** The store, for reading mirrors and figures lazily. */
  readonly store: ReadableStore;
  /** Whether the cell boundary overlay may be drawn (sidecar ≥ 2 carries shape transforms). */
  readonly boundariesAvailable: boolean;
}

const RESAVE = "open the data in Tessera and save it again to write a current checkpoint";

/** Read the sidecar of an opened store, or throw the re-save message. */
async function readSidecar(store: ReadableStore, tree: ZarrTree): Promise<ViewerSidecar> {
  const node = await tree.node("viewer");
  const sidecar = node?.attributes?.[SIDECAR_ATTR] as ViewerSidecar | undefined;
  if (!sidecar) throw new Error(`${store.location}: this checkpoint has no viewer/ sidecar; ${RESAVE}`);
  if (typeof sidecar.version !== "number" || sidecar.version < MIN_SIDECAR_VERSION) {
    throw new Error(
      `${store.location}: checkpoint sidecar version ${String(sidecar.version)} is older than supported (${MIN_SIDECAR_VERSION}); ${RESAVE}`,
    );
  }
  if (sidecar.version > SIDECAR_VERSION) {
    throw new Error(
      `${store.location}: checkpoint sidecar version ${sidecar.version} is newer than this Tessera reads (${SIDECAR_VERSION}); update Tessera`,
    );
  }
  return sidecar;
}

/** Read a whole uint8 array at `path` of the store. */
async function readBlob(store: ReadableStore, path: string): Promise<Uint8Array> {
  registerCodecs();
  const arr = await zarr.open.v3(zarr.root(store).resolve(path), { kind: "array" });
  const chunk = await zarr.get(arr, null);
  return chunk.data as Uint8Array;
}

/** Open a checkpoint from a local path or an `http(s)://` URL. */
export async function openCheckpoint(location: string, opts: OpenStoreOptions = {}): Promise<Checkpoint> {
  const store = await openStore(location, opts);
  return checkpointFromStore(store, await openZarr(store), location);
}

/**
 * A checkpoint from a store and zarr tree already opened (as `openData` has them after detecting the
 * format), so the zip directory and the consolidated metadata are read once.
 */
export async function checkpointFromStore(
  raw: ReadableStore,
  tree: ZarrTree,
  location: string,
): Promise<Checkpoint> {
  const sidecar = await readSidecar(raw, tree);
  const { sdata, warnings } = await readSpatialData(raw, { tree });
  // Metadata reads go through the tree's store, which answers them from the consolidated index.
  const store = tree.store;
  let appState: AppState;
  try {
    appState = JSON.parse(new TextDecoder().decode(await readBlob(store, sidecar.app_state))) as AppState;
    validateAppState(appState);
  } catch (err) {
    throw new Error(
      `${location}: the checkpoint's app state is unreadable (${err instanceof Error ? err.message : String(err)}); ${RESAVE}`,
    );
  }
  return {
    location,
    sdata: { ...sdata, source: { path: location, format: "checkpoint", version: String(sidecar.version) } },
    appState,
    sidecar,
    warnings,
    store,
    boundariesAvailable: sidecar.version >= 2,
  };
}

/** Whether an opened zarr tree is a checkpoint (has the viewer sidecar group). */
export async function hasSidecar(tree: ZarrTree): Promise<boolean> {
  const node = await tree.node("viewer");
  return Boolean(node?.attributes?.[SIDECAR_ATTR]);
}

const indptrCache = new WeakMap<ReadableStore, Map<string, Float64Array>>();

/**
 * One gene's values across all cells of `table`, from the column-major mirror: reads the (cached)
 * `indptr`, then only the chunks of `indices` and `data` that hold that gene.
 */
export async function readGeneFromMirror(
  cp: Checkpoint,
  table: string,
  gene: string | number,
): Promise<Float32Array> {
  registerCodecs();
  const t = cp.sidecar.tables.find((x) => x.name === table);
  if (!t) throw new Error(`${cp.location}: no table "${table}" in the checkpoint`);
  if (!t.x_mirror) throw new Error(`${cp.location}: table "${table}" was saved without X`);
  const names = cp.sdata.tables[table]?.var.index.values ?? [];
  const j = typeof gene === "number" ? gene : names.indexOf(gene);
  if (j < 0 || j >= t.n_vars)
    throw new Error(`${cp.location}: no gene ${JSON.stringify(gene)} in table "${table}"`);
  const root = zarr.root(cp.store).resolve(t.x_mirror);
  let cache = indptrCache.get(cp.store);
  if (!cache) {
    cache = new Map();
    indptrCache.set(cp.store, cache);
  }
  let indptr = cache.get(t.x_mirror);
  if (!indptr) {
    const arr = await zarr.open.v3(root.resolve("indptr"), { kind: "array" });
    const got = await zarr.get(arr, null);
    indptr = Float64Array.from(got.data as BigInt64Array, Number);
    cache.set(t.x_mirror, indptr);
  }
  const start = indptr[j]!;
  const end = indptr[j + 1]!;
  const out = new Float32Array(t.n_obs);
  if (end === start) return out;
  const [idxArr, dataArr] = await Promise.all([
    zarr.open.v3(root.resolve("indices"), { kind: "array" }),
    zarr.open.v3(root.resolve("data"), { kind: "array" }),
  ]);
  const [idx, val] = await Promise.all([
    zarr.get(idxArr, [zarr.slice(start, end)]),
    zarr.get(dataArr, [zarr.slice(start, end)]),
  ]);
  const ii = idx.data as Int32Array;
  const vv = val.data as Float32Array;
  for (let k = 0; k < ii.length; k++) out[ii[k]!] = vv[k]!;
  return out;
}

/** A drawn plot's figure bytes from the checkpoint, or null when it carries none in that format. */
export async function readFigure(
  cp: Checkpoint,
  plotId: string,
  format: "svg" | "pdf" | "png",
): Promise<Uint8Array | null> {
  const f = cp.sidecar.figures.find((x) => x.plot_id === plotId);
  if (!f || f.formats[format] === undefined) return null;
  return readBlob(cp.store, `${FIGURES_PATH}/${plotId}/${format}`);
}

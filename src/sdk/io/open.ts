/**
 * Opening any input Tessera reads, by looking at what it is: a SpatialData store (folder or zip),
 * a Tessera checkpoint, an AnnData store (zarr folder/zip, MuData modalities) or `.h5ad`, a standalone
 * OME-Zarr image, or an OME-TIFF. The result is always a SpatialData object.
 */
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { ImageElement } from "../data/elements.js";
import { makeSpatialData, type SpatialData } from "../data/spatialdata.js";
import type { Table } from "../data/table.js";
import { readH5ad } from "./anndata/read-h5ad.js";
import { readAnnDataZarr } from "./anndata/read-zarr.js";
import type { AppState } from "./checkpoint/app-state.js";
import { checkpointFromStore, hasSidecar } from "./checkpoint/read.js";
import { datasetName } from "./checkpoint/write.js";
import { DataError } from "./data-error.js";
import { openOmeZarr } from "./ome/read.js";
import { isSpatialDataRoot, readSpatialData } from "./spatialdata/read.js";
import "./memory-budget-node.js";
import { openStore } from "./store/open-store.js";
import { readOmeTiff } from "./tiff/read.js";
import "./vendors/readers.js";
import { unsupportedFormatMessage } from "./known-formats.js";
import { lookedFor, recognizeVendor } from "./vendors/recognize.js";
import { readTenxH5File } from "./vendors/tenx/folder.js";
import { indexChildLister, openZarr } from "./zarr/open.js";

/** What `openData` gives. */
export interface OpenResult {
  sdata: SpatialData;
  warnings: string[];
  /** The format recognised (`checkpoint`, `spatialdata-zarr`, `anndata-zarr`, `anndata-h5ad`, `mudata-zarr`, `ome-zarr`, `ome-tiff`). */
  format: string;
  /** Present when the input is a checkpoint. */
  appState?: AppState;
}

/** Files one of which a zarr store (v2 or v3, consolidated or not) has at its root. */
const ZARR_ROOT_FILES = [".zgroup", ".zattrs", ".zarray", "zarr.json", ".zmetadata", "zmetadata"];

const TIFF_RE = /\.(ome\.)?tiff?$|\.companion\.ome$/i;

/** Open `location` (a path or an http(s) URL) whatever format it is in. */
export async function openData(location: string): Promise<OpenResult> {
  const isUrl = /^https?:\/\//i.test(location);
  let isDir = false;
  if (!isUrl) {
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(location);
    } catch {
      throw new Error(`${location}: no such file or directory`);
    }
    // A FIFO, socket or device would block whoever opens it: never opened.
    if (!st.isFile() && !st.isDirectory())
      throw new Error(`${location}: not a regular file or folder (a FIFO, socket or device is not read)`);
    isDir = st.isDirectory();
  }
  // An instrument's output folder (Visium, Xenium, MERSCOPE, CosMx, a 10x matrix): its reader, by what it holds.
  const vendor = isDir ? recognizeVendor(location) : null;
  if (vendor) {
    const r = await vendor.read(location);
    return { sdata: r.sdata, warnings: r.warnings, format: r.sdata.source?.format ?? vendor.key };
  }
  if (/\.h5$/i.test(location) && !isUrl) {
    const r = await readTenxH5File(location);
    return { sdata: r.sdata, warnings: r.warnings, format: "10x-h5" };
  }
  if (/\.h5ad$/i.test(location)) {
    if (isUrl) throw new Error(`${location}: .h5ad files are read from local paths only`);
    const { table, warnings } = await readH5ad(location);
    return { sdata: tableOnly(table, location, "anndata-h5ad"), warnings, format: "anndata-h5ad" };
  }
  if (TIFF_RE.test(location)) {
    if (isUrl) throw new Error(`${location}: OME-TIFF files are read from local paths only`);
    const image = await readOmeTiff(location);
    return {
      sdata: imageOnly({ ...image, name: datasetName(location) }, location, "ome-tiff"),
      warnings: [],
      format: "ome-tiff",
    };
  }

  const unsupported = isDir ? null : unsupportedFormatMessage(location);
  if (unsupported) throw new DataError(unsupported);
  const store = await openStore(location);
  // A folder with no zarr metadata at its root that fails as a store: say what every reader looked for.
  const noZarrRoot = isDir && !ZARR_ROOT_FILES.some((f) => existsSync(join(location, f)));
  const notRecognised = (err: unknown) =>
    noZarrRoot
      ? new DataError(
          `${location}: not a recognised dataset (no zarr metadata, and no instrument reader matched; they looked for — ${lookedFor()})`,
          { cause: err },
        )
      : err;
  let tree: Awaited<ReturnType<typeof openZarr>>;
  let rootAttrs: Awaited<ReturnType<typeof tree.attrs>>;
  let children: string[];
  let sidecar: boolean;
  try {
    tree = await openZarr(store);
    sidecar = await hasSidecar(tree);
    rootAttrs = sidecar ? {} : await tree.attrs("");
    children = sidecar ? [] : await tree.children("");
  } catch (err) {
    throw notRecognised(err);
  }
  // Without consolidated metadata the AnnData reader lists groups from the tree's listing (no second walk).
  const listChildren = indexChildLister(tree);
  if (sidecar) {
    const cp = await checkpointFromStore(store, tree, location);
    return { sdata: cp.sdata, warnings: cp.warnings, format: "checkpoint", appState: cp.appState };
  }
  if (
    rootAttrs["encoding-type"] === "MuData" ||
    (children.includes("mod") && !isSpatialDataRoot(rootAttrs, children))
  ) {
    const tables: Record<string, Table> = {};
    const warnings: string[] = [];
    for (const mod of await tree.children("mod")) {
      const r = await readAnnDataZarr(tree.store, `mod/${mod}`, { listChildren });
      tables[mod] = r.table;
      warnings.push(...r.warnings.map((w) => `mod/${mod}: ${w}`));
    }
    return {
      sdata: makeSpatialData({ tables, source: { path: location, format: "mudata-zarr" } }),
      warnings,
      format: "mudata-zarr",
    };
  }
  if (rootAttrs["encoding-type"] === "anndata" || (children.includes("obs") && children.includes("var"))) {
    const { table, warnings } = await readAnnDataZarr(tree.store, "/", { listChildren });
    return { sdata: tableOnly(table, location, "anndata-zarr"), warnings, format: "anndata-zarr" };
  }
  if (isSpatialDataRoot(rootAttrs, children)) {
    const { sdata, warnings } = await readSpatialData(store, { tree });
    return { sdata, warnings, format: "spatialdata-zarr" };
  }
  const ome =
    rootAttrs.multiscales ||
    (rootAttrs.ome as Record<string, unknown> | undefined)?.multiscales ||
    rootAttrs["bioformats2raw.layout"];
  if (ome) {
    const name = datasetName(location);
    const contents = await openOmeZarr(tree.store, { name });
    const images = contents.image ? { [contents.image.name]: contents.image } : {};
    const labels = { ...contents.labels };
    return {
      sdata: makeSpatialData({ images, labels, source: { path: location, format: "ome-zarr" } }),
      warnings: [],
      format: "ome-zarr",
    };
  }
  throw new Error(
    `${location}: not a recognised dataset (looked for SpatialData, AnnData, MuData, OME-Zarr metadata; root has ${children.length ? `groups ${children.join(", ")}` : "no groups"}${isDir ? `; instrument readers looked for — ${lookedFor()}` : ""})`,
  );
}

function tableOnly(table: Table, location: string, format: string): SpatialData {
  return makeSpatialData({ tables: { table }, source: { path: location, format } });
}

function imageOnly(image: ImageElement, location: string, format: string): SpatialData {
  return makeSpatialData({ images: { [image.name]: image }, source: { path: location, format } });
}

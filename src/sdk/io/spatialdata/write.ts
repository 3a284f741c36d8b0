/**
 * Writing a SpatialData object as a zarr v3 store the way spatialdata ≥ 0.6 writes it (container
 * format 0.2, NGFF "0.5-dev-spatialdata" rasters, GeoParquet shapes, dask-style parquet points,
 * AnnData 0.12 tables), so that Python's `spatialdata.read_zarr` opens it.
 */
import * as zarr from "zarrita";
import { strings } from "../../data/arrays.js";
import type { ImageElement, LabelsElement } from "../../data/elements.js";
import type { SpatialData } from "../../data/spatialdata.js";
import { type Table, updateTable } from "../../data/table.js";
import { unsDict, unsSet } from "../../data/uns.js";
import { TESSERA_VERSION } from "../../version.js";
import { writeAnnDataZarr } from "../anndata/write.js";
import { writeRasterElement } from "../ome/write.js";
import { writePoints } from "../points/write.js";
import { writeShapes } from "../shapes/write.js";
import type { ListableWritableStore } from "../store/types.js";
import { consolidateV3 } from "../zarr/consolidated.js";

/** SpatialData container format version written. */
export const SPATIALDATA_FORMAT_VERSION = "0.2";

/** Options of `writeSpatialData`. */
export interface WriteSpatialDataOptions {
  /** Consolidate metadata into the root `zarr.json` when done (default true). */
  consolidate?: boolean;
  /** Called before each element is written, for progress reports. */
  onElement?: (family: string, name: string) => void;
  /**
   * Writes an image or labels element (default `writeRasterElement`); the checkpoint writer passes
   * one that also builds the served pyramid (src/sdk/raster/checkpoint-layout.ts).
   */
  writeRaster?: (
    el: ImageElement | LabelsElement,
    store: ListableWritableStore,
    path: string,
    signal?: AbortSignal,
  ) => Promise<void>;
  signal?: AbortSignal;
}

/**
 * Python reads a table's region annotation from `uns/spatialdata_attrs`; keep it in step with the
 * annotation the group attrs carry.
 */
function withUnsAnnotation(t: Table): Table {
  const a = t.annotation;
  if (!a) return t;
  const region = typeof a.region === "string" ? a.region : strings([...a.region]);
  const attrs = unsDict({ region, region_key: a.regionKey, instance_key: a.instanceKey });
  return updateTable(t, { uns: unsSet(t.uns, "spatialdata_attrs", attrs) });
}

/** Write `sd` into an empty writable, listable store (a folder or memory). */
export async function writeSpatialData(
  sd: SpatialData,
  store: ListableWritableStore,
  opts: WriteSpatialDataOptions = {},
): Promise<void> {
  const root = zarr.root(store);
  await zarr.create(root, {
    attributes: {
      ...sd.attrs,
      spatialdata_attrs: {
        version: SPATIALDATA_FORMAT_VERSION,
        spatialdata_software_version: `tessera ${TESSERA_VERSION}`,
      },
    },
  });
  const writeRaster =
    opts.writeRaster ??
    ((el: ImageElement | LabelsElement, st: ListableWritableStore, path: string, signal?: AbortSignal) =>
      writeRasterElement(el, st, path, signal ? { signal } : {}));
  const families = ["images", "labels", "points", "shapes", "tables"] as const;
  for (const family of families) {
    const names = Object.keys(sd[family]).sort();
    if (names.length === 0) continue;
    await zarr.create(root.resolve(family), { attributes: {} });
    for (const name of names) {
      opts.signal?.throwIfAborted();
      opts.onElement?.(family, name);
      const path = `/${family}/${name}`;
      try {
        switch (family) {
          case "images":
          case "labels":
            await writeRaster(sd[family][name]!, store, path, opts.signal);
            break;
          case "points":
            await writePoints(store, path, sd.points[name]!);
            break;
          case "shapes":
            await writeShapes(store, path, sd.shapes[name]!);
            break;
          case "tables":
            await writeAnnDataZarr(withUnsAnnotation(sd.tables[name]!), store, path, {
              spatialdataElement: true,
            });
            break;
        }
      } catch (err) {
        throw new Error(
          `cannot write ${family}/${name}: ${err instanceof Error ? err.message : String(err)}`,
          { cause: err },
        );
      }
    }
  }
  if (opts.consolidate ?? true) await consolidateV3(store);
}

/**
 * Reading a SpatialData zarr store (every version: the pre-versioned v0.0.x layout, format 0.1 on zarr
 * v2, format 0.2 on zarr v3): walks the five element groups and hands each element to its reader.
 * Images, labels and big matrices stay lazy; nothing but metadata and small frames is read here.
 */
import type { ImageElement, LabelsElement, SpatialElement } from "../../data/elements.js";
import { makeSpatialData, type SpatialData } from "../../data/spatialdata.js";
import { makeTable, type RegionAnnotation, type Table } from "../../data/table.js";
import { isUnsDict, type UnsValue } from "../../data/uns.js";
import { readAnnDataZarr } from "../anndata/read-zarr.js";
import { readOmeZarrImage, readOmeZarrLabels } from "../ome/read.js";
import { readPoints } from "../points/read.js";
import { readShapes } from "../shapes/read.js";
import type { ReadableStore } from "../store/types.js";
import { indexChildLister, openZarr, type ZarrTree } from "../zarr/open.js";
import { type StoreSizes, storeSizes } from "./sizes.js";

/** What reading a store gives: the object and any warnings (skipped nodes, unknown groups). */
export interface ReadResult {
  sdata: SpatialData;
  warnings: string[];
}

/** Options of `readSpatialData`. */
export interface ReadSpatialDataOptions {
  /** Read only these families (default: all five). */
  only?: readonly ("images" | "labels" | "points" | "shapes" | "tables")[];
  /** The store's zarr tree when the caller has opened it already (saves reading the metadata again). */
  tree?: ZarrTree;
}

/** Whether root attrs and children look like a SpatialData store. */
export function isSpatialDataRoot(
  attrs: Readonly<Record<string, unknown>>,
  children: readonly string[],
): boolean {
  // A raster element group also carries spatialdata_attrs; its multiscales tell it apart from a root.
  const ome = attrs.ome as Record<string, unknown> | undefined;
  if (attrs.multiscales || ome?.multiscales) return false;
  if ("spatialdata_attrs" in attrs) return true;
  return children.some((c) => ["images", "labels", "points", "shapes", "tables"].includes(c));
}

/** Read a SpatialData store. Errors name the store location and the element that failed. */
export async function readSpatialData(
  store: ReadableStore,
  opts: ReadSpatialDataOptions = {},
): Promise<ReadResult> {
  const tree = opts.tree ?? (await openZarr(store));
  // Tables of a store without consolidated metadata list their groups from the tree's listing.
  const listChildren = indexChildLister(tree);
  const warnings: string[] = [];
  const rootAttrs = await tree.attrs("");
  const sdAttrs = (rootAttrs.spatialdata_attrs ?? {}) as Record<string, unknown>;
  const version = typeof sdAttrs.version === "string" ? sdAttrs.version : undefined;
  const writer =
    typeof sdAttrs.spatialdata_software_version === "string"
      ? sdAttrs.spatialdata_software_version
      : undefined;
  const families = opts.only ?? ["images", "labels", "points", "shapes", "tables"];
  const rootChildren = await tree.children("");
  const sizes = await storeSizes(store);

  const images: Record<string, SpatialElement & { kind: "image" }> = {};
  const labels: Record<string, SpatialElement & { kind: "labels" }> = {};
  const points: Record<string, SpatialElement & { kind: "points" }> = {};
  const shapes: Record<string, SpatialElement & { kind: "shapes" }> = {};
  const tables: Record<string, Table> = {};

  for (const family of families) {
    if (!rootChildren.includes(family)) continue;
    for (const name of await tree.children(family)) {
      const path = `${family}/${name}`;
      try {
        const attrs = await tree.attrs(path);
        const diskBytes = sizes?.prefix(path) ?? null;
        switch (family) {
          case "images":
            images[name] = withLevelDisk(
              withDisk(await readOmeZarrImage(tree.store, path, name), diskBytes),
              path,
              sizes,
            );
            break;
          case "labels":
            labels[name] = withLevelDisk(
              withDisk(await readOmeZarrLabels(tree.store, path, name), diskBytes),
              path,
              sizes,
            );
            break;
          case "points":
            points[name] = withDisk(await readPoints(tree.store, path, attrs, name), diskBytes);
            break;
          case "shapes":
            shapes[name] = withDisk(await readShapes(tree.store, path, attrs, name), diskBytes);
            break;
          case "tables": {
            const {
              table,
              warnings: w,
              diskBytes: slotBytes,
            } = await readAnnDataZarr(tree.store, path, { listChildren });
            warnings.push(...w.map((m) => `tables/${name}: ${m}`));
            tables[name] = finishTable(table, attrs, sizes?.slots(path) ?? slotBytes);
            break;
          }
        }
      } catch (err) {
        throw new Error(
          `${store.location}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`,
          {
            cause: err,
          },
        );
      }
    }
  }
  // Pre-versioned stores (spatialdata < 0.1) kept one table at `table/table`.
  if (families.includes("tables") && rootChildren.includes("table") && !rootChildren.includes("tables")) {
    const inner = (await tree.children("table")).includes("table") ? "table/table" : "table";
    const { table, warnings: w } = await readAnnDataZarr(tree.store, inner, { listChildren });
    warnings.push(...w);
    tables.table = finishTable(table, await tree.attrs(inner), sizes?.slots(inner) ?? undefined);
  }
  for (const c of rootChildren) {
    if (!["images", "labels", "points", "shapes", "tables", "table", "viewer"].includes(c)) {
      warnings.push(`ignored unknown top-level group "${c}"`);
    }
  }
  const { spatialdata_attrs: _sd, ...userAttrs } = rootAttrs;
  const sdata = makeSpatialData({
    images,
    labels,
    points,
    shapes,
    tables,
    attrs: userAttrs,
    source: {
      path: store.location,
      format: "spatialdata-zarr",
      ...(version ? { version } : {}),
      ...(writer ? { writer } : {}),
    },
  });
  return { sdata, warnings };
}

function withDisk<T extends SpatialElement>(el: T, diskBytes: number | null): T {
  return diskBytes === null || el.diskBytes != null ? el : { ...el, diskBytes };
}

/** Fill each pyramid level's bytes on disk (the element's size is the sum of its levels). */
function withLevelDisk<T extends ImageElement | LabelsElement>(
  el: T,
  path: string,
  sizes: StoreSizes | null,
): T {
  if (!sizes) return el;
  const levels = el.levels.map((l) =>
    l.diskBytes != null ? l : { ...l, diskBytes: sizes.prefix(`${path}/${l.path}`) ?? 0 },
  );
  return { ...el, levels };
}

/**
 * Attach SpatialData's region annotation to a table: from the table group's attrs (`region`,
 * `region_key`, `instance_key`), falling back to `uns/spatialdata_attrs` (where Python reads it).
 */
function finishTable(
  table: Table,
  attrs: Readonly<Record<string, unknown>>,
  diskBytes?: Record<string, number>,
): Table {
  const annotation = regionAnnotation(attrs) ?? regionFromUns(table.uns.entries.spatialdata_attrs);
  return makeTable({
    ...table,
    annotation: annotation ?? table.annotation,
    ...(diskBytes ? { diskBytes } : {}),
  });
}

function regionAnnotation(attrs: Readonly<Record<string, unknown>>): RegionAnnotation | null {
  const { region, region_key, instance_key } = attrs as Record<string, unknown>;
  if (region === undefined || typeof region_key !== "string" || typeof instance_key !== "string") return null;
  if (region === null) return null;
  return { region: region as string | string[], regionKey: region_key, instanceKey: instance_key };
}

function regionFromUns(v: UnsValue | undefined): RegionAnnotation | null {
  if (!isUnsDict(v)) return null;
  const e = v.entries;
  const region = e.region;
  const regionValue =
    typeof region === "string"
      ? region
      : region && typeof region === "object" && "kind" in region && region.kind === "string"
        ? (region.values.filter((x) => x !== null) as string[])
        : null;
  if (regionValue === null || typeof e.region_key !== "string" || typeof e.instance_key !== "string")
    return null;
  return { region: regionValue, regionKey: e.region_key, instanceKey: e.instance_key };
}

export type { ZarrTree };

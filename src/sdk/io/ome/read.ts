/**
 * Read OME-Zarr (NGFF) images and labels lazily: opening reads group and array metadata only; pixels
 * come through each level's {@link RasterSource}. Works on zarr v2 (`.zarray`, any separator, blosc /
 * lz4 / zstd / zlib) and zarr v3 (`zarr.json`, `bytes` + `zstd`, sharding) alike, through zarrita.
 */

import type { Readable } from "@zarrita/storage";
import * as zarr from "zarrita";
import type { ImageElement, LabelsElement, RasterLevel } from "../../data/elements.js";
import { defaultAxes, type Transformation } from "../../data/transforms.js";
import { recordReopen } from "../reopen-record.js";
import { type AxisMapping, exposedNames, exposedVector, mapAxes } from "./axes.js";
import {
  checkLengths,
  composeScaleTranslation,
  hasMultiscales,
  type NgffImageMeta,
  parseNgffAttrs,
  resolveAxes,
} from "./multiscales.js";
import { recordRasterOrigin } from "./origin.js";
import { joinPath, KeyTrackingStore, keyOf, normPath, readGroupMeta, readJson } from "./store.js";
import { chunkCheckFor, modelDtype, zarrRasterSource } from "./zarr-source.js";

type ZArray = zarr.Array<zarr.DataType, Readable>;

/** Options of the OME-Zarr element readers. */
export interface ReadOmeZarrOptions {
  readonly signal?: AbortSignal;
}

/** What the readers share: the opened levels and the parsed metadata. */
interface OpenedRaster {
  readonly meta: NgffImageMeta;
  readonly mapping: AxisMapping;
  readonly levels: RasterLevel[];
  readonly transformations: Record<string, Transformation>;
}

/**
 * Read the image at group `path` of `store` (a multiscale image group such as `images/<name>` in a
 * SpatialData store, or the root of an OME-Zarr image) as an {@link ImageElement} named `name`.
 * Axes are exposed as `c,y,x` (`c,z,y,x` when z has more than one plane).
 */
export async function readOmeZarrImage(
  store: Readable,
  path: string,
  name: string,
  opts: ReadOmeZarrOptions = {},
): Promise<ImageElement> {
  const r = await openRaster(store, path, "image", opts);
  const axes = exposedNames(r.mapping);
  const ci = axes.indexOf("c");
  const nc = r.levels[0]!.shape[ci] ?? 1;
  const labels = r.meta.channels ?? [];
  const channels = Array.from({ length: nc }, (_, i) => labels[i] ?? String(i));
  return {
    kind: "image",
    name,
    axes,
    channels,
    dtype: r.levels[0]!.dtype,
    levels: r.levels,
    transformations: r.transformations,
    ...(r.meta.omero !== undefined ? { omero: r.meta.omero } : {}),
  };
}

/**
 * Read the label image at group `path` (for SpatialData `labels/<name>`) as a {@link LabelsElement}
 * with axes `y,x` (or `z,y,x`).
 */
export async function readOmeZarrLabels(
  store: Readable,
  path: string,
  name: string,
  opts: ReadOmeZarrOptions = {},
): Promise<LabelsElement> {
  const r = await openRaster(store, path, "labels", opts);
  return {
    kind: "labels",
    name,
    axes: exposedNames(r.mapping),
    dtype: r.levels[0]!.dtype,
    levels: r.levels,
    transformations: r.transformations,
  };
}

async function openRaster(
  store: Readable,
  path: string,
  kind: "image" | "labels",
  opts: ReadOmeZarrOptions,
): Promise<OpenedRaster> {
  const where = `/${normPath(path)}`;
  const group = await readGroupMeta(store, path);
  const meta = parseNgffAttrs(group.attrs, where);
  const tracker = new KeyTrackingStore(store);
  const arrays = await Promise.all(
    meta.datasets.map((d) => openLevel(tracker, group.zarrFormat, joinPath(path, d.path), opts.signal)),
  );
  const shape0 = arrays[0]!.shape;
  const fileAxes = resolveAxes(meta, shape0.length, where).map((a) => a.name);
  arrays.forEach((a, i) => {
    const at = `/${joinPath(path, meta.datasets[i]!.path)}`;
    if (a.shape.length !== shape0.length)
      throw new Error(`${at}: level has ${a.shape.length} dimensions, level 0 has ${shape0.length}`);
    if (a.dtype !== arrays[0]!.dtype)
      throw new Error(`${at}: level dtype ${a.dtype} differs from level 0 (${arrays[0]!.dtype})`);
  });
  meta.datasets.forEach((d, i) => {
    checkLengths(
      d.transforms,
      fileAxes.length,
      `/${joinPath(path, d.path)}: datasets[${i}].coordinateTransformations`,
    );
  });
  checkLengths(meta.transforms, fileAxes.length, `${where}: multiscales[0].coordinateTransformations`);
  const mapping = mapAxes(fileAxes, shape0, kind);
  const levels = arrays.map((arr, i): RasterLevel => {
    const ds = meta.datasets[i]!;
    const at = `/${joinPath(path, ds.path)}`;
    const source = zarrRasterSource(arr, mapping, { where: at, tracker });
    recordRasterOrigin(source, {
      store,
      location: locationOf(store),
      groupPath: normPath(path),
      levelPath: ds.path,
      zarrFormat: group.zarrFormat,
      sameAxes: mapping.exposed.every((a, k) => a.file === k) && mapping.exposed.length === fileAxes.length,
    });
    const location = locationOf(store);
    if (location !== null) {
      // A worker thread opens the same array again (see io/reopen.ts).
      // The confinement folder of a local store is added on the main thread (io/reopen.ts): this
      // reader also runs in the browser, where there is no file system to ask.
      recordReopen(source, {
        kind: "ome-zarr",
        location,
        arrayPath: joinPath(path, ds.path),
        zarrFormat: group.zarrFormat,
        mapping,
        where: at,
      });
    }
    return {
      path: ds.path,
      shape: source.shape,
      chunks: source.chunks,
      dtype: modelDtype(arr.dtype)!,
      levelTransform: levelTransform(ds.transforms, mapping, shape0, arr.shape, at),
      source,
    };
  });
  const transformations =
    Object.keys(meta.edges).length > 0
      ? { ...meta.edges }
      : { global: globalTransform(meta, mapping, where) };
  return { meta, mapping, levels, transformations };
}

/** A store's `location` (Tessera stores have one), or null. */
function locationOf(store: Readable): string | null {
  const loc = (store as unknown as { location?: unknown }).location;
  return typeof loc === "string" ? loc : null;
}

/** Open the level array at `path` of `store`, adding the chunk check its codecs need. */
export async function openLevel(
  store: KeyTrackingStore,
  format: 2 | 3,
  path: string,
  signal?: AbortSignal,
): Promise<ZArray> {
  const loc = zarr.root(store).resolve(path);
  const metaKey = format === 3 ? keyOf(path, "zarr.json") : keyOf(path, ".zarray");
  let arr: ZArray;
  try {
    arr =
      format === 3
        ? await zarr.open.v3(loc, { kind: "array", ...(signal ? { signal } : {}) })
        : await zarr.open.v2(loc, { kind: "array", attrs: false, ...(signal ? { signal } : {}) });
  } catch (err) {
    throw new Error(`${metaKey}: cannot open level array: ${(err as Error).message}`, { cause: err });
  }
  // Codecs that decode corrupt bytes without failing get a header check on every chunk read.
  const dtype = modelDtype(arr.dtype);
  const raw = dtype ? await readJson(store, metaKey, signal) : undefined;
  const check = raw && dtype ? chunkCheckFor(raw, arr.chunks, dtype) : undefined;
  if (check) store.addCheck(path, check);
  return arr;
}

/** The level's own transformations over the exposed axes; derived from shape ratios when the file has none. */
function levelTransform(
  steps: readonly Transformation[],
  mapping: AxisMapping,
  shape0: readonly number[],
  shape: readonly number[],
  where: string,
): Transformation[] {
  if (steps.length === 0) {
    // NGFF 0.1–0.3: no per-level transformations. Spatial axes scale by the size ratio to level 0.
    const scale = mapping.fileAxes.map((a, i) =>
      a === "x" || a === "y" || a === "z" ? shape0[i]! / shape[i]! : 1,
    );
    return [{ type: "scale", scale: exposedVector(mapping, scale, 1) }];
  }
  return steps.map((t): Transformation => {
    if (t.type === "scale") return { type: "scale", scale: exposedVector(mapping, t.scale, 1) };
    if (t.type === "translation")
      return { type: "translation", translation: exposedVector(mapping, t.translation, 0) };
    if (t.type === "identity") return { type: "identity" };
    throw new Error(`${where}: a "${t.type}" level transformation is not supported`);
  });
}

/**
 * The `global` transformation of plain OME-Zarr (no SpatialData edges): the multiscale-level
 * transformations applied after level 0's own, over the exposed axes.
 */
function globalTransform(meta: NgffImageMeta, mapping: AxisMapping, where: string): Transformation {
  const n = mapping.fileAxes.length;
  const steps = [...(meta.datasets[0]?.transforms ?? []), ...meta.transforms];
  const st = composeScaleTranslation(steps, n, where);
  const scale = exposedVector(mapping, st.scale, 1);
  const translation = exposedVector(mapping, st.translation, 0);
  const names = exposedNames(mapping);
  const axes = defaultAxes(names);
  const io = { input: { name: names.join(""), axes }, output: { name: "global", axes } };
  const unitScale = scale.every((v) => v === 1);
  const zeroShift = translation.every((v) => v === 0);
  if (unitScale && zeroShift) return { type: "identity", ...io };
  if (zeroShift) return { type: "scale", scale, ...io };
  if (unitScale) return { type: "translation", translation, ...io };
  return {
    type: "sequence",
    transformations: [
      { type: "scale", scale },
      { type: "translation", translation },
    ],
    ...io,
  };
}

/** What {@link openOmeZarr} found in a standalone OME-Zarr. */
export interface OmeZarrContents {
  /** The image, when the root (or bioformats2raw series) is a multiscale image. */
  readonly image?: ImageElement;
  /** Label images of the `labels/` subgroup, by name. */
  readonly labels: Readonly<Record<string, LabelsElement>>;
  /** Layout recognised: a multiscale at the root, or bioformats2raw series groups. */
  readonly layout: "multiscale" | "bioformats2raw" | "labels-only";
  /** NGFF version of the image metadata (`""` when unknown). */
  readonly ngffVersion: string;
  /** Zarr format of the root group. */
  readonly zarrFormat: 2 | 3;
}

/** Options of {@link openOmeZarr}. */
export interface OpenOmeZarrOptions extends ReadOmeZarrOptions {
  /** Name of the image element (default: the multiscale's `name` when meaningful, else `"image"`). */
  readonly name?: string;
  /** bioformats2raw series to open (default `"0"`). */
  readonly series?: string;
  /** Group path of the OME-Zarr inside the store (default the root). */
  readonly path?: string;
}

/**
 * Open a standalone OME-Zarr: a multiscale image at the root, a bioformats2raw layout (series group
 * `0`), and/or a `labels/` subgroup listing label images.
 */
export async function openOmeZarr(store: Readable, opts: OpenOmeZarrOptions = {}): Promise<OmeZarrContents> {
  const rootPath = normPath(opts.path ?? "");
  const root = await readGroupMeta(store, rootPath);
  const omeBlock =
    root.attrs.ome && typeof root.attrs.ome === "object" ? (root.attrs.ome as Record<string, unknown>) : {};
  const bf2raw = root.attrs["bioformats2raw.layout"] ?? omeBlock["bioformats2raw.layout"];
  let imagePath = rootPath;
  let layout: OmeZarrContents["layout"] = "multiscale";
  let attrs = root.attrs;
  if (bf2raw !== undefined && !hasMultiscales(root.attrs)) {
    layout = "bioformats2raw";
    imagePath = joinPath(rootPath, opts.series ?? "0");
    attrs = (await readGroupMeta(store, imagePath)).attrs;
  }
  let image: ImageElement | undefined;
  let ngffVersion = "";
  if (hasMultiscales(attrs)) {
    const meta = parseNgffAttrs(attrs, `/${imagePath}`);
    ngffVersion = meta.version;
    const fallback = meta.name && meta.name !== "/" && !meta.name.includes("/") ? meta.name : "image";
    image = await readOmeZarrImage(store, imagePath, opts.name ?? fallback, opts);
  }
  const labels = await readLabelsGroup(store, joinPath(imagePath, "labels"), opts);
  if (!image && Object.keys(labels).length === 0) {
    throw new Error(
      `/${rootPath}: not an OME-Zarr image (no "multiscales", no bioformats2raw series, no labels)`,
    );
  }
  return {
    ...(image ? { image } : {}),
    labels,
    layout: image ? layout : "labels-only",
    ngffVersion,
    zarrFormat: root.zarrFormat,
  };
}

/** Label images listed by a `labels` group (`labels: [...]`, or `ome.labels` in zarr v3); none if absent. */
async function readLabelsGroup(
  store: Readable,
  path: string,
  opts: ReadOmeZarrOptions,
): Promise<Record<string, LabelsElement>> {
  let attrs: Readonly<Record<string, unknown>>;
  try {
    attrs = (await readGroupMeta(store, path)).attrs;
  } catch {
    return {};
  }
  const ome = attrs.ome && typeof attrs.ome === "object" ? (attrs.ome as Record<string, unknown>) : {};
  const list = attrs.labels ?? ome.labels;
  if (!Array.isArray(list)) return {};
  const out: Record<string, LabelsElement> = {};
  for (const n of list) {
    if (typeof n !== "string") continue;
    out[n] = await readOmeZarrLabels(store, joinPath(path, n), n, opts);
  }
  return out;
}

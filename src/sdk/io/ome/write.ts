/**
 * Write an image or labels element as zarr v3 with NGFF 0.5 metadata, laid out as spatialdata ≥ 0.6
 * writes it (`ome.version`, `ome.multiscales[0].{datasets, name, axes, coordinateTransformations}`,
 * `ome.omero.channels`, labels' `ome["image-label"]`, `spatialdata_attrs.version`), levels `s0, s1, …`,
 * `dimension_names`, codecs `bytes` + `zstd`, and tile-friendly chunks (`1` on channel/z/time,
 * a power of two `T` on y and x).
 *
 * Pixels are copied level by level, one band of chunk rows at a time, so that a large image never sits
 * in memory twice: a band is read from the source, written, and dropped before the next one.
 */

import type { Mutable } from "@zarrita/storage";
import * as zarr from "zarrita";
import type { DType, TypedArray } from "../../data/arrays.js";
import type { ImageElement, LabelsElement, RasterLevel } from "../../data/elements.js";
import { defaultAxes, type Transformation, transformationToJson } from "../../data/transforms.js";
import { joinPath, normPath } from "./store.js";

/** Options of {@link writeRasterElement}. */
export interface WriteRasterOptions {
  /** Tile edge `T` for the y/x chunk sides; a power of two (default 512). Smaller images use the next power of two ≥ their size. */
  readonly tileSize?: number;
  /**
   * `spatialdata` (default): what spatialdata ≥ 0.6 writes — version `0.5-dev-spatialdata`, element
   * transformations as edges with input/output coordinate systems, `spatialdata_attrs`.
   * `ngff`: strict NGFF 0.5 — version `0.5`, the `global` transformation written as multiscale-level
   * scale/translation (identity omitted), no `spatialdata_attrs`; throws when the element has other
   * coordinate systems or a transformation NGFF 0.5 cannot express.
   */
  readonly flavor?: "spatialdata" | "ngff";
  /** `ome.version` to write (default by flavor: `"0.5-dev-spatialdata"` or `"0.5"`). */
  readonly ngffVersion?: string;
  /** `spatialdata_attrs.version` to write (default `"0.3"` for the spatialdata flavor); `null` leaves it out. */
  readonly spatialdataVersion?: string | null;
  /** zstd level (default 0, as spatialdata writes). */
  readonly zstdLevel?: number;
  readonly signal?: AbortSignal;
}

const NGFF_AXIS_TYPES: Record<string, string> = {
  c: "channel",
  t: "time",
  x: "space",
  y: "space",
  z: "space",
};

/**
 * Write `el` to group `path` of `store` (creating the group and one array per level). Existing keys
 * under the path are overwritten, not deleted.
 */
export async function writeRasterElement(
  el: ImageElement | LabelsElement,
  store: Mutable,
  path: string,
  opts: WriteRasterOptions = {},
): Promise<void> {
  const tile = opts.tileSize ?? 512;
  if (!Number.isInteger(Math.log2(tile)) || tile < 1)
    throw new Error(`writeRasterElement: tileSize ${tile} is not a power of two`);
  if (el.levels.length === 0) throw new Error(`writeRasterElement: element "${el.name}" has no levels`);
  const where = `/${normPath(path)}`;
  const axes = [...el.axes];
  const root = zarr.root(store);
  await zarr.create(root.resolve(normPath(path)), { attributes: groupAttributes(el, where, opts) });
  for (let i = 0; i < el.levels.length; i++) {
    opts.signal?.throwIfAborted();
    const level = el.levels[i]!;
    const levelPath = joinPath(path, `s${i}`);
    await writeLevel(level, axes, el.dtype, root.resolve(levelPath), tile, opts);
  }
}

/**
 * Write only the group metadata of `el` at `path` (its `zarr.json` with the attributes
 * `writeRasterElement` writes), for level arrays written by other means (the served-layout pyramid
 * builder); `el.levels` must describe the arrays `s0, s1, …` as written.
 */
export async function writeRasterGroup(
  el: ImageElement | LabelsElement,
  store: Mutable,
  path: string,
  opts: WriteRasterOptions = {},
): Promise<void> {
  const where = `/${normPath(path)}`;
  await zarr.create(zarr.root(store).resolve(normPath(path)), {
    attributes: groupAttributes(el, where, opts),
  });
}

/** The group attributes spatialdata writes for a raster element. */
function groupAttributes(
  el: ImageElement | LabelsElement,
  where: string,
  opts: WriteRasterOptions,
): Record<string, unknown> {
  const axes = el.axes;
  const shape0 = el.levels[0]!.shape;
  const datasets = el.levels.map((lv, i) => ({
    path: `s${i}`,
    coordinateTransformations: levelTransformJson(lv, axes, shape0),
  }));
  const ngff = opts.flavor === "ngff";
  const intrinsic = { name: axes.join(""), axes: defaultAxes(axes) };
  const coordinateTransformations = ngff
    ? ngffMultiscaleTransforms(el, where)
    : Object.entries(el.transformations).map(([cs, t]) => {
        const withIo: Transformation = {
          ...t,
          input: t.input ?? intrinsic,
          output: { name: cs, axes: t.output?.axes ?? defaultAxes(axes) },
        };
        return transformationToJson(withIo);
      });
  const multiscale = {
    datasets,
    name: el.kind === "image" ? where : el.name,
    axes: axes.map((a) => ({ name: a, type: NGFF_AXIS_TYPES[a] ?? "space" })),
    ...(coordinateTransformations.length > 0 ? { coordinateTransformations } : {}),
  };
  const ome: Record<string, unknown> = {};
  if (el.kind === "image") ome.omero = omeroBlock(el);
  ome.version = opts.ngffVersion ?? (ngff ? "0.5" : "0.5-dev-spatialdata");
  ome.multiscales = [multiscale];
  if (el.kind === "labels") ome["image-label"] = { version: "0.5" };
  const attrs: Record<string, unknown> = { ome };
  const sdv = opts.spatialdataVersion === undefined ? (ngff ? null : "0.3") : opts.spatialdataVersion;
  if (sdv !== null) attrs.spatialdata_attrs = { version: sdv };
  return attrs;
}

/**
 * Strict NGFF 0.5 multiscale transformations for the element's `global` system: a scale and/or a
 * translation over the element axes (none for the identity).
 */
function ngffMultiscaleTransforms(
  el: ImageElement | LabelsElement,
  where: string,
): Record<string, unknown>[] {
  const systems = Object.keys(el.transformations);
  if (systems.length === 0) return [];
  if (systems.length > 1 || systems[0] !== "global") {
    throw new Error(
      `${where}: strict NGFF 0.5 holds one "global" transformation; the element has ${systems.join(", ")}`,
    );
  }
  const axes = el.axes;
  const t = el.transformations.global!;
  const steps = t.type === "sequence" ? t.transformations : [t];
  const scale = axes.map(() => 1);
  const translation = axes.map(() => 0);
  for (const st of steps) {
    const own = st.input?.axes.map((a) => a.name) ?? axes;
    const vec = st.type === "scale" ? st.scale : st.type === "translation" ? st.translation : null;
    if (st.type === "identity") continue;
    if (!vec) throw new Error(`${where}: a "${st.type}" transformation cannot be written as strict NGFF 0.5`);
    axes.forEach((a, i) => {
      const j = own.indexOf(a);
      if (j < 0) return;
      if (st.type === "scale") {
        scale[i]! *= vec[j];
        translation[i]! *= vec[j];
      } else translation[i]! += vec[j];
    });
  }
  const out: Record<string, unknown>[] = [];
  if (scale.some((v) => v !== 1) || translation.some((v) => v !== 0)) out.push({ type: "scale", scale });
  if (translation.some((v) => v !== 0)) out.push({ type: "translation", translation });
  return out;
}

/** `omero` block: the one read (colours, windows) with labels set to the element's channel names. */
function omeroBlock(el: ImageElement): Record<string, unknown> {
  const prev = el.omero && typeof el.omero === "object" ? (el.omero as Record<string, unknown>) : {};
  const prevChannels = Array.isArray(prev.channels) ? (prev.channels as unknown[]) : [];
  const channels = el.channels.map((label, i) => {
    const old = prevChannels[i];
    return { ...(old && typeof old === "object" ? (old as Record<string, unknown>) : {}), label };
  });
  return { ...prev, channels };
}

/** A level's NGFF transformations (no coordinate systems); a shape-ratio scale when the level has none. */
function levelTransformJson(
  level: RasterLevel,
  axes: readonly string[],
  shape0: readonly number[],
): Record<string, unknown>[] {
  if (level.levelTransform.length > 0) {
    return level.levelTransform.map((t) => {
      const { input: _i, output: _o, ...rest } = t;
      return transformationToJson(rest as Transformation);
    });
  }
  const scale = axes.map((a, i) => (a === "x" || a === "y" || a === "z" ? shape0[i]! / level.shape[i]! : 1));
  return [{ type: "scale", scale }];
}

/** Codecs spatialdata writes: little-endian bytes (no endian for 1-byte types) then zstd. */
function codecsFor(dtype: DType, level: number): { name: string; configuration: Record<string, unknown> }[] {
  const oneByte = dtype === "bool" || dtype === "int8" || dtype === "uint8";
  return [
    { name: "bytes", configuration: oneByte ? {} : { endian: "little" } },
    { name: "zstd", configuration: { level, checksum: false } },
  ];
}

function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

async function writeLevel(
  level: RasterLevel,
  axes: readonly string[],
  dtype: DType,
  loc: zarr.Location<Mutable>,
  tile: number,
  opts: WriteRasterOptions,
): Promise<void> {
  const shape = [...level.shape];
  const yi = axes.indexOf("y");
  const xi = axes.indexOf("x");
  if (yi < 0 || xi < 0) throw new Error(`writeRasterElement: axes ${axes.join(",")} lack y and x`);
  const t = Math.min(tile, nextPow2(Math.max(shape[yi]!, shape[xi]!, 1)));
  const chunkShape = axes.map((a) => (a === "y" || a === "x" ? t : 1));
  const fillValue = dtype === "bool" ? false : dtype === "int64" || dtype === "uint64" ? 0n : 0;
  const arr = await zarr.create(loc, {
    shape,
    chunkShape,
    dtype: dtype as zarr.DataType,
    codecs: codecsFor(dtype, opts.zstdLevel ?? 0),
    fillValue: fillValue as zarr.Scalar<zarr.DataType>,
    dimensionNames: [...axes],
    attributes: {},
  });
  if (shape.some((n) => n === 0)) return;
  // A band spans whole source chunk rows, rounded up to whole output chunk rows, so that each source
  // chunk is decoded once per band and each output chunk is written whole.
  const srcY = level.source.chunks[yi] ?? t;
  const bandH = Math.min(shape[yi]!, t * Math.max(1, Math.ceil(srcY / t)));
  // Non-spatial axes are walked in blocks of the source chunk size (usually 1 channel at a time).
  const outer = axes.map((_, i) => i).filter((i) => i !== yi && i !== xi);
  const blocks = outer.map((i) => Math.max(1, Math.min(shape[i]!, level.source.chunks[i] ?? 1)));
  const pos = outer.map(() => 0);
  for (;;) {
    for (let y0 = 0; y0 < shape[yi]!; y0 += bandH) {
      opts.signal?.throwIfAborted();
      const y1 = Math.min(shape[yi]!, y0 + bandH);
      const sel: [number, number][] = shape.map((n) => [0, n] as [number, number]);
      outer.forEach((ax, k) => {
        sel[ax] = [pos[k]!, Math.min(shape[ax]!, pos[k]! + blocks[k]!)];
      });
      sel[yi] = [y0, y1];
      const band = await level.source.read(sel, opts.signal);
      const bshape = sel.map(([a, b]) => b - a);
      await zarr.set(
        arr,
        sel.map(([a, b]) => zarr.slice(a, b)),
        {
          data: asZarrData(band.data, dtype),
          shape: bshape,
          stride: cStrides(bshape),
        } as zarr.Chunk<zarr.DataType>,
      );
    }
    // Advance the outer (channel / z / time) position, last axis fastest.
    let k = outer.length - 1;
    for (; k >= 0; k--) {
      pos[k]! += blocks[k];
      if (pos[k]! < shape[outer[k]!]!) break;
      pos[k] = 0;
    }
    if (k < 0) break;
  }
}

function cStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!;
  return s;
}

/** zarrita holds bool data in its BoolArray view; everything else goes through as the typed array. */
function asZarrData(data: TypedArray, dtype: DType): unknown {
  if (dtype !== "bool") return data;
  return new zarr.BoolArray(data.buffer, data.byteOffset, data.length);
}

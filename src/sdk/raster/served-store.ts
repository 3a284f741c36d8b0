/**
 * The served raster store of one image or labels element: a zarr v3 hierarchy a browser reads chunk
 * by chunk (`zarr.json`, `{family}/zarr.json`, `{family}/{name}/zarr.json`, then one array per level
 * `{family}/{name}/s{k}` with chunks of one plane × `T × T`). See docs/formats/images.md.
 *
 * The group documents are made here (NGFF 0.5 `multiscales` with the served levels, `omero`
 * channel labels); the level arrays' `zarr.json` and chunks come from a backing store: the element's
 * own files when they are already laid out this way on local disk (a checkpoint's images), else the
 * folder a rebuild wrote under the session's raster cache. Only keys of that exact shape are answered
 * (every chunk key is parsed and range-checked), so no other key of a backing store is reachable.
 */
import type { Readable } from "@zarrita/storage";
import * as zarr from "zarrita";
import type { DType, TypedArray } from "../data/arrays.js";
import { allocArray, TYPED_ARRAY_OF } from "../data/arrays.js";
import type { ImageElement, LabelsElement } from "../data/elements.js";
import { rasterOrigin } from "../io/ome/origin.js";
import { registerCodecs } from "../io/zarr/codecs.js";
import { levelChunkEdge, planServedLevels, SERVED_TILE_SIZE } from "./build.js";
import type { ByteLru } from "./lru.js";

/** Which family an element belongs to. */
export type RasterFamily = "images" | "labels";

/** One level of a served store. */
export interface ServedLevel {
  /** Index, 0 = finest. */
  readonly level: number;
  /** Array path inside the element group (`s0`). */
  readonly path: string;
  readonly shape: readonly number[];
  readonly chunks: readonly number[];
  readonly width: number;
  readonly height: number;
}

/** Where a served store's level arrays are read from. */
export interface ServedBacking {
  /** A store answering `/${basePath}/${level.path}/…`. */
  readonly store: Readable;
  /** Group path of the element inside `store` (`""` for a cache folder). */
  readonly basePath: string;
  /** `source`: the element's own files; `cache`: a rebuild in the session's raster cache. */
  readonly kind: "source" | "cache";
  /** Folder or file the bytes live in. */
  readonly location: string;
}

/** Caches shared by every served store of a service. */
export interface ServedCaches {
  /** Raw (encoded) bytes of keys, and decoded chunks; bounded by bytes. */
  readonly chunks: ByteLru<Uint8Array | TypedArray>;
}

/** A key answered by a served store. */
export interface ServedBytes {
  readonly bytes: Uint8Array;
  /** `application/json` for `*.json` keys, else `application/octet-stream`. */
  readonly contentType: string;
}

interface KeyEncoding {
  readonly v2: boolean;
  readonly separator: string;
}

const NGFF_AXIS_TYPES: Record<string, string> = {
  c: "channel",
  t: "time",
  x: "space",
  y: "space",
  z: "space",
};
let storeIds = 0;
const encoder = new TextEncoder();

function keyEncodingOf(meta: Record<string, unknown>): KeyEncoding {
  const e = meta.chunk_key_encoding as { name?: string; configuration?: { separator?: string } } | undefined;
  const separator = e?.configuration?.separator ?? (e?.name === "v2" ? "." : "/");
  return { v2: e?.name === "v2", separator };
}

/** The served store of one element (see the module comment). Build with `openServedStore`. */
export class ServedRasterStore {
  /** Unique id (cache keys; changes when a store is rebuilt). */
  readonly id: string;
  readonly family: RasterFamily;
  readonly name: string;
  readonly kind: "image" | "labels";
  readonly axes: readonly string[];
  readonly dtype: DType;
  readonly channelNames: readonly string[];
  /** Tile edge `T`: chunks are `T × T`, or one chunk holds a whole small level. */
  readonly tileSize: number;
  readonly levels: readonly ServedLevel[];
  readonly backing: ServedBacking;
  private readonly levelMeta: readonly Record<string, unknown>[];
  private readonly encodings: readonly KeyEncoding[];
  private readonly groupDoc: Uint8Array;
  private readonly caches: ServedCaches;
  private readonly arrays = new Map<number, Promise<zarr.Array<zarr.DataType, Readable>>>();
  private readonly reader: Readable;

  constructor(init: {
    element: ImageElement | LabelsElement;
    family: RasterFamily;
    tileSize: number;
    levels: ServedLevel[];
    levelMeta: Record<string, unknown>[];
    backing: ServedBacking;
    caches: ServedCaches;
  }) {
    const el = init.element;
    this.id = `r${++storeIds}`;
    this.family = init.family;
    this.name = el.name;
    this.kind = el.kind;
    this.axes = [...el.axes];
    this.dtype = el.dtype;
    this.channelNames = el.kind === "image" ? [...el.channels] : [];
    this.tileSize = init.tileSize;
    this.levels = init.levels;
    this.backing = init.backing;
    this.levelMeta = init.levelMeta;
    this.encodings = init.levelMeta.map(keyEncodingOf);
    this.caches = init.caches;
    this.groupDoc = encoder.encode(JSON.stringify(this.groupMetadata(el)));
    const backing = init.backing.store;
    this.reader = {
      get: async (key, opts) => {
        const ck = `${this.id}:${key}`;
        const hit = this.caches.chunks.get(ck);
        if (hit) return hit as Uint8Array;
        const bytes = await backing.get(key, opts);
        if (bytes) this.caches.chunks.set(ck, bytes, bytes.byteLength);
        return bytes;
      },
    };
  }

  /** Path of the element group in the served store (`images/<name>`). */
  get groupPath(): string {
    return `${this.family}/${this.name}`;
  }

  private groupMetadata(el: ImageElement | LabelsElement): object {
    const yi = this.axes.indexOf("y");
    const xi = this.axes.indexOf("x");
    const l0 = this.levels[0]!;
    const datasets = this.levels.map((lv) => ({
      path: lv.path,
      coordinateTransformations: [
        {
          type: "scale",
          scale: this.axes.map((_, i) => (i === yi || i === xi ? l0.shape[i]! / lv.shape[i]! : 1)),
        },
      ],
    }));
    const ome: Record<string, unknown> = {
      version: "0.5",
      multiscales: [
        {
          name: el.name,
          axes: this.axes.map((a) => ({ name: a, type: NGFF_AXIS_TYPES[a] ?? "space" })),
          datasets,
        },
      ],
    };
    if (el.kind === "image") ome.omero = { channels: el.channels.map((label) => ({ label })) };
    else ome["image-label"] = { version: "0.5" };
    return {
      zarr_format: 3,
      node_type: "group",
      attributes: { ome, tessera: { served: 1, tile_size: this.tileSize } },
    };
  }

  /** Parse a served chunk key of level `k` (`c/0/3/2`); its chunk coordinates, or null. */
  private chunkCoords(k: number, rest: string): number[] | null {
    const enc = this.encodings[k]!;
    const lv = this.levels[k]!;
    let body = rest;
    if (!enc.v2) {
      if (!body.startsWith(`c${enc.separator}`)) return null;
      body = body.slice(2);
    }
    const parts = body.split(enc.separator);
    if (parts.length !== lv.shape.length) return null;
    const coords: number[] = [];
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (!/^(0|[1-9]\d{0,8})$/.test(p)) return null;
      const n = Number(p);
      if (n >= Math.ceil(lv.shape[i]! / lv.chunks[i]!)) return null;
      coords.push(n);
    }
    return coords;
  }

  /** The backing store key of chunk `coords` of level `k`. */
  private backingKey(k: number, name: string): `/${string}` {
    const base = this.backing.basePath ? `${this.backing.basePath}/` : "";
    return `/${base}${this.levels[k]!.path}/${name}`;
  }

  private chunkName(k: number, coords: readonly number[]): string {
    const enc = this.encodings[k]!;
    const body = coords.join(enc.separator);
    return enc.v2 ? body : `c${enc.separator}${body}`;
  }

  /**
   * The bytes of a served key (`zarr.json`, `images/<name>/zarr.json`, `images/<name>/s0/zarr.json`,
   * `images/<name>/s0/c/0/1/2` …), or null when the store has no such key (a chunk holding only
   * the fill value is absent too).
   */
  async get(key: string, signal?: AbortSignal): Promise<ServedBytes | null> {
    const json = (b: Uint8Array): ServedBytes => ({ bytes: b, contentType: "application/json" });
    if (key === "zarr.json" || key === `${this.family}/zarr.json`)
      return json(encoder.encode('{"zarr_format":3,"node_type":"group","attributes":{}}'));
    const prefix = `${this.groupPath}/`;
    if (!key.startsWith(prefix)) return null;
    const rest = key.slice(prefix.length);
    if (rest === "zarr.json") return json(this.groupDoc);
    const slash = rest.indexOf("/");
    if (slash < 0) return null;
    const k = this.levels.findIndex((l) => l.path === rest.slice(0, slash));
    if (k < 0) return null;
    const inner = rest.slice(slash + 1);
    if (inner === "zarr.json") {
      const b = await this.reader.get(this.backingKey(k, "zarr.json"), signal ? { signal } : undefined);
      return b ? json(b) : null;
    }
    const coords = this.chunkCoords(k, inner);
    if (!coords) return null;
    const b = await this.reader.get(
      this.backingKey(k, this.chunkName(k, coords)),
      signal ? { signal } : undefined,
    );
    return b ? { bytes: b, contentType: "application/octet-stream" } : null;
  }

  private array(k: number): Promise<zarr.Array<zarr.DataType, Readable>> {
    let p = this.arrays.get(k);
    if (!p) {
      registerCodecs();
      const path = `${this.backing.basePath ? `${this.backing.basePath}/` : ""}${this.levels[k]!.path}`;
      p = zarr.open.v3(zarr.root(this.reader).resolve(path), { kind: "array" });
      this.arrays.set(k, p);
      p.catch(() => this.arrays.delete(k));
    }
    return p;
  }

  /**
   * One decoded chunk of level `k` at chunk coordinates `[...outer, ty, tx]`, C order over the
   * chunk shape (edge chunks padded with the fill value). Cached (bounded by bytes).
   */
  async chunk(k: number, coords: readonly number[]): Promise<TypedArray> {
    const ck = `${this.id}:d:${k}:${coords.join(",")}`;
    const hit = this.caches.chunks.get(ck);
    if (hit) return hit as TypedArray;
    const arr = await this.array(k);
    const c = await arr.getChunk([...coords]);
    let data = c.data as unknown as TypedArray;
    if (c.data instanceof zarr.BoolArray) {
      const b = c.data as unknown as { buffer: ArrayBuffer; byteOffset: number; length: number };
      data = new Uint8Array(b.buffer, b.byteOffset, b.length);
    }
    this.caches.chunks.set(ck, data, data.byteLength);
    return data;
  }

  /**
   * Pixels `[y0, y1) × [x0, x1)` of plane `outer` (indices over the non-spatial axes) of level `k`,
   * C order, assembled from the chunks they touch.
   */
  async region(
    k: number,
    outer: readonly number[],
    y0: number,
    y1: number,
    x0: number,
    x1: number,
  ): Promise<TypedArray> {
    const lv = this.levels[k]!;
    const nd = lv.shape.length;
    const cy = lv.chunks[nd - 2]!;
    const cx = lv.chunks[nd - 1]!;
    const outerChunk = outer.map((i, a) => Math.floor(i / lv.chunks[a]!));
    const outerOff = outer.reduce((off, i, a) => off * lv.chunks[a]! + (i % lv.chunks[a]!), 0);
    const h = y1 - y0;
    const w = x1 - x0;
    // A region that is exactly one whole chunk (an inner tile) is the chunk itself: no copy.
    if (y0 % cy === 0 && x0 % cx === 0 && h === cy && w === cx && outerOff === 0)
      return this.chunk(k, [...outerChunk, y0 / cy, x0 / cx]);
    const dtype = this.dtype === "bool" ? "uint8" : this.dtype;
    const out = allocArray(dtype, h * w);
    const jobs: Promise<void>[] = [];
    for (let ty = Math.floor(y0 / cy); ty * cy < y1; ty++) {
      for (let tx = Math.floor(x0 / cx); tx * cx < x1; tx++) {
        jobs.push(
          this.chunk(k, [...outerChunk, ty, tx]).then((data) => {
            const plane = outerOff * cy * cx;
            const ya = Math.max(y0, ty * cy);
            const yb = Math.min(y1, (ty + 1) * cy);
            const xa = Math.max(x0, tx * cx);
            const xb = Math.min(x1, (tx + 1) * cx);
            for (let y = ya; y < yb; y++) {
              const from = plane + (y - ty * cy) * cx + (xa - tx * cx);
              (out as Uint8Array).set(
                (data as Uint8Array).subarray(from, from + (xb - xa)),
                (y - y0) * w + (xa - x0),
              );
            }
          }),
        );
      }
    }
    await Promise.all(jobs);
    return out;
  }

  /**
   * Every `step`-th pixel of every `step`-th row of plane `outer` of level `k` (nearest sampling),
   * `ceil(h/step) × ceil(w/step)`, C order; read one chunk at a time, so a huge single-scale level
   * (labels) can be previewed without holding it.
   */
  async sampled(k: number, outer: readonly number[], step: number): Promise<TypedArray> {
    const lv = this.levels[k]!;
    const nd = lv.shape.length;
    const cy = lv.chunks[nd - 2]!;
    const cx = lv.chunks[nd - 1]!;
    const oh = Math.ceil(lv.height / step);
    const ow = Math.ceil(lv.width / step);
    const out = allocArray(this.dtype === "bool" ? "uint8" : this.dtype, oh * ow);
    const o = out as unknown as { [i: number]: number | bigint };
    const outerChunk = outer.map((i, a) => Math.floor(i / lv.chunks[a]!));
    for (let ty = 0; ty * cy < lv.height; ty++) {
      // Sampled rows inside this chunk row.
      const r0 = Math.ceil((ty * cy) / step);
      const r1 = Math.min(oh, Math.ceil(Math.min(lv.height, (ty + 1) * cy) / step));
      if (r1 <= r0) continue;
      for (let tx = 0; tx * cx < lv.width; tx++) {
        const c0 = Math.ceil((tx * cx) / step);
        const c1 = Math.min(ow, Math.ceil(Math.min(lv.width, (tx + 1) * cx) / step));
        if (c1 <= c0) continue;
        const data = (await this.chunk(k, [...outerChunk, ty, tx])) as unknown as {
          [i: number]: number | bigint;
        };
        for (let r = r0; r < r1; r++) {
          const yy = r * step - ty * cy;
          for (let c = c0; c < c1; c++) o[r * ow + c] = data[yy * cx + (c * step - tx * cx)]!;
        }
      }
    }
    return out;
  }

  /** Element-level JSON of the level arrays (for tests and diagnostics). */
  levelMetadata(k: number): Readonly<Record<string, unknown>> {
    return this.levelMeta[k]!;
  }
}

/** The typed array constructor of a dtype (re-exported for renderers). */
export const typedArrayOf = TYPED_ARRAY_OF;

// ---------------------------------------------------------------- served layout of existing files

const DECODABLE_COMPRESSORS = new Set(["zstd", "gzip", "blosc"]);

function isLocal(location: string | null, store: Readable): boolean {
  if (location) return !/^[a-z][a-z0-9+.-]*:\/\//i.test(location) || /^file:/i.test(location);
  return typeof (store as { root?: unknown }).root === "string";
}

/**
 * When `el` is already laid out for serving on local disk (zarr v3, the planned levels with
 * one-plane `T × T` chunks, `bytes` + one browser-decodable compressor, no sharding), the backing
 * that serves it from its own files; else null (the element is rebuilt).
 */
export async function servedBackingOf(
  el: ImageElement | LabelsElement,
  basePx: number,
): Promise<{
  backing: ServedBacking;
  levels: ServedLevel[];
  levelMeta: Record<string, unknown>[];
  tileSize: number;
} | null> {
  const plan = planServedLevels(el, basePx);
  const origins = el.levels.slice(0, plan.length).map((l) => rasterOrigin(l.source));
  const o0 = origins[0];
  if (!o0 || origins.length < plan.length) return null;
  if (o0.zarrFormat !== 3 || !isLocal(o0.location, o0.store)) return null;
  const nd = el.axes.length;
  const yi = nd - 2;
  const xi = nd - 1;
  if (el.axes[yi] !== "y" || el.axes[xi] !== "x") return null;
  const levels: ServedLevel[] = [];
  const metas: Record<string, unknown>[] = [];
  let tile = 0;
  for (let k = 0; k < plan.length; k++) {
    const o = origins[k];
    const lv = el.levels[k]!;
    if (!o || o.store !== o0.store || o.groupPath !== o0.groupPath || !o.sameAxes || o.zarrFormat !== 3)
      return null;
    if (!lv.shape.every((s, i) => s === plan[k]!.shape[i])) return null;
    const key = `/${o.groupPath ? `${o.groupPath}/` : ""}${o.levelPath}/zarr.json` as const;
    let meta: Record<string, unknown>;
    try {
      const b = await o.store.get(key);
      if (!b) return null;
      meta = JSON.parse(new TextDecoder().decode(b)) as Record<string, unknown>;
    } catch {
      return null;
    }
    const grid = meta.chunk_grid as { name?: string; configuration?: { chunk_shape?: number[] } } | undefined;
    const chunks = grid?.name === "regular" ? grid.configuration?.chunk_shape : undefined;
    if (!Array.isArray(chunks) || chunks.length !== nd) return null;
    if (chunks.slice(0, yi).some((c) => c !== 1)) return null;
    const [cy, cx] = [chunks[yi]!, chunks[xi]!];
    if (cy !== cx || !Number.isInteger(Math.log2(cy))) return null;
    const h = lv.shape[yi]!;
    const w = lv.shape[xi]!;
    if (k === 0) tile = cy >= h && cy >= w ? Math.max(cy, 1) : cy;
    const single = cy >= h && cx >= w;
    if (k === 0 && !single && cy !== 256 && cy !== 512) return null;
    if (k > 0 && cy !== tile && !(single && cy <= tile)) return null;
    const codecs = meta.codecs as { name?: string; configuration?: Record<string, unknown> }[] | undefined;
    if (!Array.isArray(codecs) || codecs.length < 1 || codecs.length > 2 || codecs[0]?.name !== "bytes")
      return null;
    if (codecs[1] && !DECODABLE_COMPRESSORS.has(String(codecs[1].name))) return null;
    const st = meta.storage_transformers as unknown[] | undefined;
    if (Array.isArray(st) && st.length > 0) return null;
    const enc = meta.chunk_key_encoding as { name?: string } | undefined;
    if (enc && enc.name !== "default" && enc.name !== "v2") return null;
    levels.push({
      level: k,
      path: o.levelPath,
      shape: [...lv.shape],
      chunks: [...chunks],
      width: w,
      height: h,
    });
    metas.push(meta);
  }
  return {
    backing: { store: o0.store, basePath: o0.groupPath, kind: "source", location: o0.location ?? "" },
    levels,
    levelMeta: metas,
    tileSize: tile,
  };
}

/** Served levels of a folder written by `buildServedRaster`. */
export function builtLevels(
  el: ImageElement | LabelsElement,
  basePx: number,
  tile = SERVED_TILE_SIZE,
): ServedLevel[] {
  const nd = el.axes.length;
  return planServedLevels(el, basePx, tile).map((p, k) => ({
    level: k,
    path: p.path,
    shape: p.shape,
    chunks: p.chunks,
    height: p.shape[nd - 2]!,
    width: p.shape[nd - 1]!,
  }));
}

export { levelChunkEdge };

/**
 * The rasters of a service and of each session: which served store answers each image and labels
 * element, rebuilding it once (in worker threads, with `raster.progress` events) when its files are
 * not already laid out for serving, the bounded caches (raw and decoded chunks, encoded WebP tiles)
 * and the render concurrency limit, and the cleanup of a session's raster cache when it closes.
 *
 * A served store belongs to one element object: when a commit replaces the element (new pixels, or
 * a save that reopened the session from its new checkpoint), the next request finds the store stale,
 * and the element gets a new one (served from its files when they allow, else rebuilt); the old
 * rebuild folder is removed.
 */
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { TypedArray } from "../data/arrays.js";
import type { ImageElement, LabelsElement } from "../data/elements.js";
import type { SpatialData } from "../data/spatialdata.js";
import { BadRequestError, NotFoundError, StateError } from "../errors.js";
import type { DisplaySpec } from "../io/checkpoint/app-state.js";
import { FsStore } from "../io/store/fs-store.js";
import { buildServedRaster, SERVED_TILE_SIZE, servedArrayMeta } from "./build.js";
import { type ChannelStats, coarsestStats, type ImageInfo, imageInfoOf, isRgbImage } from "./info.js";
import { ByteLru, Semaphore } from "./lru.js";
import {
  type ChannelRender,
  channelsFromEncoding,
  channelsKey,
  compositeRgb,
  defaultChannels,
  encodeWebp,
  labelsRgb,
  parseChannelsQuery,
} from "./render.js";
import {
  builtLevels,
  type RasterFamily,
  type ServedBytes,
  ServedRasterStore,
  servedBackingOf,
} from "./served-store.js";

/** The settings rasters use (the service configuration has them all). */
export interface RasterConfig {
  /** Working folder; session caches go under `<workDir>/rasters/<pid>-<session id>/`. */
  readonly workDir: string;
  readonly rasterBasePx?: number;
  readonly rasterChunkCacheMb?: number;
  readonly imageRenderConcurrency?: number;
  readonly clientImageCompositing?: boolean;
  readonly rasterRebuildWorkers?: number;
}

/** Bytes of encoded tiles and thumbnails kept in memory. */
const TILE_CACHE_BYTES = 64 * 2 ** 20;

/** Service-wide raster state: caches, the render limit, and the sessions' raster managers. */
export class RasterHub {
  readonly config: Required<RasterConfig>;
  /** Raw chunk bytes and decoded chunks (`TESSERA_RASTER_CHUNK_CACHE_MB`). */
  readonly chunks: ByteLru<Uint8Array | TypedArray>;
  /** Encoded WebP tiles and thumbnails. */
  readonly images: ByteLru<RenderedImage>;
  /** At most `TESSERA_IMAGE_RENDER_CONCURRENCY` composites at once. */
  readonly renders: Semaphore;
  private readonly sessions = new Set<SessionRasters>();

  constructor(config: RasterConfig) {
    this.config = {
      workDir: config.workDir,
      rasterBasePx: config.rasterBasePx ?? 1024,
      rasterChunkCacheMb: config.rasterChunkCacheMb ?? 256,
      imageRenderConcurrency: config.imageRenderConcurrency ?? 2,
      clientImageCompositing: config.clientImageCompositing ?? true,
      rasterRebuildWorkers: config.rasterRebuildWorkers ?? 2,
    };
    this.chunks = new ByteLru(this.config.rasterChunkCacheMb * 2 ** 20);
    this.images = new ByteLru(TILE_CACHE_BYTES);
    this.renders = new Semaphore(Math.max(1, this.config.imageRenderConcurrency));
  }

  /** The raster manager of a session (see {@link SessionRasters}). */
  forSession(sessionId: string, host: RasterHost): SessionRasters {
    const r = new SessionRasters(this, sessionId, host, () => this.sessions.delete(r));
    this.sessions.add(r);
    return r;
  }

  /** Bytes of every session's raster cache on disk. */
  cacheBytes(): number {
    let n = 0;
    for (const s of this.sessions) n += s.cacheBytes();
    return n;
  }
}

/** What a session's raster manager reads from its session. */
export interface RasterHost {
  /** The committed object. */
  data(): SpatialData;
  activeTable(): string | null;
  /** A display of the session's app state, by id. */
  display(id: string): DisplaySpec | undefined;
  /** Emit a session event (the session id is added). */
  emit(event: string, data: object): void;
}

/** Options of a tile or thumbnail render. */
export interface RenderOptions {
  /** The `channels` query (docs/api/images.md); wins over `display`. */
  readonly channels?: string;
  /** Take channel colours and windows from this display's encoding (when it shows this element). */
  readonly display?: string;
  /** Lossless WebP. */
  readonly lossless?: boolean;
  readonly signal?: AbortSignal;
}

/** A rendered WebP. */
export interface RenderedImage {
  readonly webp: Uint8Array;
  readonly width: number;
  readonly height: number;
}

interface Entry {
  readonly element: ImageElement | LabelsElement;
  readonly family: RasterFamily;
  readonly store: Promise<ServedRasterStore>;
  readonly controller: AbortController;
  stats?: Promise<ChannelStats>;
  dir?: string;
  bytes: number;
}

/** Largest thumbnail edge. */
export const MAX_THUMBNAIL_PX = 2048;
/** Longest side of a level composited whole for a thumbnail; larger ones are sampled first. */
const MAX_COMPOSITE_PX = 4096;
/** Thumbnail edge when none is asked. */
export const DEFAULT_THUMBNAIL_PX = 384;

/** One session's rasters (see the module comment). */
export class SessionRasters {
  private readonly entries = new Map<string, Entry>();
  private readonly retiring = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly hub: RasterHub,
    readonly sessionId: string,
    private readonly host: RasterHost,
    private readonly onDispose: () => void,
  ) {}

  /** Folder of this session's rebuilt stores. */
  get cacheDir(): string {
    // The pid tells a restart which caches belong to a process that is gone (pending-writes.ts sweeps them).
    return join(this.hub.config.workDir, "rasters", `${process.pid}-${this.sessionId}`);
  }

  /** Bytes of rebuilt stores on disk. */
  cacheBytes(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.bytes;
    return n;
  }

  /** The element `name` (images first, then labels); 404 when there is none. */
  element(name: string): { element: ImageElement | LabelsElement; family: RasterFamily } {
    const sd = this.host.data();
    if (typeof name === "string" && name.length <= 1000) {
      if (Object.hasOwn(sd.images, name)) return { element: sd.images[name]!, family: "images" };
      if (Object.hasOwn(sd.labels, name)) return { element: sd.labels[name]!, family: "labels" };
    }
    throw new NotFoundError(`no image or labels element "${String(name).slice(0, 200)}"`);
  }

  /** The served store of element `name`, built on first use (awaits a rebuild in progress). */
  store(name: string): Promise<ServedRasterStore> {
    if (this.closed) return Promise.reject(new StateError(`session ${this.sessionId} is closed`));
    const { element, family } = this.element(name);
    const key = `${family}/${name}`;
    const old = this.entries.get(key);
    if (old && old.element === element) return old.store;
    if (old) this.retire(key, old);
    const controller = new AbortController();
    const entry: Entry = {
      element,
      family,
      controller,
      bytes: 0,
      store: Promise.resolve(null as unknown as ServedRasterStore),
    };
    (entry as { store: Promise<ServedRasterStore> }).store = this.open(entry);
    entry.store.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    this.entries.set(key, entry);
    return entry.store;
  }

  private async open(entry: Entry): Promise<ServedRasterStore> {
    const { element: el, family } = entry;
    const cfg = this.hub.config;
    const caches = { chunks: this.hub.chunks };
    const backed = await servedBackingOf(el, cfg.rasterBasePx);
    if (backed) {
      return new ServedRasterStore({ element: el, family, ...backed, caches });
    }
    const dir = join(this.cacheDir, randomUUID());
    entry.dir = dir;
    const t0 = Date.now();
    const emit = (state: string, pct: number, extra: object = {}) =>
      this.host.emit("raster.progress", { element: el.name, family, state, pct, ...extra });
    emit("building", 0);
    let lastPct = 0;
    let lastAt = 0;
    try {
      const built = await buildServedRaster(el, dir, {
        basePx: cfg.rasterBasePx,
        workers: cfg.rasterRebuildWorkers,
        signal: entry.controller.signal,
        onProgress: (f) => {
          const pct = Math.floor(f * 100);
          const now = Date.now();
          if (pct > lastPct && (now - lastAt > 250 || pct === 100)) {
            lastPct = pct;
            lastAt = now;
            if (pct < 100) emit("building", pct);
          }
        },
      });
      entry.bytes = built.bytes;
      const levels = builtLevels(el, cfg.rasterBasePx);
      const store = new ServedRasterStore({
        element: el,
        family,
        tileSize: levels[0]!.chunks[levels[0]!.shape.length - 2]!,
        levels,
        levelMeta: built.levels.map((l) => servedArrayMeta(l, el.axes, el.dtype) as Record<string, unknown>),
        backing: { store: new FsStore(dir), basePath: "", kind: "cache", location: dir },
        caches,
      });
      emit("ready", 100, { seconds: (Date.now() - t0) / 1000, bytes: built.bytes });
      return store;
    } catch (err) {
      const aborted = entry.controller.signal.aborted;
      emit(aborted ? "cancelled" : "failed", lastPct, {
        error: err instanceof Error ? err.message : String(err),
      });
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Stop an entry's rebuild and remove its folder and cached chunks (in the background). */
  private retire(key: string, e: Entry): void {
    this.entries.delete(key);
    e.controller.abort(new Error("the element changed or its session closed"));
    const done = e.store
      .then((s) => {
        this.hub.chunks.dropPrefix(`${s.id}:`);
        this.hub.images.dropPrefix(`${s.id}:`);
      })
      .catch(() => undefined)
      .then(async () => {
        if (e.dir) await rm(e.dir, { recursive: true, force: true });
      });
    this.retiring.add(done);
    void done.finally(() => this.retiring.delete(done));
  }

  private stats(name: string, store: ServedRasterStore): Promise<ChannelStats> {
    const { element, family } = this.element(name);
    const e = this.entries.get(`${family}/${name}`);
    if (!e || e.element !== element) return coarsestStats(store, isRgbImage(element));
    e.stats ??= coarsestStats(store, isRgbImage(element));
    return e.stats;
  }

  /** Image info of element `name` (builds its served store first when needed). */
  async info(name: string): Promise<ImageInfo> {
    const store = await this.store(name);
    const stats = await this.stats(name, store);
    const { element } = this.element(name);
    return imageInfoOf(this.host.data(), this.host.activeTable(), element, store, stats, {
      sessionId: this.sessionId,
      clientCompositing: this.hub.config.clientImageCompositing,
    });
  }

  /** A key of the served store (the raw raster route); null when absent. */
  async raw(name: string, key: string): Promise<ServedBytes | null> {
    if (key.length > 2000) return null;
    const store = await this.store(name);
    return store.get(key);
  }

  /** The channels to composite for `opts` (query, else display encoding, else defaults). */
  private async channels(
    name: string,
    store: ServedRasterStore,
    opts: RenderOptions,
  ): Promise<ChannelRender[]> {
    const { element } = this.element(name);
    const stats = await this.stats(name, store);
    const d = {
      channelNames: element.kind === "image" ? element.channels : [element.name],
      contrastLimits: stats.limits,
      isRgb: isRgbImage(element),
    };
    if (opts.channels !== undefined && opts.channels !== "") return parseChannelsQuery(opts.channels, d);
    if (opts.display !== undefined) {
      const disp = this.host.display(opts.display);
      if (!disp) throw new NotFoundError(`no display "${opts.display.slice(0, 100)}"`);
      const enc = disp.type === "spatial_canvas" ? disp.encoding : null;
      if (enc?.image_layer === name) {
        const fromDisplay = channelsFromEncoding(enc.channels, d);
        if (fromDisplay?.length) return fromDisplay;
      }
    }
    return defaultChannels(d);
  }

  private async composite(
    store: ServedRasterStore,
    k: number,
    channels: readonly ChannelRender[],
    y0: number,
    y1: number,
    x0: number,
    x1: number,
  ): Promise<Uint8ClampedArray> {
    const n = (y1 - y0) * (x1 - x0);
    const planes = await this.planes(store, k, channels, y0, y1, x0, x1);
    return store.kind === "labels" ? labelsRgb(planes[0]!, n) : compositeRgb(planes, channels, n);
  }

  /** The raw planes a composite of `[y0, y1) × [x0, x1)` reads: one per channel (labels: the ids). */
  private planes(
    store: ServedRasterStore,
    k: number,
    channels: readonly ChannelRender[],
    y0: number,
    y1: number,
    x0: number,
    x1: number,
  ): Promise<TypedArray[]> {
    const lv = store.levels[k]!;
    const nd = lv.shape.length;
    const outerAxes = store.axes.slice(0, nd - 2);
    const ci = outerAxes.indexOf("c");
    const outerOf = (c: number) => outerAxes.map((_a, i) => (i === ci ? c : Math.floor(lv.shape[i]! / 2)));
    if (store.kind === "labels") return Promise.all([store.region(k, outerOf(0), y0, y1, x0, x1)]);
    return Promise.all(channels.map((ch) => store.region(k, outerOf(ch.index), y0, y1, x0, x1)));
  }

  /**
   * The raw pixels of region `[y0, y1) × [x0, x1)` of level `level` and the channels to composite them
   * with (same rules as `tile`), not composited: a figure composites them on its own thread
   * (`compositeRgb`, or `labelsRgb` for a labels element) so the per-pixel pass leaves the event loop.
   */
  async regionPlanes(
    name: string,
    level: number,
    y0: number,
    y1: number,
    x0: number,
    x1: number,
    opts: RenderOptions = {},
  ): Promise<{ kind: "image" | "labels"; planes: TypedArray[]; channels: ChannelRender[] }> {
    const store = await this.store(name);
    const lv = store.levels[level];
    if (!lv) throw new BadRequestError(`level ${level} is outside 0..${store.levels.length - 1}`);
    if (!(x0 >= 0 && y0 >= 0 && x1 <= lv.width && y1 <= lv.height && x1 > x0 && y1 > y0))
      throw new BadRequestError(`region ${x0}..${x1} × ${y0}..${y1} is outside level ${level}`);
    const channels = await this.channels(name, store, opts);
    const planes = await this.planes(store, level, channels, y0, y1, x0, x1);
    return { kind: store.kind, planes, channels };
  }

  private async compositeSampled(
    store: ServedRasterStore,
    k: number,
    channels: readonly ChannelRender[],
    step: number,
    n: number,
  ): Promise<Uint8ClampedArray> {
    const lv = store.levels[k]!;
    const outerAxes = store.axes.slice(0, lv.shape.length - 2);
    const ci = outerAxes.indexOf("c");
    const outerOf = (c: number) => outerAxes.map((_a, i) => (i === ci ? c : Math.floor(lv.shape[i]! / 2)));
    if (store.kind === "labels") return labelsRgb(await store.sampled(k, outerOf(0), step), n);
    const planes = await Promise.all(channels.map((ch) => store.sampled(k, outerOf(ch.index), step)));
    return compositeRgb(planes, channels, n);
  }

  /** A composited WebP tile: level `level`, tile column `col` and row `row` of `tile_size` pixels. */
  async tile(
    name: string,
    level: number,
    col: number,
    row: number,
    opts: RenderOptions = {},
  ): Promise<RenderedImage> {
    const store = await this.store(name);
    const lv = store.levels[level];
    if (!lv || !Number.isInteger(level))
      throw new BadRequestError(`level ${level} is outside 0..${store.levels.length - 1}`);
    const t = store.tileSize;
    const nx = Math.ceil(lv.width / t);
    const ny = Math.ceil(lv.height / t);
    if (!Number.isInteger(col) || !Number.isInteger(row) || col < 0 || row < 0 || col >= nx || row >= ny)
      throw new NotFoundError(`tile ${col},${row} is outside level ${level} (${nx} × ${ny} tiles)`);
    const channels = await this.channels(name, store, opts);
    const key = `${store.id}:t:${level}:${col}:${row}:${channelsKey(channels)}:${opts.lossless ? 1 : 0}`;
    const x0 = col * t;
    const y0 = row * t;
    const w = Math.min(t, lv.width - x0);
    const h = Math.min(t, lv.height - y0);
    const hit = this.hub.images.get(key);
    if (hit) return hit;
    const webp = await this.hub.renders.run(async () => {
      opts.signal?.throwIfAborted();
      const rgb = await this.composite(store, level, channels, y0, y0 + h, x0, x0 + w);
      return (await encodeWebp(rgb, w, h, { lossless: opts.lossless ?? false })).webp;
    });
    const out = { webp, width: w, height: h };
    this.hub.images.set(key, out, webp.byteLength);
    return out;
  }

  /** The raw composite of a tile (RGB8, for figures and tests); same channels rules as `tile`. */
  async tileRgb(
    name: string,
    level: number,
    col: number,
    row: number,
    opts: RenderOptions = {},
  ): Promise<{ rgb: Uint8ClampedArray; width: number; height: number; channels: ChannelRender[] }> {
    const store = await this.store(name);
    const lv = store.levels[level];
    if (!lv) throw new BadRequestError(`level ${level} is outside 0..${store.levels.length - 1}`);
    const t = store.tileSize;
    const channels = await this.channels(name, store, opts);
    const x0 = col * t;
    const y0 = row * t;
    const w = Math.min(t, lv.width - x0);
    const h = Math.min(t, lv.height - y0);
    if (w <= 0 || h <= 0) throw new NotFoundError(`tile ${col},${row} is outside level ${level}`);
    const rgb = await this.composite(store, level, channels, y0, y0 + h, x0, x0 + w);
    return { rgb, width: w, height: h, channels };
  }

  /** A whole-image WebP fitting inside `maxPx` (default 384), from the coarsest level large enough. */
  async thumbnail(
    name: string,
    maxPx = DEFAULT_THUMBNAIL_PX,
    opts: RenderOptions = {},
  ): Promise<RenderedImage> {
    if (!Number.isInteger(maxPx) || maxPx < 1 || maxPx > MAX_THUMBNAIL_PX)
      throw new BadRequestError(`max_px must be an integer in 1..${MAX_THUMBNAIL_PX} (got ${maxPx})`);
    const store = await this.store(name);
    const channels = await this.channels(name, store, opts);
    // The coarsest level whose longest side still reaches maxPx (never enlarged), else level 0.
    let k = store.levels.length - 1;
    while (k > 0 && Math.max(store.levels[k]!.width, store.levels[k]!.height) < maxPx) k--;
    const lv = store.levels[k]!;
    const key = `${store.id}:th:${maxPx}:${channelsKey(channels)}:${opts.lossless ? 1 : 0}`;
    const hit = this.hub.images.get(key);
    if (hit) return hit;
    const out = await this.hub.renders.run(async () => {
      const longest = Math.max(lv.width, lv.height);
      if (longest <= MAX_COMPOSITE_PX) {
        const rgb = await this.composite(store, k, channels, 0, lv.height, 0, lv.width);
        return encodeWebp(rgb, lv.width, lv.height, { lossless: opts.lossless ?? false, fitPx: maxPx });
      }
      // A level too large to composite whole (a big single-scale labels element): sample it first.
      const step = Math.ceil(longest / Math.max(maxPx, 1024));
      const sw = Math.ceil(lv.width / step);
      const sh = Math.ceil(lv.height / step);
      const rgb = await this.compositeSampled(store, k, channels, step, sw * sh);
      return encodeWebp(rgb, sw, sh, { lossless: opts.lossless ?? false, fitPx: maxPx });
    });
    this.hub.images.set(key, out, out.webp.byteLength);
    return out;
  }

  /** Stop every rebuild, then remove the session's raster cache. */
  async dispose(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [key, e] of [...this.entries]) this.retire(key, e);
    await Promise.all([...this.retiring]);
    await rm(this.cacheDir, { recursive: true, force: true });
    this.onDispose();
  }
}

export { SERVED_TILE_SIZE };

/**
 * The image layer: a small tile layer of our own over the served raster store (client.md 5.6). It
 * picks the pyramid level that matches the zoom, reads the visible chunks through an `ImageLoader`
 * (150 ms debounce, a byte-bounded cache of raw channel planes), composites the visible channels
 * additively on the CPU (`clamp((v - lo) / (hi - lo)) · colour`, at most 6 channels) into one RGBA
 * bitmap per tile, and draws each as a deck.gl BitmapLayer at its true footprint. The coarsest level
 * is always drawn underneath (best-available refinement). Contrast and colour changes recomposite
 * from the cached planes without a new request.
 */
import { CompositeLayer, type Layer, type UpdateParameters } from "@deck.gl/core";
import { BitmapLayer } from "@deck.gl/layers";
import { MAX_VISIBLE_CHANNELS, parseHexColor } from "../sdk/display/encoding.js";
import type { ImageLoader, TilePixels } from "./data-source.js";

/** One channel as the layer composites it. */
export interface LayerChannel {
  readonly index: number;
  readonly color: string;
  readonly limits: readonly [number, number];
}

/** Props of `RasterTileLayer`. */
export interface RasterTileLayerProps {
  loader: ImageLoader;
  channels: readonly LayerChannel[];
  /** Sign of x and y in the view (the canvas mirrors with a model matrix of `diag(sx, sy)`). */
  flip: readonly [number, number];
  /** Called with (tiles done, tiles requested) as tiles arrive. */
  onTileProgress?: (done: number, requested: number) => void;
  /** Called when a tile is drawn for the first time. */
  onTileDrawn?: () => void;
}

/** Cache budget (client.md 5.6): 256 MB, at least 64 tiles. */
const CACHE_BYTES = 256 * 1024 * 1024;
const CACHE_MIN_TILES = 64;
const DEBOUNCE_MS = 150;

interface TileEntry {
  readonly key: string;
  readonly level: number;
  readonly row: number;
  readonly col: number;
  /** Raw planes per channel index (null: all fill value). */
  readonly planes: Map<number, TilePixels | null>;
  pending: Set<number>;
  image: ImageData | null;
  imageKey: string;
  bytes: number;
}

/** Shared tile cache of a loader (kept across layer instances). */
const caches = new WeakMap<ImageLoader, Map<string, TileEntry>>();

function cacheOf(loader: ImageLoader): Map<string, TileEntry> {
  let c = caches.get(loader);
  if (!c) {
    c = new Map();
    caches.set(loader, c);
  }
  return c;
}

function evict(cache: Map<string, TileEntry>): void {
  let bytes = 0;
  for (const e of cache.values()) bytes += e.bytes;
  for (const [k, e] of cache) {
    if (bytes <= CACHE_BYTES || cache.size <= CACHE_MIN_TILES) break;
    if (e.pending.size) continue;
    bytes -= e.bytes;
    cache.delete(k);
  }
}

type Affine = [number, number, number, number, number, number];

function apply(m: Affine, x: number, y: number): [number, number] {
  return [m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]];
}

function invert(m: Affine): Affine {
  const [a, b, c, d, e, f] = m;
  const det = a * e - b * d;
  return [e / det, -b / det, (b * f - c * e) / det, -d / det, a / det, (c * d - a * f) / det];
}

/** Composite the planes of a tile into RGBA (valid region `w × h`). */
export function compositeTile(
  planes: Map<number, TilePixels | null>,
  channels: readonly LayerChannel[],
  w: number,
  h: number,
): ImageData {
  const out = new Uint8ClampedArray(w * h * 4);
  const acc = new Float32Array(w * h * 3);
  for (const ch of channels.slice(0, MAX_VISIBLE_CHANNELS)) {
    const p = planes.get(ch.index);
    if (!p) continue;
    const [r, g, b] = parseHexColor(ch.color) ?? [255, 255, 255];
    const lo = ch.limits[0];
    const span = ch.limits[1] - lo || 1;
    const d = p.data;
    for (let y = 0; y < h; y++) {
      const row = y * p.width;
      for (let x = 0; x < w; x++) {
        let t = (Number(d[row + x]) - lo) / span;
        if (!(t > 0)) continue;
        if (t > 1) t = 1;
        const o = (y * w + x) * 3;
        acc[o] += t * r;
        acc[o + 1] += t * g;
        acc[o + 2] += t * b;
      }
    }
  }
  for (let i = 0, j = 0; i < w * h; i++, j += 3) {
    out[i * 4] = acc[j]!;
    out[i * 4 + 1] = acc[j + 1]!;
    out[i * 4 + 2] = acc[j + 2]!;
    out[i * 4 + 3] = 255;
  }
  return new ImageData(out, w, h);
}

interface State {
  version: number;
  wanted: string[];
  timer: ReturnType<typeof setTimeout> | null;
  [key: string]: unknown;
}

/** The tiled, CPU-composited image layer. */
export class RasterTileLayer extends CompositeLayer<RasterTileLayerProps> {
  static override layerName = "RasterTileLayer";
  declare state: State;

  override initializeState(): void {
    this.state = { version: 0, wanted: [], timer: null };
  }

  override shouldUpdateState({ changeFlags }: UpdateParameters<this>): boolean {
    return changeFlags.somethingChanged;
  }

  override updateState(params: UpdateParameters<this>): void {
    super.updateState(params);
    this.schedule();
  }

  override finalizeState(context: Parameters<CompositeLayer["finalizeState"]>[0]): void {
    if (this.state.timer) clearTimeout(this.state.timer);
    super.finalizeState(context);
  }

  private get affine(): Affine {
    return (this.props.loader.info.pixel_to_world ?? [1, 0, 0, 0, 1, 0]) as Affine;
  }

  /** Visible tiles of the level matching the zoom, plus the whole coarsest level. */
  private visibleTiles(): { level: number; row: number; col: number }[] {
    const info = this.props.loader.info;
    const vp = this.context.viewport;
    const m = this.affine;
    const scale = Math.sqrt(Math.abs(m[0] * m[4] - m[1] * m[3])) || 1;
    const zoom = (vp as unknown as { zoom: number }).zoom;
    const n = info.levels.length;
    const level = Math.max(0, Math.min(n - 1, Math.floor(-(zoom + Math.log2(scale)))));
    let [minX, minY, maxX, maxY] = vp.getBounds() as [number, number, number, number];
    const [sx, sy] = this.props.flip ?? [1, 1];
    if (sx < 0) [minX, maxX] = [-maxX, -minX];
    if (sy < 0) [minY, maxY] = [-maxY, -minY];
    const inv = invert(m);
    const corners = [
      apply(inv, minX, minY),
      apply(inv, maxX, minY),
      apply(inv, minX, maxY),
      apply(inv, maxX, maxY),
    ];
    const px0 = Math.min(...corners.map((c) => c[0]));
    const px1 = Math.max(...corners.map((c) => c[0]));
    const py0 = Math.min(...corners.map((c) => c[1]));
    const py1 = Math.max(...corners.map((c) => c[1]));
    const out: { level: number; row: number; col: number }[] = [];
    const T = info.tile_size;
    const addLevel = (L: number, x0: number, x1: number, y0: number, y1: number) => {
      const lv = info.levels[L]!;
      const fx = lv.width / info.levels[0]!.width;
      const fy = lv.height / info.levels[0]!.height;
      const c0 = Math.max(0, Math.floor((x0 * fx) / T));
      const c1 = Math.min(Math.ceil(lv.width / T) - 1, Math.floor((x1 * fx) / T));
      const r0 = Math.max(0, Math.floor((y0 * fy) / T));
      const r1 = Math.min(Math.ceil(lv.height / T) - 1, Math.floor((y1 * fy) / T));
      for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) out.push({ level: L, row: r, col: c });
    };
    const W0 = info.levels[0]!.width;
    const H0 = info.levels[0]!.height;
    addLevel(n - 1, 0, W0, 0, H0);
    if (level !== n - 1) addLevel(level, px0, px1, py0, py1);
    return out;
  }

  private schedule(): void {
    if (this.state.timer) clearTimeout(this.state.timer);
    const timer = setTimeout(() => {
      this.state.timer = null;
      void this.fetchVisible();
    }, DEBOUNCE_MS);
    this.state.timer = timer;
  }

  private async fetchVisible(): Promise<void> {
    if (!this.context?.viewport) return;
    const { loader } = this.props;
    const cache = cacheOf(loader);
    const tiles = this.visibleTiles();
    const channels = this.props.channels.slice(0, MAX_VISIBLE_CHANNELS);
    const jobs: Promise<void>[] = [];
    let requested = 0;
    let done = 0;
    for (const t of tiles) {
      const key = `${t.level}/${t.row}/${t.col}`;
      let e = cache.get(key);
      if (!e) {
        e = { key, ...t, planes: new Map(), pending: new Set(), image: null, imageKey: "", bytes: 0 };
        cache.set(key, e);
      } else {
        cache.delete(key);
        cache.set(key, e);
      }
      const entry = e;
      for (const ch of channels) {
        if (entry.planes.has(ch.index) || entry.pending.has(ch.index)) continue;
        entry.pending.add(ch.index);
        requested++;
        jobs.push(
          loader
            .getTile(t.level, ch.index, t.row, t.col)
            .then((p) => {
              entry.planes.set(ch.index, p);
              entry.bytes += p ? p.width * p.height * 4 : 0;
            })
            .catch(() => {
              entry.planes.set(ch.index, null);
            })
            .finally(() => {
              entry.pending.delete(ch.index);
              done++;
              this.props.onTileProgress?.(done, requested);
              if (this.internalState) this.setState({ version: this.state.version + 1 });
            }),
        );
      }
    }
    this.state.wanted = tiles.map((t) => `${t.level}/${t.row}/${t.col}`);
    if (!requested) {
      this.props.onTileProgress?.(0, 0);
      this.setState({ version: this.state.version + 1 });
    }
    await Promise.all(jobs);
    evict(cache);
  }

  override renderLayers(): Layer[] {
    const { loader, channels } = this.props;
    const info = loader.info;
    const cache = cacheOf(loader);
    const m = this.affine;
    const T = info.tile_size;
    const visible = channels.slice(0, MAX_VISIBLE_CHANNELS);
    const chKey = JSON.stringify(visible);
    const W0 = info.levels[0]!.width;
    const H0 = info.levels[0]!.height;
    const layers: Layer[] = [];
    const keys = [...this.state.wanted].sort((a, b) => Number(b.split("/")[0]) - Number(a.split("/")[0]));
    for (const key of keys) {
      const e = cache.get(key);
      if (!e) continue;
      if (visible.some((c) => !e.planes.has(c.index))) {
        if (!e.image) continue;
      } else if (e.imageKey !== chKey) {
        const lv = info.levels[e.level]!;
        const w = Math.min(T, lv.width - e.col * T);
        const h = Math.min(T, lv.height - e.row * T);
        e.image = compositeTile(e.planes, visible, w, h);
        e.imageKey = chKey;
        this.props.onTileDrawn?.();
      }
      if (!e.image) continue;
      const lv = info.levels[e.level]!;
      const fx = W0 / lv.width;
      const fy = H0 / lv.height;
      const x0 = e.col * T * fx;
      const y0 = e.row * T * fy;
      const x1 = x0 + e.image.width * fx;
      const y1 = y0 + e.image.height * fy;
      const tl = apply(m, x0, y0);
      const tr = apply(m, x1, y0);
      const bl = apply(m, x0, y1);
      const br = apply(m, x1, y1);
      layers.push(
        new BitmapLayer(
          this.getSubLayerProps({
            id: `tile-${key}`,
            image: e.image,
            bounds: [bl, tl, tr, br],
            pickable: false,
            updateTriggers: { image: e.imageKey },
          }),
        ),
      );
    }
    return layers;
  }
}

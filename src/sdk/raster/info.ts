/**
 * Image info (the spec's `GET /image/{element}/info`): levels, channels, placement in canvas world
 * space, tile size, where the served store is, and default display windows computed from the
 * coarsest level.
 */
import { applyToPoint, toAffine6 } from "../data/affine.js";
import type { ImageElement, LabelsElement } from "../data/elements.js";
import type { SpatialData } from "../data/spatialdata.js";
import { elementToCanvas, worldSystemOf } from "../data/world-space.js";
import type { ServedRasterStore } from "./served-store.js";

/** The image info resource. */
export interface ImageInfo {
  /** Element name. */
  readonly element: string;
  /** `image` or `labels`. */
  readonly kind: "image" | "labels";
  /** Served pyramid levels, finest first. */
  readonly levels: { level: number; width: number; height: number }[];
  /** Number of channels (1 for labels). */
  readonly channels: number;
  readonly channel_names: string[];
  /** Element axes (`c,y,x`, `y,x` …) and dtype, as the served arrays hold them. */
  readonly axes: string[];
  readonly dtype: string;
  /** `[minx, miny, maxx, maxy]` of the level-0 extent in canvas world space (pixels when unplaced). */
  readonly bounds: [number, number, number, number];
  /**
   * Level-0 pixel → canvas world space, `[a, b, c, d, e, f]` for `x' = a·x + b·y + c`,
   * `y' = d·x + e·y + f`: the same placement as the cells and boundaries (`P⁻¹ · T_image`); null
   * when the element has no path into the world coordinate system.
   */
  readonly pixel_to_world: [number, number, number, number, number, number] | null;
  /** The world coordinate system the placement goes through. */
  readonly coordinate_system: string;
  /** Chunk and tile edge in pixels. */
  readonly tile_size: number;
  /** The server advertises client compositing and the element has its served store on disk. */
  readonly client_compositing: boolean;
  /** `/api/sessions/{id}/raster/{element}`, no trailing slash. */
  readonly raster_base_url: string;
  /** `images/{element}` (`labels/{element}` for labels). */
  readonly zarr_group_path: string;
  /** Default window per channel: `[0, robust high]` of the coarsest level. */
  readonly contrast_limits: [number, number][];
  /** Data `[min, max]` per channel of the coarsest level. */
  readonly contrast_range: [number, number][];
  /** A true-colour (RGB) image, shown as is. */
  readonly is_rgb: boolean;
  /** Where the served store is read from: the element's own files, or a rebuild in the session cache. */
  readonly store: "source" | "cache";
}

/** Per-channel statistics of the coarsest level. */
export interface ChannelStats {
  readonly range: [number, number][];
  readonly limits: [number, number][];
}

/** Percentile of the high end of the default window. */
export const CONTRAST_PERCENTILE = 0.995;

/** Whether an image is true-colour: 3 (or 4) uint8 channels named like r, g, b(, a) or by index. */
export function isRgbImage(el: ImageElement | LabelsElement): boolean {
  if (el.kind !== "image" || el.dtype !== "uint8") return false;
  const n = el.channels.length;
  if (n !== 3 && n !== 4) return false;
  const names = el.channels.map((c) => c.trim().toLowerCase());
  const rgb = [
    ["r", "red"],
    ["g", "green"],
    ["b", "blue"],
    ["a", "alpha"],
  ];
  const named = names.every((c, i) => rgb[i]!.includes(c));
  const numbered = names.every((c, i) => c === String(i));
  return named || numbered;
}

/** Min, max and the robust high percentile of one plane (NaN ignored). */
export function planeStats(data: ArrayLike<number | bigint>): { min: number; max: number; high: number } {
  const n = data.length;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  // Sample at most ~1M values for the percentile.
  const step = Math.max(1, Math.floor(n / 1_048_576));
  const sample = new Float64Array(Math.ceil(n / step));
  let m = 0;
  for (let i = 0; i < n; i++) {
    const v = Number(data[i]);
    if (Number.isNaN(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
    if (i % step === 0) sample[m++] = v;
  }
  if (m === 0) return { min: 0, max: 0, high: 0 };
  const s = sample.subarray(0, m).sort();
  const high = s[Math.min(m - 1, Math.floor(CONTRAST_PERCENTILE * (m - 1)))]!;
  return { min, max, high };
}

/** Channel statistics of the coarsest level of a served store (the middle z plane of a stack). */
export async function coarsestStats(store: ServedRasterStore, isRgb: boolean): Promise<ChannelStats> {
  const k = store.levels.length - 1;
  const lv = store.levels[k]!;
  const nd = lv.shape.length;
  const outerAxes = store.axes.slice(0, nd - 2);
  const ci = outerAxes.indexOf("c");
  const nc = ci >= 0 ? lv.shape[ci]! : 1;
  const range: [number, number][] = [];
  const limits: [number, number][] = [];
  for (let c = 0; c < nc; c++) {
    const outer = outerAxes.map((_a, i) => (i === ci ? c : Math.floor(lv.shape[i]! / 2)));
    const plane = await store.region(k, outer, 0, lv.height, 0, lv.width);
    const st = planeStats(plane as unknown as ArrayLike<number>);
    range.push([st.min, st.max]);
    let hi = st.high > 0 ? st.high : st.max > 0 ? st.max : 1;
    if (isRgb) hi = 255;
    limits.push([0, hi]);
  }
  return { range, limits };
}

/** Build the info of an element from its served store and statistics. */
export function imageInfoOf(
  sd: SpatialData,
  activeTable: string | null,
  el: ImageElement | LabelsElement,
  store: ServedRasterStore,
  stats: ChannelStats,
  opts: { sessionId: string; clientCompositing: boolean },
): ImageInfo {
  const l0 = store.levels[0]!;
  let pixelToWorld: ImageInfo["pixel_to_world"] = null;
  let bounds: ImageInfo["bounds"] = [0, 0, l0.width, l0.height];
  try {
    const m = elementToCanvas(sd, activeTable, el);
    pixelToWorld = toAffine6(m);
    const corners = [
      [0, 0],
      [l0.width, 0],
      [0, l0.height],
      [l0.width, l0.height],
    ].map(([x, y]) => applyToPoint(m, x!, y!));
    const xs = corners.map((p) => p[0]);
    const ys = corners.map((p) => p[1]);
    bounds = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  } catch {
    // No path into the world system: pixel space.
  }
  const names = el.kind === "image" ? [...el.channels] : [el.name];
  return {
    element: el.name,
    kind: el.kind,
    levels: store.levels.map((l) => ({ level: l.level, width: l.width, height: l.height })),
    channels: names.length,
    channel_names: names,
    axes: [...el.axes],
    dtype: el.dtype,
    bounds,
    pixel_to_world: pixelToWorld,
    coordinate_system: worldSystemOf(sd, activeTable),
    tile_size: store.tileSize,
    client_compositing: opts.clientCompositing,
    raster_base_url: `/api/sessions/${encodeURIComponent(opts.sessionId)}/raster/${encodeURIComponent(el.name)}`,
    zarr_group_path: store.groupPath,
    contrast_limits: stats.limits,
    contrast_range: stats.range,
    is_rgb: isRgbImage(el),
    store: store.backing.kind,
  };
}

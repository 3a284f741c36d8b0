/**
 * Server-side compositing of image channels into RGB, and WebP encoding with sharp: what the tile and
 * thumbnail routes and figures draw. Each shown channel adds `clamp((v − lo) / (hi − lo), 0, 1) ·
 * colour` to the pixel (additive blending, as the client's shader does); the sum is clamped to 255.
 *
 * The `channels` query syntax (docs/api/images.md): a comma-separated list of at most 6 entries
 * `channel[:colour[:lo:hi]]`, where `channel` is an index or a channel name, `colour` a name (`red`,
 * `green`, `blue`, `cyan`, `magenta`, `yellow`, `white`, `orange`, `gray`) or a hex `rrggbb`/`rgb`
 * (optionally prefixed by `#`), and `lo:hi` the contrast window in data values.
 */
import sharp from "sharp";
import type { TypedArray } from "../data/arrays.js";
import { BadRequestError } from "../errors.js";
import type { ChannelSetting } from "../io/checkpoint/app-state.js";

/** At most this many channels are composited into one image (the spec's cap). */
export const MAX_COMPOSITE_CHANNELS = 6;

/** Default channel colours in order (blue, green, magenta, yellow, orange, cyan, white, red); one channel is white. */
export const DEFAULT_CHANNEL_COLORS: readonly (readonly [number, number, number])[] = [
  [0, 0, 255],
  [0, 255, 0],
  [255, 0, 255],
  [255, 255, 0],
  [255, 128, 0],
  [0, 255, 255],
  [255, 255, 255],
  [255, 0, 0],
];

const NAMED_COLORS: Record<string, [number, number, number]> = {
  red: [255, 0, 0],
  green: [0, 255, 0],
  blue: [0, 0, 255],
  cyan: [0, 255, 255],
  magenta: [255, 0, 255],
  yellow: [255, 255, 0],
  white: [255, 255, 255],
  orange: [255, 128, 0],
  gray: [128, 128, 128],
  grey: [128, 128, 128],
};

/** One channel as composited: its index, colour (0…255 each) and contrast window. */
export interface ChannelRender {
  readonly index: number;
  readonly color: readonly [number, number, number];
  readonly lo: number;
  readonly hi: number;
}

/** What the defaults of a composite are drawn from. */
export interface CompositeDefaults {
  readonly channelNames: readonly string[];
  /** Default window per channel (image info's `contrast_limits`). */
  readonly contrastLimits: readonly (readonly [number, number])[];
  readonly isRgb: boolean;
}

/** Parse a colour: a name, `rrggbb`, `#rrggbb`, `rgb` or `#rgb`. */
export function parseColor(text: string): [number, number, number] | null {
  const t = text.trim().toLowerCase();
  if (NAMED_COLORS[t]) return [...NAMED_COLORS[t]!];
  const hex = t.startsWith("#") ? t.slice(1) : t;
  if (/^[0-9a-f]{6}$/.test(hex))
    return [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  if (/^[0-9a-f]{3}$/.test(hex))
    return [0, 1, 2].map((i) => Number.parseInt(hex[i]! + hex[i]!, 16)) as [number, number, number];
  return null;
}

/** `#rrggbb` of a colour. */
export function colorHex(c: readonly [number, number, number]): string {
  return `#${c.map((v) => v.toString(16).padStart(2, "0")).join("")}`;
}

/** The channels shown when nothing is asked: R, G, B for an RGB image, else the first ≤ 6. */
export function defaultChannels(d: CompositeDefaults): ChannelRender[] {
  const n = Math.min(d.channelNames.length, MAX_COMPOSITE_CHANNELS);
  if (d.isRgb) {
    const rgb: [number, number, number][] = [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ];
    return rgb.map((color, index) => ({ index, color, lo: 0, hi: 255 }));
  }
  return Array.from({ length: n }, (_, index) => {
    const [lo, hi] = d.contrastLimits[index] ?? [0, 1];
    const color = n === 1 ? ([255, 255, 255] as const) : DEFAULT_CHANNEL_COLORS[index % 8]!;
    return { index, color, lo, hi };
  });
}

function channelIndex(ref: string, names: readonly string[]): number {
  if (/^\d+$/.test(ref)) {
    const i = Number(ref);
    if (i >= names.length)
      throw new BadRequestError(`channel ${ref} is out of range (the image has ${names.length} channels)`);
    return i;
  }
  const i = names.indexOf(ref);
  if (i < 0)
    throw new BadRequestError(
      `unknown channel ${JSON.stringify(ref.slice(0, 100))} (channels: ${names.slice(0, 20).join(", ")})`,
    );
  return i;
}

/** Parse the `channels` query (syntax in the module comment); 400 on any malformed entry. */
export function parseChannelsQuery(query: string, d: CompositeDefaults): ChannelRender[] {
  if (query.length > 4000) throw new BadRequestError("channels: the query is too long");
  const entries = query.split(",").map((e) => e.trim());
  if (entries.length === 0 || entries.some((e) => e === ""))
    throw new BadRequestError("channels: expected a comma-separated list of channel[:colour[:lo:hi]]");
  if (entries.length > MAX_COMPOSITE_CHANNELS)
    throw new BadRequestError(
      `channels: at most ${MAX_COMPOSITE_CHANNELS} channels are composited at once (got ${entries.length})`,
    );
  const defaults = defaultChannels({ ...d, isRgb: false });
  return entries.map((entry, k) => {
    const parts = entry.split(":");
    if (parts.length !== 1 && parts.length !== 2 && parts.length !== 4)
      throw new BadRequestError(
        `channels: "${entry.slice(0, 100)}" is not channel, channel:colour or channel:colour:lo:hi`,
      );
    const index = channelIndex(parts[0]!, d.channelNames);
    let color: readonly [number, number, number] =
      entries.length === 1 ? [255, 255, 255] : DEFAULT_CHANNEL_COLORS[k % 8]!;
    if (d.isRgb && entries.length <= 3 && index < 3)
      color = (
        [
          [255, 0, 0],
          [0, 255, 0],
          [0, 0, 255],
        ] as const
      )[index]!;
    if (parts.length >= 2 && parts[1] !== "") {
      const c = parseColor(parts[1]!);
      if (!c) throw new BadRequestError(`channels: unknown colour "${parts[1]!.slice(0, 40)}"`);
      color = c;
    }
    let [lo, hi] = d.isRgb
      ? [0, 255]
      : (d.contrastLimits[index] ?? [defaults[0]?.lo ?? 0, defaults[0]?.hi ?? 1]);
    if (parts.length === 4) {
      lo = Number(parts[2]);
      hi = Number(parts[3]);
      if (parts[2] === "" || parts[3] === "" || !Number.isFinite(lo) || !Number.isFinite(hi))
        throw new BadRequestError(`channels: contrast window "${parts[2]}:${parts[3]}" is not two numbers`);
      if (!(hi > lo)) throw new BadRequestError(`channels: contrast window ${lo}:${hi} must have hi > lo`);
    }
    return { index, color, lo, hi };
  });
}

/** The channels a display's encoding shows (`channels` settings), or null when it sets none. */
export function channelsFromEncoding(
  settings: Readonly<Record<string, ChannelSetting>> | undefined,
  d: CompositeDefaults,
): ChannelRender[] | null {
  if (!settings || Object.keys(settings).length === 0) return null;
  const base = defaultChannels(d);
  const out: ChannelRender[] = [];
  const indices = Object.keys(settings)
    .filter((k) => /^\d+$/.test(k) && Number(k) < d.channelNames.length)
    .map(Number)
    .sort((a, b) => a - b);
  for (const i of indices) {
    const s = settings[String(i)]!;
    if (s.visible === false) continue;
    if (out.length >= MAX_COMPOSITE_CHANNELS) break;
    const fallback = base.find((b) => b.index === i);
    const color =
      (s.color ? parseColor(s.color) : null) ?? fallback?.color ?? DEFAULT_CHANNEL_COLORS[out.length % 8]!;
    const [lo, hi] = s.contrast_limits ?? [
      fallback?.lo ?? d.contrastLimits[i]?.[0] ?? 0,
      fallback?.hi ?? d.contrastLimits[i]?.[1] ?? 1,
    ];
    out.push({ index: i, color, lo, hi: hi > lo ? hi : lo + 1 });
  }
  return out;
}

/** A key naming a channel selection (for caches). */
export function channelsKey(channels: readonly ChannelRender[]): string {
  return channels.map((c) => `${c.index}:${c.color.join(".")}:${c.lo}:${c.hi}`).join(",");
}

/**
 * Composite `planes` (one per entry of `channels`, each `n` pixels) into RGB8, `n × 3` bytes:
 * `min(255, round(Σ clamp((v − lo)/(hi − lo), 0, 1) · colour))`.
 */
export function compositeRgb(
  planes: readonly TypedArray[],
  channels: readonly ChannelRender[],
  n: number,
): Uint8ClampedArray {
  const acc = new Float32Array(n * 3);
  channels.forEach((ch, k) => {
    let src = planes[k]!;
    if (src instanceof BigInt64Array || src instanceof BigUint64Array) src = Float64Array.from(src, Number);
    addChannel(src as unknown as ArrayLike<number>, acc, n, ch.lo, 1 / (ch.hi - ch.lo), ch.color);
  });
  // Uint8ClampedArray clamps to 0…255 and rounds to the nearest integer (a native conversion).
  const out = new Uint8ClampedArray(n * 3);
  out.set(acc);
  return out;
}

/** `acc += clamp((v − lo)·scale, 0, 1) · colour` over `n` pixels (NaN counts as 0). */
function addChannel(
  src: ArrayLike<number>,
  acc: Float32Array,
  n: number,
  lo: number,
  scale: number,
  color: readonly [number, number, number],
): void {
  const [r, g, b] = color;
  for (let i = 0, o = 0; i < n; i++, o += 3) {
    let t = (src[i]! - lo) * scale;
    // NaN fails the first test, so it counts as 0.
    t = t > 0 ? (t < 1 ? t : 1) : 0;
    acc[o]! += t * r;
    acc[o + 1]! += t * g;
    acc[o + 2]! += t * b;
  }
}

/** Colour label ids: 0 is black, any other id a colour hashed from the id. */
export function labelsRgb(ids: TypedArray, n: number): Uint8ClampedArray {
  const out = new Uint8ClampedArray(n * 3);
  const v = ids as unknown as ArrayLike<number | bigint>;
  for (let i = 0, o = 0; i < n; i++, o += 3) {
    const id = Number(v[i]);
    if (id === 0) continue;
    let h = Math.imul(id ^ (id >>> 16), 0x45d9f3b);
    h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
    h ^= h >>> 16;
    out[o] = 64 + (h & 0xbf);
    out[o + 1] = 64 + ((h >>> 8) & 0xbf);
    out[o + 2] = 64 + ((h >>> 16) & 0xbf);
  }
  return out;
}

/** Options of WebP encoding. */
export interface WebpOptions {
  /** Lossless WebP (exact pixels, larger and slower); default lossy at quality 80. */
  readonly lossless?: boolean;
  /** Resize to fit inside this many pixels on the longest side (never enlarges). */
  readonly fitPx?: number;
}

/** Encode RGB8 pixels as WebP (on libuv's thread pool). */
export async function encodeWebp(
  rgb: Uint8ClampedArray | Uint8Array,
  width: number,
  height: number,
  opts: WebpOptions = {},
): Promise<{ webp: Uint8Array; width: number; height: number }> {
  let img = sharp(Buffer.from(rgb.buffer, rgb.byteOffset, rgb.byteLength), {
    raw: { width, height, channels: 3 },
  });
  if (opts.fitPx && Math.max(width, height) > opts.fitPx)
    img = img.resize({ width: opts.fitPx, height: opts.fitPx, fit: "inside", kernel: "lanczos3" });
  const { data, info } = await img
    .webp(opts.lossless ? { lossless: true, effort: 0 } : { quality: 80, effort: 0 })
    .toBuffer({ resolveWithObject: true });
  return {
    webp: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    width: info.width,
    height: info.height,
  };
}

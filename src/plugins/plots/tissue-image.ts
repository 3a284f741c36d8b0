/**
 * The tissue image under `pl.spatial_scatter`'s spots (squidpy draws the library's image beneath the
 * cells): the part of an image element that the plot's axes window shows, read from the pyramid level
 * closest to (and not coarser than) the figure's pixels, composited to RGB with the raster store's own
 * rules (`compositeRgb` and `defaultChannels`: R, G, B for an RGB image, a grey channel or the
 * default channel colours otherwise, contrast from the region's 0 … 99.5th percentile), and resampled
 * (nearest pixel) onto the window through the element's placement in the canvas world, the space of
 * `obsm["spatial"]`. Runs inside the plot's job worker: the element's pixels are read there.
 */
import sharp from "sharp";
import type { TypedArray } from "../../sdk/data/arrays.js";
import type { AxisSelection, ImageElement } from "../../sdk/data/elements.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { elementToCanvas } from "../../sdk/data/world-space.js";
import { isRgbImage, planeStats } from "../../sdk/raster/info.js";
import { type ChannelRender, compositeRgb, defaultChannels } from "../../sdk/raster/render.js";

/** Largest region read for the plot, in level pixels (the level is made coarser until it fits). */
const MAX_REGION_PX = 16_000_000;

/** The image over a data window: PNG bytes covering exactly `[x0, x1] × [y0, y1]`. */
export interface TissueImage {
  readonly png: Uint8Array;
  readonly element: string;
  readonly level: number;
}

/** The image elements a spatial scatter may draw under its spots (drawn annotations excluded). */
export function imageNames(sd: SpatialData): string[] {
  return Object.keys(sd.images).filter((n) => !n.startsWith("_"));
}

/**
 * The image `name` over the world window `[x0, x1] × [y0, y1]` (y down) as a `width × height` PNG,
 * or null when the image does not meet the window. `channel` picks one channel (shown grey).
 */
export async function tissueImage(
  sd: SpatialData,
  table: string | null,
  name: string,
  window: { x0: number; x1: number; y0: number; y1: number },
  width: number,
  height: number,
  opts: { channel?: number | null; op: string },
): Promise<TissueImage | null> {
  const el = sd.images[name] as ImageElement | undefined;
  if (!el)
    throw new Error(
      `${opts.op}: no image element "${name}" (images: ${imageNames(sd).join(", ") || "none"})`,
    );
  const m = elementToCanvas(sd, table, el); // level-0 pixel → world (3 × 3, row-major)
  const a = m[0]![0]!;
  const b = m[0]![1]!;
  const c = m[0]![2]!;
  const d = m[1]![0]!;
  const e = m[1]![1]!;
  const f = m[1]![2]!;
  const det = a * e - b * d;
  if (!det) throw new Error(`${opts.op}: image "${name}" has a singular placement`);
  // world → level-0 pixel
  const toPx = (x: number, y: number): [number, number] => [
    (e * (x - c) - b * (y - f)) / det,
    (-d * (x - c) + a * (y - f)) / det,
  ];
  const xi = el.axes.indexOf("x");
  const yi = el.axes.indexOf("y");
  const ci = el.axes.indexOf("c");
  const l0 = el.levels[0]!;
  const W0 = l0.shape[xi]!;
  const H0 = l0.shape[yi]!;
  const corners = [
    toPx(window.x0, window.y0),
    toPx(window.x1, window.y0),
    toPx(window.x0, window.y1),
    toPx(window.x1, window.y1),
  ];
  const px0 = Math.max(0, Math.floor(Math.min(...corners.map((p) => p[0]))));
  const py0 = Math.max(0, Math.floor(Math.min(...corners.map((p) => p[1]))));
  const px1 = Math.min(W0, Math.ceil(Math.max(...corners.map((p) => p[0]))));
  const py1 = Math.min(H0, Math.ceil(Math.max(...corners.map((p) => p[1]))));
  if (px1 <= px0 || py1 <= py0) return null;
  // the coarsest level whose pixel is still no larger than an output pixel, then coarser until it fits
  const l0PerOut = Math.max((px1 - px0) / width, (py1 - py0) / height);
  let k = 0;
  for (let i = 1; i < el.levels.length; i++) {
    const f2 = W0 / el.levels[i]!.shape[xi]!;
    if (f2 <= l0PerOut) k = i;
  }
  const fit = (i: number) => {
    const lv = el.levels[i]!;
    const sx = lv.shape[xi]! / W0;
    const sy = lv.shape[yi]! / H0;
    const r = {
      x0: Math.floor(px0 * sx),
      y0: Math.floor(py0 * sy),
      x1: Math.min(lv.shape[xi]!, Math.ceil(px1 * sx)),
      y1: Math.min(lv.shape[yi]!, Math.ceil(py1 * sy)),
      sx,
      sy,
    };
    return { ...r, px: (r.x1 - r.x0) * (r.y1 - r.y0) };
  };
  while (k < el.levels.length - 1 && fit(k).px > MAX_REGION_PX) k++;
  const r = fit(k);
  if (r.px > MAX_REGION_PX)
    throw new Error(
      `${opts.op}: image "${name}" is ${r.x1 - r.x0} × ${r.y1 - r.y0} px in view at its coarsest level`,
    );
  const lv = el.levels[k]!;
  const nch = ci >= 0 ? lv.shape[ci]! : 1;
  const rgb = isRgbImage(el) && opts.channel == null;
  const wanted =
    opts.channel != null ? [opts.channel] : rgb ? [0, 1, 2] : [...Array(Math.min(nch, 6)).keys()];
  if (opts.channel != null && (opts.channel < 0 || opts.channel >= nch))
    throw new Error(
      `${opts.op}: img_channel ${opts.channel} is out of range (image "${name}" has ${nch} channels)`,
    );
  const rw = r.x1 - r.x0;
  const rh = r.y1 - r.y0;
  const planes: TypedArray[] = [];
  for (const ch of wanted) {
    const sel: AxisSelection[] = el.axes.map((ax, i) =>
      ax === "x" ? [r.x0, r.x1] : ax === "y" ? [r.y0, r.y1] : ax === "c" ? ch : Math.floor(lv.shape[i]! / 2),
    );
    planes.push((await lv.source.read(sel)).data);
  }
  let channels: ChannelRender[];
  if (rgb) channels = defaultChannels({ channelNames: ["r", "g", "b"], contrastLimits: [], isRgb: true });
  else {
    const limits = planes.map((p) => {
      const st = planeStats(p as unknown as ArrayLike<number>);
      return [Math.min(0, st.min), st.high > 0 ? st.high : st.max > 0 ? st.max : 1] as [number, number];
    });
    channels = defaultChannels({
      channelNames: wanted.map(String),
      contrastLimits: limits,
      isRgb: false,
    }).map((ch, i) => ({ ...ch, index: i }));
  }
  const region = compositeRgb(planes, channels, rw * rh);
  // resample onto the window, output pixel centre → world → level pixel (nearest)
  const out = new Uint8Array(width * height * 4);
  for (let oy = 0; oy < height; oy++) {
    const wy = window.y0 + ((oy + 0.5) / height) * (window.y1 - window.y0);
    for (let ox = 0; ox < width; ox++) {
      const wx = window.x0 + ((ox + 0.5) / width) * (window.x1 - window.x0);
      const [qx, qy] = toPx(wx, wy);
      const lx = Math.floor(qx * r.sx) - r.x0;
      const ly = Math.floor(qy * r.sy) - r.y0;
      if (lx < 0 || ly < 0 || lx >= rw || ly >= rh) continue;
      const s = (ly * rw + lx) * 3;
      const o = (oy * width + ox) * 4;
      out[o] = region[s]!;
      out[o + 1] = region[s + 1]!;
      out[o + 2] = region[s + 2]!;
      out[o + 3] = 255;
    }
  }
  const png = await sharp(out, { raw: { width, height, channels: 4 } })
    .png({ compressionLevel: 6 })
    .toBuffer();
  return { png: new Uint8Array(png.buffer, png.byteOffset, png.byteLength), element: name, level: k };
}

/**
 * The image under the cells: the part of the display's image that the frame shows, composited with
 * the display's channel colours and contrast windows (the same `compositeRgb` as the image tiles the
 * canvas shows), read from the pyramid level whose pixels are closest to, and not smaller than, an
 * output pixel, and embedded as one PNG placed by an affine transform.
 *
 * Two halves, so the per-pixel work leaves the server's event loop: `imageRegion` (on the thread that
 * holds the session) picks the level and reads the region's raw planes and channel settings from the
 * raster store — chunk reads and row copies, no per-pixel pass; `imageLayerSvg` (on the figure
 * thread, `draw.ts`) composites them, reduces a level finer than the output, encodes the PNG and
 * writes the `<image>` markup.
 */
import sharp from "sharp";
import type { TypedArray } from "../data/arrays.js";
import type { ImageInfo } from "../raster/info.js";
import { type ChannelRender, compositeRgb, labelsRgb } from "../raster/render.js";
import { type Affine6, apply, compose, type FigureFrame, invertAffine } from "./frame.js";
import type { RenderSource } from "./render-source.js";
import { el } from "./svg.js";

/** Largest region composited for a figure, in level pixels (a 6000 × 6000 image). */
export const MAX_IMAGE_REGION_PX = 36_000_000;

/** The raw pixels of the image region a figure shows (plain data: it crosses to the figure thread). */
export interface ImageRegion {
  /** The image (or labels) element. */
  readonly element: string;
  /** `labels`: `planes[0]` holds ids, coloured by `labelsRgb`; `image`: one plane per channel. */
  readonly kind: "image" | "labels";
  readonly planes: readonly TypedArray[];
  readonly channels: readonly ChannelRender[];
  /** Pyramid level read and the region's box in its pixels. */
  readonly level: number;
  readonly x0: number;
  readonly y0: number;
  readonly width: number;
  readonly height: number;
  /** Level pixel → world. */
  readonly toWorld: Affine6;
}

/** Chooses the level: the coarsest whose pixel still covers at most `1.5` output pixels. */
export function chooseLevel(info: ImageInfo, p2w: Affine6, frame: FigureFrame): number {
  const det = Math.abs(p2w[0] * p2w[4] - p2w[1] * p2w[3]);
  const worldPerL0 = Math.sqrt(det);
  const outPerWorld = frame.scale * (frame.dpi / 96);
  const l0 = info.levels[0]!;
  let k = 0;
  for (let i = 1; i < info.levels.length; i++) {
    const f = l0.width / info.levels[i]!.width;
    if (worldPerL0 * f * outPerWorld <= 1.5) k = i;
  }
  return k;
}

/** The region of image `name` that `frame` shows, read raw; null when the image is not in view. */
export async function imageRegion(
  source: RenderSource,
  name: string,
  frame: FigureFrame,
  displayId: string | undefined,
): Promise<ImageRegion | null> {
  if (!source.imageInfo || !source.imageRegion) return null;
  const info = await source.imageInfo(name);
  const p2w: Affine6 = info.pixel_to_world ?? [1, 0, 0, 0, 1, 0];
  const l0 = info.levels[0]!;
  let k = chooseLevel(info, p2w, frame);
  for (;;) {
    const lv = info.levels[k]!;
    // level-k pixel → level-0 pixel → world
    const toWorld = compose(p2w, [l0.width / lv.width, 0, 0, 0, l0.height / lv.height, 0]);
    const inv = invertAffine(toWorld);
    const [wx0, wy0, wx1, wy1] = frame.worldWindow;
    const corners = [apply(inv, wx0, wy0), apply(inv, wx1, wy0), apply(inv, wx0, wy1), apply(inv, wx1, wy1)];
    const x0 = Math.max(0, Math.floor(Math.min(...corners.map((c) => c[0]))));
    const y0 = Math.max(0, Math.floor(Math.min(...corners.map((c) => c[1]))));
    const x1 = Math.min(lv.width, Math.ceil(Math.max(...corners.map((c) => c[0]))));
    const y1 = Math.min(lv.height, Math.ceil(Math.max(...corners.map((c) => c[1]))));
    if (x1 <= x0 || y1 <= y0) return null;
    const w = x1 - x0;
    const h = y1 - y0;
    if (w * h > MAX_IMAGE_REGION_PX && k < info.levels.length - 1) {
      k++;
      continue;
    }
    if (w * h > MAX_IMAGE_REGION_PX) {
      throw new RangeError(`image ${name}: the region in view is ${w} × ${h} px at its coarsest level`);
    }
    const raw = await source.imageRegion(name, k, x0, y0, x1, y1, displayId);
    return { element: name, ...raw, level: k, x0, y0, width: w, height: h, toWorld };
  }
}

/** The drawn image: markup, the level read and the region's size. */
export interface ImageLayer {
  readonly svg: string;
  readonly level: number;
  readonly width: number;
  readonly height: number;
}

/** Composites `r`, encodes it as PNG and places it in `frame` (the figure thread's half). */
export async function imageLayerSvg(r: ImageRegion, frame: FigureFrame): Promise<ImageLayer> {
  const { width: w, height: h, toWorld } = r;
  const rgb =
    r.kind === "labels" ? labelsRgb(r.planes[0]!, w * h) : compositeRgb(r.planes, r.channels, w * h);
  // A level finer than the output (no coarser level in the store) is reduced here, natively, to
  // about the output's resolution: librsvg would otherwise decode and filter every extra pixel.
  const outPerLevelPx =
    Math.sqrt(Math.abs(toWorld[0] * toWorld[4] - toWorld[1] * toWorld[3])) * frame.scale * (frame.dpi / 96);
  let img = sharp(rgb, { raw: { width: w, height: h, channels: 3 } });
  let ew = w;
  let eh = h;
  if (outPerLevelPx < 0.75) {
    ew = Math.max(1, Math.round(w * outPerLevelPx));
    eh = Math.max(1, Math.round(h * outPerLevelPx));
    img = img.resize(ew, eh, { fit: "fill", kernel: "lanczos3" });
  }
  const png = await img.png({ compressionLevel: 1 }).toBuffer();
  // the embedded w' × h' image stretched over the region's w × h level pixels
  const m = compose(frame.worldToPx, compose(toWorld, [w / ew, 0, r.x0, 0, h / eh, r.y0]));
  const href = `data:image/png;base64,${png.toString("base64")}`;
  const svg = el("image", {
    x: 0,
    y: 0,
    width: ew,
    height: eh,
    href,
    preserveAspectRatio: "none",
    // SVG orders a matrix by columns: (a, b, c, d, e, f) = (m00, m10, m01, m11, m02, m12)
    transform: `matrix(${[m[0], m[3], m[1], m[4], m[2], m[5]].map((v) => String(Number(v.toPrecision(10)))).join(" ")})`,
    class: "image-layer",
    "data-element": r.element,
    "data-level": r.level,
  });
  return { svg, level: r.level, width: w, height: h };
}

/**
 * squidpy's `im.segment`: pixels of one channel at or above a threshold (Otsu's, as scikit-image's
 * `threshold_otsu`, unless given) are foreground; `watershed` (squidpy's default) splits them into
 * objects by a marker watershed of their distance to the background (`sdk/math/spatial/watershed.ts`),
 * `threshold` takes their 8-connected components (scikit-image's `measure.label`, numbered in raster
 * order). The objects become a labels element.
 */
import { allocArray, dense } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import type { AxisSelection, ImageElement, LabelsElement } from "../../sdk/data/elements.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { watershedMask } from "../../sdk/math/spatial/watershed.js";
import { memoryRasterSource } from "../../sdk/raster/memory-source.js";

/** Params of `segment`. */
export interface SegmentParams {
  /**
   * Image element to segment; default the object's only image.
   * @widget text
   * @maxLength 256
   */
  layer?: string | null;
  /**
   * Segmentation method: `watershed` (squidpy's: distance-transform peaks in 5 × 5 windows as markers,
   * flooded inside the foreground) or `threshold` (8-connected foreground components).
   * @default "watershed"
   */
  method?: "watershed" | "threshold";
  /**
   * Channel of the image to segment.
   * @default 0
   * @asType integer
   * @minimum 0
   */
  channel?: number;
  /** Threshold; default Otsu's threshold of the channel. */
  thresh?: number | null;
  /**
   * Foreground is ≥ thresh (true) or < thresh (false).
   * @default true
   */
  geq?: boolean;
  /**
   * Name of the labels element written; default `<layer>_segmented_<method>`.
   * @maxLength 256
   */
  layer_added?: string | null;
}

/** Images larger than this (pixels of the finest level) are refused: the whole plane is held. */
const MAX_PIXELS = 8192 * 8192;

/** Widest integer range Otsu's threshold bins one value per bin (scikit-image's `bincount`); wider ones get 256 bins. */
const MAX_INTEGER_BINS = 1 << 24;

/**
 * Otsu's threshold of `values` as scikit-image's `threshold_otsu` computes it: for an integer image
 * (`integer` true) one bin per integer value from the minimum to the maximum (its `bincount`
 * histogram), otherwise 256 equal bins over the range; the threshold is the centre of the bin that
 * maximises the between-class variance.
 */
export function otsuThreshold(values: ArrayLike<number>, integer = false): number {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!(hi > lo)) return lo;
  const byValue = integer && hi - lo + 1 <= MAX_INTEGER_BINS;
  const nb = byValue ? hi - lo + 1 : 256;
  const hist = new Float64Array(nb);
  const w = byValue ? 1 : (hi - lo) / nb;
  if (byValue) for (let i = 0; i < values.length; i++) hist[values[i]! - lo]! += 1;
  else
    for (let i = 0; i < values.length; i++) hist[Math.min(nb - 1, Math.floor((values[i]! - lo) / w))]! += 1;
  const centre = byValue ? (b: number) => lo + b : (b: number) => lo + (b + 0.5) * w;
  const w1 = new Float64Array(nb);
  const m1 = new Float64Array(nb);
  let cw = 0;
  let cm = 0;
  for (let b = 0; b < nb; b++) {
    cw += hist[b]!;
    cm += hist[b]! * centre(b);
    w1[b] = cw;
    m1[b] = cm / cw;
  }
  const w2 = new Float64Array(nb);
  const m2 = new Float64Array(nb);
  cw = 0;
  cm = 0;
  for (let b = nb - 1; b >= 0; b--) {
    cw += hist[b]!;
    cm += hist[b]! * centre(b);
    w2[b] = cw;
    m2[b] = cm / cw;
  }
  let best = -1;
  let at = 0;
  for (let b = 0; b < nb - 1; b++) {
    const d = m1[b]! - m2[b + 1]!;
    const v = w1[b]! * w2[b + 1]! * d * d;
    if (v > best) {
      best = v;
      at = b;
    }
  }
  return centre(at);
}

/** 8-connected components of a mask (h × w), labelled 1… in raster order of first pixel; 0 is background. */
export function labelComponents(
  mask: Uint8Array,
  h: number,
  w: number,
): { labels: Uint32Array; count: number } {
  const labels = allocArray("uint32", h * w) as Uint32Array;
  const queue = new Int32Array(h * w);
  let count = 0;
  for (let s = 0; s < h * w; s++) {
    if (!mask[s] || labels[s]) continue;
    count++;
    labels[s] = count;
    let head = 0;
    let tail = 0;
    queue[tail++] = s;
    while (head < tail) {
      const p = queue[head++]!;
      const r = (p / w) | 0;
      const c = p - r * w;
      for (let dr = -1; dr <= 1; dr++)
        for (let dc = -1; dc <= 1; dc++) {
          const rr = r + dr;
          const cc = c + dc;
          if (rr < 0 || rr >= h || cc < 0 || cc >= w) continue;
          const q = rr * w + cc;
          if (mask[q] && !labels[q]) {
            labels[q] = count;
            queue[tail++] = q;
          }
        }
    }
  }
  return { labels, count };
}

/** Labels as the uint32 array a labels element holds (shared memory, as every raster's). */
function asUint32(r: { labels: Int32Array; count: number }): { labels: Uint32Array; count: number } {
  const out = allocArray("uint32", r.labels.length) as Uint32Array;
  out.set(r.labels);
  return { labels: out, count: r.count };
}

/**
 * Segment an image (squidpy's `im.segment`): foreground pixels of one channel (≥ `thresh`, or < it
 * with `geq` false; Otsu's threshold by default, computed as scikit-image does for the image's dtype)
 * become objects — with `watershed`, basins flooded from the 4-connected groups of distance-transform
 * maxima (5 × 5 windows), numbered as the markers in raster order, exactly as squidpy with SciPy and
 * scikit-image; with `threshold`, 8-connected components numbered 1, 2, … in raster order. Writes a labels element `layer_added`
 * (y, x, uint32) with the image's transformations, from the image's finest level.
 */
export async function segment(sd: SpatialData, params: SegmentParams, ctx: OpContext): Promise<Change> {
  const op = "segment";
  const names = Object.keys(sd.images);
  let img: ImageElement | undefined;
  if (params.layer) img = Object.hasOwn(sd.images, params.layer) ? sd.images[params.layer] : undefined;
  else if (names.length === 1) img = sd.images[names[0]!];
  if (!img)
    throw new Error(
      params.layer
        ? `no image "${params.layer}" (images: ${names.length ? names.join(", ") : "none"})`
        : names.length
          ? `several images (${names.join(", ")}): name one with layer`
          : "the object has no image",
    );
  const method = params.method ?? "watershed";
  if (method !== "threshold" && method !== "watershed")
    throw new Error(`${op}: unknown method "${method}" (watershed, threshold)`);
  const level = img.levels[0]!;
  const axes = img.axes;
  const h = level.shape[axes.indexOf("y")]!;
  const w = level.shape[axes.indexOf("x")]!;
  if (h * w > MAX_PIXELS)
    throw new Error(`${op}: image "${img.name}" has ${h} × ${w} pixels, over ${MAX_PIXELS}`);
  const ci = axes.indexOf("c");
  const channel = params.channel ?? 0;
  const nChannels = ci >= 0 ? level.shape[ci]! : 1;
  if (channel >= nChannels)
    throw new Error(`${op}: channel ${channel} of image "${img.name}" (it has ${nChannels})`);
  const sel: AxisSelection[] = axes.map((a) => (a === "c" ? channel : a === "x" || a === "y" ? null : 0));
  const plane = await level.source.read(sel, ctx.signal);
  const values = plane.data as unknown as ArrayLike<number>;
  const yAxisFirst = axes.filter((a) => a === "x" || a === "y")[0] === "y";
  const at = (r: number, c: number) => (yAxisFirst ? r * w + c : c * h + r);
  const integer = !img.dtype.startsWith("float");
  const thresh = params.thresh ?? otsuThreshold(values, integer);
  const geq = params.geq ?? true;
  const mask = new Uint8Array(h * w);
  for (let r = 0; r < h; r++)
    for (let c = 0; c < w; c++) {
      const v = Number(values[at(r, c)]);
      mask[r * w + c] = (geq ? v >= thresh : v < thresh) ? 1 : 0;
    }
  ctx.signal.throwIfAborted();
  const { labels, count } =
    method === "watershed" ? asUint32(watershedMask(mask, h, w)) : labelComponents(mask, h, w);
  const name = params.layer_added ?? `${img.name}_segmented_${method}`;
  const source = memoryRasterSource(dense(labels, [h, w], "uint32"), [Math.min(h, 512), Math.min(w, 512)]);
  const element: LabelsElement = {
    kind: "labels",
    name,
    transformations: img.transformations,
    axes: ["y", "x"],
    dtype: "uint32",
    levels: [
      { path: "0", shape: [h, w], chunks: source.chunks, dtype: "uint32", levelTransform: [], source },
    ],
  };
  ctx.log(
    `${op}: ${count} objects (${method}) at threshold ${thresh} in channel ${channel} of "${img.name}"; added labels "${name}"`,
  );
  return { labels: { [name]: element } };
}

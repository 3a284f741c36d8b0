/**
 * squidpy's `im.calculate_image_features`: image features of the square crop around every spot or
 * cell, from an image element of the object, into obsm `img_features` (one frame column per feature,
 * named as squidpy names them). Pixels come from the element's finest level; see `image-features.ts`
 * for the statistics.
 */
import { invert } from "../../sdk/data/affine.js";
import type { Change } from "../../sdk/data/change.js";
import { dataFrame } from "../../sdk/data/dataframe.js";
import type { AxisSelection, ImageElement, SpatialElement } from "../../sdk/data/elements.js";
import { type SpatialData, transformTo } from "../../sdk/data/spatialdata.js";
import { obsNames, type Table } from "../../sdk/data/table.js";
import { isUnsDict, unsGet } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { float64Column } from "./frames.js";
import {
  glcmProps,
  histogramCounts,
  quantileSorted,
  TEXTURE_PROPS,
  type TextureProp,
} from "./image-features.js";
import { activeTable, spatialCoordinates } from "./inputs.js";

/** A feature family squidpy computes without a model. */
export type ImageFeature = "summary" | "histogram" | "texture";

/** Params of `calculate_image_features`. */
export interface CalculateImageFeaturesParams {
  /**
   * Image element to read (squidpy's ImageContainer layer); default the object's only image.
   * @widget text
   * @maxLength 256
   */
  layer?: string | null;
  /**
   * Feature families: `summary` (quantiles), `histogram`, `texture` (grey-level co-occurrence).
   * @default "summary"
   */
  features?: ImageFeature | ImageFeature[];
  /**
   * Crop side in coordinate units before `spot_scale`; default uns
   * `spatial/<library_id>/scalefactors/spot_diameter_fullres` (Visium in AnnData), else twice the
   * median radius of the table's region circles (Visium read by `io.visium`).
   * @exclusiveMinimum 0
   */
  spot_diameter?: number | null;
  /**
   * Scale of the crop relative to the spot diameter.
   * @default 1
   * @exclusiveMinimum 0
   * @maximum 100
   */
  spot_scale?: number;
  /**
   * Library in uns `spatial` holding the spot diameter; default the only one.
   * @maxLength 256
   */
  library_id?: string | null;
  /**
   * Coordinate system the obsm coordinates are in (the image is placed in it by its transformations);
   * default the first system of the table's region element (the spots' or cells' own), else `global`.
   * @maxLength 256
   */
  coordinate_system?: string | null;
  /**
   * obsm key of the coordinates.
   * @default "spatial"
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * Quantiles of `summary`.
   * @maxItems 100
   */
  quantiles?: number[];
  /**
   * Bins of `histogram`.
   * @default 10
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  bins?: number;
  /**
   * Pixel distances of `texture`.
   * @maxItems 20
   */
  distances?: number[];
  /**
   * Angles (radians) of `texture`; default 0, π/4, π/2, 3π/4.
   * @maxItems 20
   */
  angles?: number[];
  /**
   * obsm key of the feature frame.
   * @default "img_features"
   * @maxLength 256
   */
  key_added?: string;
}

/** Crops larger than this many pixels per channel are refused (a wrong spot diameter, usually). */
const MAX_CROP_PIXELS = 4096 * 4096;

/** The image element named, or the only one. */
function pickImage(sd: SpatialData, layer: string | null | undefined): ImageElement {
  const names = Object.keys(sd.images);
  if (layer) {
    const el = Object.hasOwn(sd.images, layer) ? sd.images[layer] : undefined;
    if (!el) throw new Error(`no image "${layer}" (images: ${names.length ? names.join(", ") : "none"})`);
    return el;
  }
  if (names.length !== 1)
    throw new Error(
      names.length ? `several images (${names.join(", ")}): name one with layer` : "the object has no image",
    );
  return sd.images[names[0]!]!;
}

/** uns `spatial/<library>/scalefactors/spot_diameter_fullres`, when there is one. */
function unsSpotDiameter(
  uns: Parameters<typeof unsGet>[0],
  libraryId: string | null | undefined,
): number | undefined {
  const spatial = unsGet(uns, "spatial");
  const libs = isUnsDict(spatial) ? Object.keys(spatial.entries) : [];
  const lib = libraryId ?? (libs.length === 1 ? libs[0] : undefined);
  const v = lib !== undefined ? unsGet(uns, `spatial/${lib}/scalefactors/spot_diameter_fullres`) : undefined;
  return typeof v === "number" && v > 0 ? v : undefined;
}

/** The element the table annotates (its `region`), when it is one element of the object. */
function regionElement(sd: SpatialData, t: Table): SpatialElement | undefined {
  const region = t.annotation?.region;
  if (typeof region !== "string") return undefined;
  for (const group of [sd.shapes, sd.labels, sd.points] as Record<string, SpatialElement>[])
    if (Object.hasOwn(group, region)) return group[region];
  return undefined;
}

/** Twice the median `radius` of a circles element (a Visium spot's diameter), when it is one. */
function circleDiameter(el: SpatialElement | undefined): number | undefined {
  if (el?.kind !== "shapes") return undefined;
  const r = el.frame.columns.radius as { data?: ArrayLike<number> } | undefined;
  if (!r?.data || r.data.length === 0) return undefined;
  const sorted = Float64Array.from(r.data).sort();
  const d = 2 * quantileSorted(sorted, 0.5);
  return d > 0 ? d : undefined;
}

/** Grey levels 0…255 of a crop plane for texture: uint8 as is, other integers by their top byte, floats in [0, 1]. */
function toGrey(values: ArrayLike<number>, dtype: string): Uint8Array {
  const out = new Uint8Array(values.length);
  const shift =
    dtype === "uint16" || dtype === "int16" ? 8 : dtype === "uint32" || dtype === "int32" ? 24 : 0;
  const float = dtype.startsWith("float");
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    out[i] = float
      ? Math.max(0, Math.min(255, Math.round(v * 255)))
      : Math.max(0, Math.min(255, v >>> shift));
  }
  return out;
}

/**
 * Image features per spot or cell, as squidpy's `im.calculate_image_features`: for each obs, the
 * square crop of side round(spot_diameter × spot_scale / 2) · 2 + 1 pixels centred on its coordinates
 * (mapped into the image's pixels by the image's transformation to `coordinate_system`), and per
 * channel: `summary` — `summary_ch-<c>_quantile-<q>` (quantiles 0.9, 0.5, 0.1); `histogram` —
 * `histogram_ch-<c>_bin-<i>` (counts of `bins` bins over the crop's range); `texture` —
 * `texture_<prop>_ch-<c>_dist-<d>_angle-<a>` (contrast, dissimilarity, homogeneity, correlation, ASM
 * of the grey-level co-occurrence matrix). Crops are clipped at the image's edge (squidpy pads them
 * with zeros); a crop wholly outside gives NaN features.
 *
 * Writes obsm `<key_added>` (a frame, obs × features).
 * @peakMemory n_obs * 8 * 64
 */
export async function calculate_image_features(
  sd: SpatialData,
  params: CalculateImageFeaturesParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "calculate_image_features";
  const t = activeTable(sd, ctx.table);
  const img = pickImage(sd, params.layer);
  const coords = await spatialCoordinates(t, ctx.table, params.spatial_key ?? "spatial");
  const families = new Set<ImageFeature>(
    Array.isArray(params.features) ? params.features : [params.features ?? "summary"],
  );
  for (const f of families)
    if (f !== "summary" && f !== "histogram" && f !== "texture")
      throw new Error(`${op}: unknown feature "${f}" (summary, histogram, texture)`);
  const quantiles = params.quantiles ?? [0.9, 0.5, 0.1];
  for (const q of quantiles)
    if (!(q >= 0 && q <= 1)) throw new Error(`${op}: quantile ${q} is not in [0, 1]`);
  const bins = params.bins ?? 10;
  const distances = params.distances ?? [1];
  const angles = params.angles ?? [0, Math.PI / 4, Math.PI / 2, (3 * Math.PI) / 4];
  const props: readonly TextureProp[] = TEXTURE_PROPS;
  const region = regionElement(sd, t);
  const baseDiameter =
    params.spot_diameter ?? unsSpotDiameter(t.uns, params.library_id) ?? circleDiameter(region);
  if (baseDiameter === undefined)
    throw new Error(
      `${op}: no spot_diameter given, no uns spatial/<library_id>/scalefactors/spot_diameter_fullres, and the table's region is not circles`,
    );
  const diameter = baseDiameter * (params.spot_scale ?? 1);
  const cs =
    params.coordinate_system ?? (region ? Object.keys(region.transformations)[0] : undefined) ?? "global";
  const key = params.key_added ?? "img_features";

  // obs coordinates → pixels of level 0 (the element's intrinsic coordinates).
  let toPixel: number[][];
  try {
    toPixel = invert(transformTo(sd, img, cs, ["x", "y"]));
  } catch (err) {
    throw new Error(
      `${op}: image "${img.name}" cannot be placed in coordinate system "${cs}": ${(err as Error).message}`,
    );
  }
  // Pixel units per coordinate unit along x, for the crop size.
  const pxPerUnit = Math.hypot(toPixel[0]![0]!, toPixel[1]![0]!);
  const radius = Math.round((diameter * pxPerUnit) / 2);
  const side = 2 * radius + 1;
  if (side * side > MAX_CROP_PIXELS)
    throw new Error(`${op}: a crop of ${side} × ${side} pixels is too large; check spot_diameter`);
  const level = img.levels[0]!;
  const axes = img.axes;
  const xi = axes.indexOf("x");
  const yi = axes.indexOf("y");
  const ci = axes.indexOf("c");
  const width = level.shape[xi]!;
  const height = level.shape[yi]!;
  const nChannels = ci >= 0 ? level.shape[ci]! : 1;

  // Column names in squidpy's order: per family, per channel.
  const names: string[] = [];
  if (families.has("summary"))
    for (let c = 0; c < nChannels; c++)
      for (const q of quantiles) names.push(`summary_ch-${c}_quantile-${q}`);
  if (families.has("histogram"))
    for (let c = 0; c < nChannels; c++)
      for (let b = 0; b < bins; b++) names.push(`histogram_ch-${c}_bin-${b}`);
  if (families.has("texture"))
    for (let c = 0; c < nChannels; c++)
      for (const p of props)
        for (const d of distances)
          for (const a of angles) names.push(`texture_${p}_ch-${c}_dist-${d}_angle-${a.toFixed(2)}`);
  const n = coords.n;
  const cols = names.map(() => new Float64Array(n).fill(Number.NaN));
  const counts = new Float64Array(65536);

  // Crop centres in pixels, and the block of the image each falls in (clamped to the image). Blocks
  // are read one at a time with a margin of one crop radius, so every pixel is read once or a few
  // times however many crops overlap it (a PNG or TIFF decodes whole strips or tiles per read).
  const block = Math.max(1024, 4 * side);
  const nbx = Math.ceil(width / block);
  const nby = Math.ceil(height / block);
  const cx = new Int32Array(n);
  const cy = new Int32Array(n);
  const byBlock = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const x = coords.xy[2 * i]!;
    const y = coords.xy[2 * i + 1]!;
    const px = Math.round(toPixel[0]![0]! * x + toPixel[0]![1]! * y + toPixel[0]![2]!);
    const py = Math.round(toPixel[1]![0]! * x + toPixel[1]![1]! * y + toPixel[1]![2]!);
    if (!Number.isFinite(px) || !Number.isFinite(py)) continue;
    // A crop wholly outside the image keeps NaN features.
    if (px + radius < 0 || px - radius >= width || py + radius < 0 || py - radius >= height) continue;
    cx[i] = px;
    cy[i] = py;
    const b =
      Math.min(nby - 1, Math.max(0, Math.floor(py / block))) * nbx +
      Math.min(nbx - 1, Math.max(0, Math.floor(px / block)));
    const list = byBlock.get(b);
    if (list) list.push(i);
    else byBlock.set(b, [i]);
  }
  let done = 0;
  for (const [b, members] of [...byBlock].sort((p, q) => p[0] - q[0])) {
    ctx.signal.throwIfAborted();
    ctx.progress(done / n, "crops");
    const by = Math.floor(b / nbx);
    const bx = b - by * nbx;
    const wx0 = Math.max(0, bx * block - radius);
    const wx1 = Math.min(width, (bx + 1) * block + radius);
    const wy0 = Math.max(0, by * block - radius);
    const wy1 = Math.min(height, (by + 1) * block + radius);
    const sel: AxisSelection[] = axes.map((a) =>
      a === "x" ? [wx0, wx1] : a === "y" ? [wy0, wy1] : a === "c" ? null : 0,
    );
    const win = await level.source.read(sel, ctx.signal);
    const data = win.data as unknown as ArrayLike<number>;
    // The window keeps the element's axis order, without the axes read at one index.
    const kept = axes.filter((a) => a === "x" || a === "y" || a === "c");
    const strides = win.shape.map((_, a) => win.shape.slice(a + 1).reduce((m, v) => m * v, 1));
    const sx = strides[kept.indexOf("x")]!;
    const sy = strides[kept.indexOf("y")]!;
    const sc = ci >= 0 ? strides[kept.indexOf("c")]! : 0;
    for (const i of members) {
      const x0 = Math.max(0, cx[i]! - radius);
      const x1 = Math.min(width, cx[i]! + radius + 1);
      const y0 = Math.max(0, cy[i]! - radius);
      const y1 = Math.min(height, cy[i]! + radius + 1);
      const w = x1 - x0;
      const h = y1 - y0;
      const planes = Array.from({ length: nChannels }, (_, c) => {
        const out = new Float64Array(w * h);
        for (let r = 0; r < h; r++) {
          const rowOff = c * sc + (y0 - wy0 + r) * sy + (x0 - wx0) * sx;
          for (let q = 0; q < w; q++) out[r * w + q] = Number(data[rowOff + q * sx]);
        }
        return out;
      });
      let col = 0;
      if (families.has("summary"))
        for (let c = 0; c < nChannels; c++) {
          const sorted = Float64Array.from(planes[c]!).sort();
          for (const q of quantiles) cols[col++]![i] = quantileSorted(sorted, q);
        }
      if (families.has("histogram")) {
        let lo = Number.POSITIVE_INFINITY;
        let hi = Number.NEGATIVE_INFINITY;
        for (const p of planes)
          for (const v of p) {
            if (v < lo) lo = v;
            if (v > hi) hi = v;
          }
        for (let c = 0; c < nChannels; c++) {
          const hist = histogramCounts(planes[c]!, bins, lo, hi);
          for (let k = 0; k < bins; k++) cols[col++]![i] = hist[k]!;
        }
      }
      if (families.has("texture"))
        for (let c = 0; c < nChannels; c++) {
          const grey = toGrey(planes[c]!, img.dtype);
          const byPair = distances.map((d) => angles.map((a) => glcmProps(grey, h, w, d, a, props, counts)));
          for (let p = 0; p < props.length; p++)
            for (let d = 0; d < distances.length; d++)
              for (let a = 0; a < angles.length; a++) cols[col++]![i] = byPair[d]![a]![p]!;
        }
    }
    done += members.length;
  }
  const frame = dataFrame(
    obsNames(t),
    Object.fromEntries(names.map((nm, j) => [nm, float64Column(cols[j]!)])),
    "_index",
    names,
  );
  ctx.progress(1);
  ctx.log(
    `${op}: ${names.length} features of ${side} × ${side}-pixel crops of "${img.name}"; added obsm["${key}"]`,
  );
  return { tables: { [ctx.table]: { obsm: { [key]: frame } } } };
}

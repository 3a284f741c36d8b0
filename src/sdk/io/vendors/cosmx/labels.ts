/**
 * CosMx per-FOV cell label masks (`CellLabels/CellLabels_F001.tif` …) as labels elements, one per FOV
 * (`<fov>_labels`, as spatialdata-io names them), in the FOV's own pixels (system `<fov>`) and placed
 * in the stitched global pixels by the affine fitted, per FOV, from the cells' local and global
 * centres in the metadata (as spatialdata-io does). Masks re-written by GDAL (Giotto) are float32:
 * they are read as int32 ids. Pixels are read by window, never held whole.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fromFile, type GeoTIFFImage } from "geotiff";
import type { DenseArray } from "../../../data/arrays.js";
import type { AxisSelection, LabelsElement, RasterSource } from "../../../data/elements.js";
import type { Transformation } from "../../../data/transforms.js";
import { DataError } from "../../data-error.js";
import { affineOn, identityOn } from "../placement.js";

/** The label mask files of an export (`CellLabels/` or the folder itself), by FOV number. */
export function labelFiles(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const where of [join(dir, "CellLabels"), dir]) {
    let names: string[];
    try {
      names = readdirSync(where);
    } catch {
      continue;
    }
    for (const n of names) {
      const m = /^CellLabels_F0*(\d+)\.tiff?$/i.exec(n);
      if (m && !out.has(m[1]!)) out.set(m[1]!, join(where, n));
    }
  }
  return out;
}

/**
 * The least-squares affine `[[a, b, tx], [c, d, ty]]` taking `local` points onto `global` ones (a
 * translation when fewer than three points or they are collinear).
 */
export function fitAffine(
  local: readonly (readonly [number, number])[],
  global: readonly (readonly [number, number])[],
): number[][] {
  const n = local.length;
  if (n === 0) throw new Error("fitAffine: no points");
  let mlx = 0;
  let mly = 0;
  let mgx = 0;
  let mgy = 0;
  for (let i = 0; i < n; i++) {
    mlx += local[i]![0] / n;
    mly += local[i]![1] / n;
    mgx += global[i]![0] / n;
    mgy += global[i]![1] / n;
  }
  // Centred normal equations: [sxx sxy; sxy syy] · [a b]ᵀ = [sxX syX]ᵀ (and likewise for Y).
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  let sxX = 0;
  let syX = 0;
  let sxY = 0;
  let syY = 0;
  for (let i = 0; i < n; i++) {
    const x = local[i]![0] - mlx;
    const y = local[i]![1] - mly;
    const X = global[i]![0] - mgx;
    const Y = global[i]![1] - mgy;
    sxx += x * x;
    sxy += x * y;
    syy += y * y;
    sxX += x * X;
    syX += y * X;
    sxY += x * Y;
    syY += y * Y;
  }
  const det = sxx * syy - sxy * sxy;
  if (n < 3 || Math.abs(det) <= 1e-9 * Math.max(1, sxx * syy))
    return [
      [1, 0, mgx - mlx],
      [0, 1, mgy - mly],
    ];
  const a = (sxX * syy - syX * sxy) / det;
  const b = (syX * sxx - sxX * sxy) / det;
  const c = (sxY * syy - syY * sxy) / det;
  const d = (syY * sxx - sxY * sxy) / det;
  return [
    [a, b, mgx - a * mlx - b * mly],
    [c, d, mgy - c * mlx - d * mly],
  ];
}

function range(sel: AxisSelection | undefined, size: number): [number, number] {
  if (sel === null || sel === undefined) return [0, size];
  if (typeof sel === "number") return [sel, sel + 1];
  return [sel[0], sel[1]];
}

/** A single-plane label TIFF (any numeric sample type) read by window as int32 ids. */
class LabelTiffSource implements RasterSource {
  readonly dtype = "int32" as const;
  readonly chunks: readonly number[];
  constructor(
    readonly file: string,
    private readonly image: GeoTIFFImage,
    readonly shape: readonly number[],
  ) {
    this.chunks = [Math.min(512, shape[0]!), Math.min(512, shape[1]!)];
  }

  async read(selection?: readonly AxisSelection[], signal?: AbortSignal): Promise<DenseArray> {
    const [h, w] = this.shape as [number, number];
    const [y0, y1] = range(selection?.[0], h);
    const [x0, x1] = range(selection?.[1], w);
    let r: ArrayLike<number>;
    try {
      r = (await this.image.readRasters({
        window: [x0, y0, x1, y1],
        samples: [0],
        interleave: true,
        signal,
      } as never)) as unknown as ArrayLike<number>;
    } catch (err) {
      throw new DataError(
        `${this.file}: cannot decode pixels (${(err as Error).message}); truncated or corrupt`,
        {
          cause: err,
        },
      );
    }
    const out = new Int32Array(r.length);
    for (let i = 0; i < r.length; i++) out[i] = Math.round(r[i]!);
    const shape: number[] = [];
    if (typeof selection?.[0] !== "number") shape.push(y1 - y0);
    if (typeof selection?.[1] !== "number") shape.push(x1 - x0);
    return { kind: "dense", dtype: "int32", shape, data: out };
  }
}

/** Open a label mask file as labels element `name` (`y,x`, int32), placed by `transformations`. */
export async function openLabelMask(
  file: string,
  name: string,
  transformations: (axes: readonly string[]) => Record<string, Transformation>,
): Promise<LabelsElement> {
  let image: GeoTIFFImage;
  try {
    image = await (await fromFile(file)).getImage(0);
  } catch (err) {
    throw new DataError(`${file}: not a readable TIFF (${(err as Error).message})`, { cause: err });
  }
  if (image.getSamplesPerPixel() !== 1)
    throw new DataError(`${file}: ${image.getSamplesPerPixel()} samples per pixel, a label mask has 1`);
  const source = new LabelTiffSource(file, image, [image.getHeight(), image.getWidth()]);
  const axes = ["y", "x"];
  return {
    kind: "labels",
    name,
    axes,
    dtype: "int32",
    levels: [
      { path: "0", shape: source.shape, chunks: source.chunks, dtype: "int32", levelTransform: [], source },
    ],
    transformations: transformations(axes),
  };
}

/** Transformations of FOV `fov`'s mask: identity into `<fov>`, the fitted affine into `global`. */
export function fovPlacement(
  name: string,
  fov: string,
  global: string,
  affine: number[][],
): (axes: readonly string[]) => Record<string, Transformation> {
  return (axes) => ({
    [fov]: identityOn(axes, name, fov),
    [global]: affineOn(axes, name, global, affine),
  });
}

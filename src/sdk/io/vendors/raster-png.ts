/**
 * PNG and JPEG images (Visium's tissue images) as lazily read rasters: the header gives shape and
 * channels; each read decodes only the requested window (sharp `extract`) into `c,y,x` order, so the
 * image is never held whole and the served raster store rebuilds it into tiles once.
 */
import { resolve } from "node:path";
import sharp from "sharp";
import type { DenseArray } from "../../data/arrays.js";
import type { AxisSelection, ImageElement, RasterSource } from "../../data/elements.js";
import type { Transformation } from "../../data/transforms.js";
import { confineRootFor } from "../confine.js";
import { DataError } from "../data-error.js";
import { recordReopen } from "../reopen-record.js";

/** Largest side accepted (pixels): a tissue image larger than this is not a Space Ranger image. */
const MAX_SIDE = 65_535;

function range(sel: AxisSelection | undefined, size: number): [number, number] {
  if (sel === null || sel === undefined) return [0, size];
  if (typeof sel === "number") return [sel, sel + 1];
  return [sel[0], sel[1]];
}

class SharpRasterSource implements RasterSource {
  readonly dtype = "uint8" as const;
  readonly chunks: readonly number[];
  constructor(
    readonly path: string,
    readonly shape: readonly number[],
  ) {
    this.chunks = [1, Math.min(512, shape[1]!), Math.min(512, shape[2]!)];
  }

  async read(selection?: readonly AxisSelection[], signal?: AbortSignal): Promise<DenseArray> {
    signal?.throwIfAborted();
    const [nc, h, w] = this.shape as [number, number, number];
    const [c0, c1] = range(selection?.[0], nc);
    const [y0, y1] = range(selection?.[1], h);
    const [x0, x1] = range(selection?.[2], w);
    const width = x1 - x0;
    const height = y1 - y0;
    let raw: Buffer;
    let channels: number;
    try {
      const r = await sharp(this.path, { limitInputPixels: false })
        .extract({ left: x0, top: y0, width, height })
        .raw()
        .toBuffer({ resolveWithObject: true });
      raw = r.data;
      channels = r.info.channels;
    } catch (err) {
      throw new DataError(`${this.path}: cannot decode the image (${(err as Error).message})`, {
        cause: err,
      });
    }
    const outC = c1 - c0;
    const out = new Uint8Array(outC * width * height);
    const plane = width * height;
    for (let c = 0; c < outC; c++) {
      const src = c0 + c;
      for (let p = 0; p < plane; p++) out[c * plane + p] = raw[p * channels + src]!;
    }
    const shape: number[] = [];
    if (typeof selection?.[0] !== "number") shape.push(outC);
    if (typeof selection?.[1] !== "number") shape.push(height);
    if (typeof selection?.[2] !== "number") shape.push(width);
    return { kind: "dense", dtype: "uint8", shape, data: out };
  }
}

/**
 * The raster source of a PNG/JPEG already checked by {@link readPictureImage} (`shape` as it exposed
 * it), recorded as reopenable so that a worker thread can open the file again.
 */
export function pictureSource(path: string, shape: readonly number[], confine: string): RasterSource {
  const source = new SharpRasterSource(path, shape);
  recordReopen(source, { kind: "picture", path, confine, shape: [...shape] });
  return source;
}

/** Open a PNG/JPEG as an RGB image element (an alpha channel is dropped; grey stays one channel). */
export async function readPictureImage(
  path: string,
  name: string,
  transformations: (axes: readonly string[]) => Record<string, Transformation>,
): Promise<ImageElement> {
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>["metadata"]>>;
  try {
    meta = await sharp(path).metadata();
  } catch (err) {
    throw new DataError(`${path}: not a readable image (${(err as Error).message})`, { cause: err });
  }
  const w = meta.width ?? 0;
  const h = meta.height ?? 0;
  if (!(w > 0 && h > 0 && w <= MAX_SIDE && h <= MAX_SIDE))
    throw new DataError(`${path}: image size ${w} × ${h} is not between 1 and ${MAX_SIDE} pixels a side`);
  if (meta.depth && meta.depth !== "uchar")
    throw new DataError(`${path}: ${meta.depth} pixels are not supported (8-bit images only)`);
  const nc = (meta.channels ?? 3) >= 3 ? 3 : 1;
  const axes = ["c", "y", "x"];
  const abs = resolve(path);
  const source = pictureSource(abs, [nc, h, w], confineRootFor(abs));
  return {
    kind: "image",
    name,
    axes,
    channels: nc === 3 ? ["r", "g", "b"] : ["0"],
    dtype: "uint8",
    levels: [
      { path: "0", shape: source.shape, chunks: source.chunks, dtype: "uint8", levelTransform: [], source },
    ],
    transformations: transformations(axes),
  };
}

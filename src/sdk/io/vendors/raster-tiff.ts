/**
 * Plain (non-OME) TIFF planes as one lazily read image: each channel is its own single-plane file (as
 * MERSCOPE writes a mosaic per stain and z), read by window through geotiff (LZW, deflate, tiled or
 * striped), never held whole.
 */
import { resolve } from "node:path";
import { fromFile, type GeoTIFFImage } from "geotiff";
import type { DenseArray, DType } from "../../data/arrays.js";
import { allocArray } from "../../data/arrays.js";
import type { AxisSelection, ImageElement, RasterSource } from "../../data/elements.js";
import type { Transformation } from "../../data/transforms.js";
import { confineRootFor } from "../confine.js";
import { DataError } from "../data-error.js";
import { recordReopen } from "../reopen-record.js";

function dtypeOf(img: GeoTIFFImage, file: string): DType {
  const bits = img.getBitsPerSample();
  const fmt = (img.fileDirectory as { SampleFormat?: number[] }).SampleFormat?.[0] ?? 1;
  const key = `${fmt}:${bits}`;
  const map: Record<string, DType> = {
    "1:8": "uint8",
    "1:16": "uint16",
    "1:32": "uint32",
    "2:8": "int8",
    "2:16": "int16",
    "2:32": "int32",
    "3:32": "float32",
    "3:64": "float64",
  };
  const d = map[key];
  if (!d) throw new DataError(`${file}: TIFF sample format ${fmt} with ${bits} bits is not supported`);
  return d;
}

function range(sel: AxisSelection | undefined, size: number): [number, number] {
  if (sel === null || sel === undefined) return [0, size];
  if (typeof sel === "number") return [sel, sel + 1];
  return [sel[0], sel[1]];
}

/** An opened plane file. */
interface Plane {
  readonly file: string;
  readonly image: GeoTIFFImage;
}

async function openPlane(file: string): Promise<Plane> {
  try {
    const tiff = await fromFile(file);
    const image = await tiff.getImage(0);
    return { file, image };
  } catch (err) {
    throw new DataError(`${file}: not a readable TIFF (${(err as Error).message})`, { cause: err });
  }
}

/** Channels of one image, one single-plane TIFF file each, read by window. */
export class TiffPlanesSource implements RasterSource {
  readonly chunks: readonly number[];
  constructor(
    readonly planes: readonly Plane[],
    readonly shape: readonly number[],
    readonly dtype: DType,
  ) {
    this.chunks = [1, Math.min(512, shape[1]!), Math.min(512, shape[2]!)];
  }

  async read(selection?: readonly AxisSelection[], signal?: AbortSignal): Promise<DenseArray> {
    const [nc, h, w] = this.shape as [number, number, number];
    const [c0, c1] = range(selection?.[0], nc);
    const [y0, y1] = range(selection?.[1], h);
    const [x0, x1] = range(selection?.[2], w);
    const plane = (y1 - y0) * (x1 - x0);
    const out = allocArray(this.dtype, (c1 - c0) * plane);
    for (let c = c0; c < c1; c++) {
      signal?.throwIfAborted();
      const p = this.planes[c]!;
      let r: unknown;
      try {
        r = await p.image.readRasters({
          window: [x0, y0, x1, y1],
          samples: [0],
          interleave: true,
          signal,
        } as never);
      } catch (err) {
        throw new DataError(
          `${p.file}: cannot decode pixels (${(err as Error).message}); truncated or corrupt`,
          { cause: err },
        );
      }
      (out as unknown as { set(a: ArrayLike<number>, o: number): void }).set(
        r as ArrayLike<number>,
        (c - c0) * plane,
      );
    }
    const shape: number[] = [];
    if (typeof selection?.[0] !== "number") shape.push(c1 - c0);
    if (typeof selection?.[1] !== "number") shape.push(y1 - y0);
    if (typeof selection?.[2] !== "number") shape.push(x1 - x0);
    return { kind: "dense", dtype: this.dtype, shape, data: out };
  }
}

/**
 * The raster source (`c,y,x`) over single-plane TIFF files of one size and type, recorded as
 * reopenable (a worker thread opens the same files again); `confine` is the folder they lie in.
 */
export async function openTiffPlanesSource(
  files: readonly string[],
  confine: string,
): Promise<TiffPlanesSource> {
  const abs = files.map((f) => resolve(f));
  const planes = await Promise.all(abs.map(openPlane));
  const first = planes[0]!;
  const w = first.image.getWidth();
  const h = first.image.getHeight();
  const dtype = dtypeOf(first.image, first.file);
  for (const p of planes) {
    if (p.image.getWidth() !== w || p.image.getHeight() !== h || dtypeOf(p.image, p.file) !== dtype)
      throw new DataError(
        `${p.file}: ${p.image.getWidth()} × ${p.image.getHeight()} ${dtypeOf(p.image, p.file)}, unlike ${first.file} (${w} × ${h} ${dtype})`,
      );
    if (p.image.getSamplesPerPixel() !== 1)
      throw new DataError(
        `${p.file}: ${p.image.getSamplesPerPixel()} samples per pixel, a mosaic plane has 1`,
      );
  }
  const source = new TiffPlanesSource(planes, [planes.length, h, w], dtype);
  recordReopen(source, { kind: "tiff-planes", files: abs, confine });
  return source;
}

/** Open single-plane TIFF files of one size and type as the channels of one `c,y,x` image. */
export async function readTiffPlanes(
  files: readonly string[],
  channels: readonly string[],
  name: string,
  transformations: (axes: readonly string[]) => Record<string, Transformation>,
): Promise<ImageElement> {
  if (files.length === 0) throw new DataError(`${name}: no TIFF plane files`);
  const source = await openTiffPlanesSource(files, confineRootFor(resolve(files[0]!)));
  const { dtype } = source;
  const axes = ["c", "y", "x"];
  return {
    kind: "image",
    name,
    axes,
    channels: [...channels],
    dtype,
    levels: [{ path: "0", shape: source.shape, chunks: source.chunks, dtype, levelTransform: [], source }],
    transformations: transformations(axes),
  };
}

/**
 * Read OME-TIFF lazily with geotiff: a single file, a multi-file set through its companion `.ome`
 * metadata (or a member whose `BinaryOnly` points at it), and pyramids stored as SubIFDs. Opening
 * parses the OME-XML and the IFDs of the first plane; pixels are read per request through
 * `image.readRasters({window, samples})`, one plane at a time, straight into a shared buffer.
 *
 * Planes become axes `c,y,x` (`c,z,y,x` when SizeZ > 1, with a leading `t` when SizeT > 1).
 */
import { open, readFile, stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { GeoTIFF, GeoTIFFImage } from "geotiff";
import { allocArray, type DenseArray, type DType, sizeOfShape } from "../../data/arrays.js";
import type { AxisSelection, ImageElement, RasterLevel, RasterSource } from "../../data/elements.js";
import { defaultAxes, type Transformation } from "../../data/transforms.js";
import { checkInside, confineRootFor } from "../confine.js";
import { recordReopen } from "../reopen-record.js";
import { NodeFileSource } from "./file-source.js";
import {
  type OmeImage,
  type OmeXml,
  type PlaneLocation,
  parseOmeXml,
  planeIndex,
  planeLocations,
} from "./omexml.js";

/** Options of {@link readOmeTiff}. */
export interface ReadOmeTiffOptions {
  /** Element name (default: the file name without `.ome.tif(f)` / `.companion.ome`). */
  readonly name?: string;
  /** Which OME Image (series) to read (default 0). */
  readonly series?: number;
  /** Map pixels to `global` with the OME PhysicalSizeX/Y scale instead of the identity. */
  readonly physicalScale?: boolean;
  /**
   * Where the companion metadata file and the plane files an OME-XML names may lie (default: the data
   * dir holding the file, else its folder; see `io/confine.ts`).
   */
  readonly confine?: string;
}

/** TIFF compression codes of JPEG-2000 (Aperio 33003/33005, 33004, OpenJPEG 34712). */
const JPEG2000 = new Set([33003, 33004, 33005, 34712]);
/** Compression codes geotiff 2.1 decodes. */
const DECODABLE = new Set([1, 5, 6, 7, 8, 32773, 32946, 34887, 50001]);

const OME_TYPES: Record<string, DType> = {
  int8: "int8",
  uint8: "uint8",
  int16: "int16",
  uint16: "uint16",
  int32: "int32",
  uint32: "uint32",
  float: "float32",
  double: "float64",
};

/** Geotiff's parsed IFD tags (only what this reader touches). */
interface FileDirectory {
  ImageWidth?: number;
  ImageLength?: number;
  Compression?: number;
  BitsPerSample?: number[];
  SampleFormat?: number[];
  SamplesPerPixel?: number;
  TileWidth?: number;
  TileLength?: number;
  RowsPerStrip?: number;
  StripOffsets?: number[];
  StripByteCounts?: number[];
  TileOffsets?: number[];
  TileByteCounts?: number[];
  SubIFDs?: ArrayLike<number | bigint> | number | bigint;
  ImageDescription?: string;
}

/** One opened TIFF file of a (possibly multi-file) OME-TIFF. */
interface TiffFile {
  readonly path: string;
  readonly size: number;
  readonly tiff: GeoTIFF;
}

async function openTiffFile(path: string): Promise<TiffFile> {
  let size: number;
  try {
    const st = await stat(path);
    if (!st.isFile()) throw new Error("not a regular file (a FIFO, socket or device is not read)");
    size = st.size;
  } catch (err) {
    throw new Error(`${path}: cannot open (${(err as Error).message})`, { cause: err });
  }
  try {
    const tiff = await GeoTIFF.fromSource(new NodeFileSource(path, size));
    return { path, size, tiff };
  } catch (err) {
    throw new Error(`${path}: not a readable TIFF (${(err as Error).message})`, { cause: err });
  }
}

/** The dtype an IFD's BitsPerSample / SampleFormat describe. */
function ifdDtype(fd: FileDirectory, where: string): DType {
  const bits = fd.BitsPerSample?.[0] ?? 1;
  const fmt = fd.SampleFormat?.[0] ?? 1;
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
  if (!d) throw new Error(`${where}: unsupported sample format ${fmt} with ${bits} bits per sample`);
  return d;
}

/** Reject IFDs we cannot decode, and IFDs whose pixel data lies past the end of the file. */
function checkIfd(fd: FileDirectory, file: TiffFile, where: string): void {
  const comp = fd.Compression ?? 1;
  if (JPEG2000.has(comp))
    throw new Error(`${where}: JPEG-2000 compressed OME-TIFF is not supported (TIFF compression ${comp})`);
  if (!DECODABLE.has(comp)) throw new Error(`${where}: TIFF compression ${comp} is not supported`);
  const offsets = fd.TileOffsets ?? fd.StripOffsets;
  const counts = fd.TileByteCounts ?? fd.StripByteCounts;
  if (!offsets || !counts) throw new Error(`${where}: IFD has no strip or tile offsets`);
  for (let i = 0; i < offsets.length; i++) {
    const end = Number(offsets[i]) + Number(counts[i] ?? 0);
    if (end > file.size) {
      throw new Error(
        `${where}: ${fd.TileOffsets ? "tile" : "strip"} ${i} ends at byte ${end}, past the end of the file (${file.size} bytes); the file is truncated`,
      );
    }
  }
}

function subIfdOffsets(fd: FileDirectory): number[] {
  const s = fd.SubIFDs;
  if (s === undefined) return [];
  return typeof s === "object" ? Array.from(s, Number) : [Number(s)];
}

/**
 * Open an OME-TIFF (`.ome.tif`/`.ome.tiff`, or a multi-file companion `.ome` / `.companion.ome`) as a
 * lazily read {@link ImageElement}. JPEG-2000 compressed files are rejected at open with a clear error.
 */
export async function readOmeTiff(path: string, opts: ReadOmeTiffOptions = {}): Promise<ImageElement> {
  const absPath = resolve(path);
  const root = opts.confine ?? confineRootFor(absPath);
  // Files the OME-XML names (companion metadata, planes of a multi-file set) are read only inside.
  const inside = (p: string, what: string) => checkInside(p, root, `${absPath}: ${what} ${p}`);
  const files = new Map<string, Promise<TiffFile>>();
  const fileAt = (p: string): Promise<TiffFile> => {
    let f = files.get(p);
    if (!f) {
      f = (p === absPath ? Promise.resolve(p) : inside(p, "the plane file")).then(openTiffFile);
      files.set(p, f);
    }
    return f;
  };

  // Find the OME-XML: in the first IFD's ImageDescription, or in a companion file.
  let ome: OmeXml;
  let metaPath = absPath;
  let ownFile: string | undefined = absPath;
  const head = await readHead(absPath);
  if (head.startsWith("<")) {
    ome = parseOmeXml(await readFile(absPath, "utf8"), absPath);
    ownFile = undefined;
  } else {
    const first = await fileAt(absPath);
    let desc: string | undefined;
    try {
      const img0 = await first.tiff.getImage(0);
      desc = (img0.fileDirectory as FileDirectory).ImageDescription;
    } catch (err) {
      throw new Error(
        `${absPath}: cannot read the first IFD (${(err as Error).message}); the file is truncated or corrupt`,
        { cause: err },
      );
    }
    if (!desc || !desc.includes("<OME"))
      throw new Error(`${absPath}: no OME-XML in the first IFD's ImageDescription (not an OME-TIFF)`);
    ome = parseOmeXml(desc.trim(), absPath);
    if (ome.metadataFile && ome.images.length === 0) {
      metaPath = resolve(dirname(absPath), ome.metadataFile);
      let text: string;
      await inside(metaPath, "the companion metadata file");
      try {
        if (!(await stat(metaPath)).isFile()) throw new Error("not a regular file");
        text = await readFile(metaPath, "utf8");
      } catch (err) {
        throw new Error(
          `${absPath}: its companion metadata file ${metaPath} cannot be read (${(err as Error).message})`,
          { cause: err },
        );
      }
      ome = parseOmeXml(text, metaPath);
      ownFile = undefined;
    }
  }
  const series = opts.series ?? 0;
  const image = ome.images[series];
  if (!image)
    throw new Error(
      `${metaPath}: OME-XML has ${ome.images.length} image(s); series ${series} does not exist`,
    );
  const px = image.pixels;
  const planes = planeLocations(px, metaPath);
  const baseDir = dirname(metaPath);
  const planeFile = (loc: PlaneLocation): string => {
    if (loc.fileName) {
      // A TiffData naming the file itself (common in single-file OME-TIFFs) stays on that file.
      if (ownFile && basename(ownFile) === loc.fileName) return ownFile;
      return resolve(baseDir, loc.fileName);
    }
    if (!ownFile) throw new Error(`${metaPath}: TiffData without a UUID FileName in a companion file`);
    return ownFile;
  };

  // Per plane, the GeoTIFFImage of every pyramid level, resolved on first use.
  const levelImages = new Map<number, Promise<GeoTIFFImage[]>>();
  const imagesOfPlane = (p: number): Promise<GeoTIFFImage[]> => {
    let r = levelImages.get(p);
    if (!r) {
      r = resolvePlane(planes[p]!, p);
      levelImages.set(p, r);
      r.catch(() => levelImages.delete(p));
    }
    return r;
  };
  const resolvePlane = async (loc: PlaneLocation, p: number): Promise<GeoTIFFImage[]> => {
    const file = await fileAt(planeFile(loc));
    const where = `${file.path} (IFD ${loc.ifd}, plane ${p})`;
    let base: GeoTIFFImage;
    try {
      base = await file.tiff.getImage(loc.ifd);
    } catch (err) {
      throw new Error(`${where}: cannot read the IFD (${(err as Error).message})`, { cause: err });
    }
    const fd0 = base.fileDirectory as FileDirectory;
    checkIfd(fd0, file, where);
    const out = [base];
    for (const [k, off] of subIfdOffsets(fd0).entries()) {
      const at = `${file.path} (SubIFD ${k} of IFD ${loc.ifd})`;
      if (off >= file.size)
        throw new Error(`${at}: offset ${off} is past the end of the file (${file.size} bytes)`);
      let ifd: Awaited<ReturnType<GeoTIFF["parseFileDirectoryAt"]>>;
      try {
        ifd = await file.tiff.parseFileDirectoryAt(off);
      } catch (err) {
        throw new Error(`${at}: cannot read the IFD (${(err as Error).message})`, { cause: err });
      }
      checkIfd(ifd.fileDirectory as FileDirectory, file, at);
      const t = file.tiff as unknown as {
        dataView: DataView;
        littleEndian: boolean;
        cache: boolean;
        source: NodeFileSource;
      };
      out.push(
        new GeoTIFFImage(
          ifd.fileDirectory,
          ifd.geoKeyDirectory,
          t.dataView,
          t.littleEndian,
          t.cache,
          t.source as never,
        ),
      );
    }
    return out;
  };

  const first = await imagesOfPlane(0);
  const firstFd = first[0]!.fileDirectory as FileDirectory;
  const dtype = ifdDtype(firstFd, metaPath);
  const omeDtype = OME_TYPES[px.type];
  if (omeDtype && omeDtype !== dtype)
    throw new Error(`${metaPath}: OME-XML says ${px.type} but the TIFF holds ${dtype} samples`);
  if (first[0]!.getWidth() !== px.sizeX || first[0]!.getHeight() !== px.sizeY) {
    throw new Error(
      `${metaPath}: OME-XML says ${px.sizeX}×${px.sizeY} pixels but IFD ${planes[0]!.ifd} is ${first[0]!.getWidth()}×${first[0]!.getHeight()}`,
    );
  }
  const spp = first[0]!.getSamplesPerPixel();

  const axes = [...(px.sizeT > 1 ? ["t"] : []), "c", ...(px.sizeZ > 1 ? ["z"] : []), "y", "x"];
  const levels = first.map((img, level): RasterLevel => {
    const shape = axes.map((a) =>
      a === "t"
        ? px.sizeT
        : a === "c"
          ? px.sizeC
          : a === "z"
            ? px.sizeZ
            : a === "y"
              ? img.getHeight()
              : img.getWidth(),
    );
    const fd = img.fileDirectory as FileDirectory;
    const tileH = Math.min(img.getHeight(), fd.TileLength ?? fd.RowsPerStrip ?? img.getHeight());
    const tileW = Math.min(img.getWidth(), fd.TileWidth ?? img.getWidth());
    const chunks = axes.map((a) => (a === "y" ? tileH : a === "x" ? tileW : 1));
    const source = tiffLevelSource({
      axes,
      shape,
      chunks,
      dtype,
      level,
      spp,
      px,
      image,
      imagesOfPlane,
      where: metaPath,
    });
    // A worker thread opens the same file again and takes this level (see io/reopen.ts).
    recordReopen(source, { kind: "ome-tiff", path: absPath, confine: root, series, level });
    const levelTransform: Transformation[] = [
      {
        type: "scale",
        scale: axes.map((a) =>
          a === "y"
            ? px.sizeY / shape[axes.indexOf("y")]!
            : a === "x"
              ? px.sizeX / shape[axes.indexOf("x")]!
              : 1,
        ),
      },
    ];
    return { path: String(level), shape, chunks, dtype, levelTransform, source };
  });

  const names = channelNames(image, px.sizeC);
  const cs = defaultAxes(axes);
  const io = { input: { name: axes.join(""), axes: cs }, output: { name: "global", axes: cs } };
  const global: Transformation =
    opts.physicalScale && px.physicalSizeX && px.physicalSizeY
      ? {
          type: "scale",
          scale: axes.map((a) =>
            a === "x"
              ? px.physicalSizeX!
              : a === "y"
                ? px.physicalSizeY!
                : a === "z"
                  ? (px.physicalSizeZ ?? 1)
                  : 1,
          ),
          ...io,
        }
      : { type: "identity", ...io };
  return {
    kind: "image",
    name: opts.name ?? elementName(absPath),
    axes,
    channels: names,
    dtype,
    levels,
    transformations: { global },
  };
}

async function readHead(path: string): Promise<string> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, "r");
  } catch (err) {
    throw new Error(`${path}: cannot open (${(err as Error).message})`, { cause: err });
  }
  try {
    const buf = new Uint8Array(64);
    const { bytesRead } = await fh.read(buf, 0, 64, 0);
    return new TextDecoder()
      .decode(buf.subarray(0, bytesRead))
      .replace(/^\uFEFF/, "")
      .trimStart();
  } finally {
    await fh.close();
  }
}

function channelNames(image: OmeImage, sizeC: number): string[] {
  const ch = image.pixels.channels;
  const spp = ch[0]?.samplesPerPixel ?? 1;
  return Array.from({ length: sizeC }, (_, i) => {
    const c = spp > 1 ? ch[Math.floor(i / spp)] : ch[i];
    const n = c?.name;
    return n ? (spp > 1 ? `${n}_${i % spp}` : n) : String(i);
  });
}

function elementName(path: string): string {
  return basename(path)
    .replace(/(\.companion)?\.ome(\.tiff?|\.xml)?$/i, "")
    .replace(/\.tiff?$/i, "");
}

interface TiffSourceInit {
  readonly axes: readonly string[];
  readonly shape: readonly number[];
  readonly chunks: readonly number[];
  readonly dtype: DType;
  readonly level: number;
  readonly spp: number;
  readonly px: OmeImage["pixels"];
  readonly image: OmeImage;
  readonly imagesOfPlane: (p: number) => Promise<GeoTIFFImage[]>;
  readonly where: string;
}

/** A raster source over one pyramid level of the planes of an OME-TIFF image. */
function tiffLevelSource(init: TiffSourceInit): RasterSource {
  const { axes, shape, dtype, level, spp, px, imagesOfPlane, where } = init;
  const at = `${where} (level ${level})`;
  return {
    shape,
    dtype,
    chunks: init.chunks,
    async read(selection?: readonly AxisSelection[], signal?: AbortSignal): Promise<DenseArray> {
      const sel = selection ?? [];
      if (sel.length > axes.length)
        throw new RangeError(`${at}: ${sel.length} selections for ${axes.length} axes (${axes.join(",")})`);
      const ranges = axes.map((a, i): [number, number] => {
        const s = sel[i] ?? null;
        const n = shape[i]!;
        if (s === null) return [0, n];
        if (typeof s === "number") {
          if (!Number.isInteger(s) || s < 0 || s >= n)
            throw new RangeError(`${at}: index ${s} out of range for axis "${a}" of length ${n}`);
          return [s, s + 1];
        }
        if (!Number.isInteger(s[0]) || !Number.isInteger(s[1]) || s[0] < 0 || s[1] > n || s[0] > s[1]) {
          throw new RangeError(
            `${at}: range [${s[0]}, ${s[1]}) out of bounds for axis "${a}" of length ${n}`,
          );
        }
        return [s[0], s[1]];
      });
      const outShape = axes.flatMap((_, i) =>
        typeof sel[i] === "number" ? [] : [ranges[i]![1] - ranges[i]![0]],
      );
      const out = allocArray(dtype, sizeOfShape(outShape));
      const yi = axes.indexOf("y");
      const xi = axes.indexOf("x");
      const [y0, y1] = ranges[yi]!;
      const [x0, x1] = ranges[xi]!;
      const planeSize = (y1 - y0) * (x1 - x0);
      if (planeSize === 0 || out.length === 0) return { kind: "dense", dtype, shape: outShape, data: out };
      const idx = (a: string): [number, number] => (axes.includes(a) ? ranges[axes.indexOf(a)]! : [0, 1]);
      const [t0, t1] = idx("t");
      const [c0, c1] = idx("c");
      const [z0, z1] = idx("z");
      let offset = 0;
      // Output order is t, c, z, y, x (the axes order), so planes are visited in that order.
      for (let t = t0; t < t1; t++) {
        for (let c = c0; c < c1; c++) {
          for (let z = z0; z < z1; z++) {
            signal?.throwIfAborted();
            const cp = spp > 1 ? Math.floor(c / spp) : c;
            const sample = spp > 1 ? c % spp : 0;
            const p = planeIndex(px, cp, z, t);
            const imgs = await imagesOfPlane(p);
            const img = imgs[level];
            if (!img) throw new Error(`${at}: plane ${p} has only ${imgs.length} pyramid level(s)`);
            let raster: ArrayLike<number>;
            try {
              const r = await img.readRasters({
                window: [x0, y0, x1, y1],
                samples: [sample],
                interleave: false,
                ...(signal ? { signal } : {}),
              });
              raster = (r as unknown as ArrayLike<number>[])[0]!;
            } catch (err) {
              if (signal?.aborted) throw err;
              throw new Error(`${at}: cannot decode plane ${p}: ${(err as Error).message}`, { cause: err });
            }
            if (raster.length !== planeSize)
              throw new Error(`${at}: plane ${p} decoded to ${raster.length} values, expected ${planeSize}`);
            (out as unknown as { set(a: ArrayLike<number>, o: number): void }).set(raster, offset);
            offset += planeSize;
          }
        }
      }
      return { kind: "dense", dtype, shape: outShape, data: out };
    },
  };
}

/**
 * The parts of OME-XML an OME-TIFF reader needs: each Image's Pixels (sizes, type, dimension order,
 * physical pixel size), its Channels, and the TiffData blocks mapping planes to IFDs (and, in a
 * multi-file set, to files); plus `BinaryOnly`, which points a TIFF at its companion metadata file.
 */
import { childNamed, childrenNamed, parseXml, type XmlElement } from "./xml.js";

/** One TiffData block: planes from (FirstC, FirstZ, FirstT) on, stored in IFDs from `ifd` on. */
export interface OmeTiffData {
  readonly ifd?: number;
  readonly firstC: number;
  readonly firstZ: number;
  readonly firstT: number;
  readonly planeCount?: number;
  /** `UUID@FileName`: the file holding these planes (absent = the file the XML came from). */
  readonly fileName?: string;
}

/** One channel. */
export interface OmeChannel {
  readonly name?: string;
  readonly samplesPerPixel: number;
}

/** The Pixels element of an Image. */
export interface OmePixels {
  readonly sizeX: number;
  readonly sizeY: number;
  readonly sizeZ: number;
  readonly sizeC: number;
  readonly sizeT: number;
  /** OME pixel type: `int8`, `uint16`, `float`, `double` … */
  readonly type: string;
  /** `XYZCT`, `XYCZT` … */
  readonly dimensionOrder: string;
  readonly physicalSizeX?: number;
  readonly physicalSizeY?: number;
  readonly physicalSizeZ?: number;
  readonly physicalSizeXUnit?: string;
  readonly channels: readonly OmeChannel[];
  readonly tiffData: readonly OmeTiffData[];
}

/** One Image (series). */
export interface OmeImage {
  readonly id: string;
  readonly name?: string;
  readonly pixels: OmePixels;
}

/** A parsed OME-XML document. */
export interface OmeXml {
  readonly images: readonly OmeImage[];
  /** `BinaryOnly@MetadataFile`: the companion file holding the real metadata. */
  readonly metadataFile?: string;
}

function int(el: XmlElement, attr: string, where: string, fallback?: number): number {
  const v = el.attrs[attr];
  if (v === undefined || v === "") {
    if (fallback !== undefined) return fallback;
    throw new Error(`${where}: <${el.name}> lacks ${attr}`);
  }
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${where}: <${el.name} ${attr}="${v}"> is not a non-negative integer`);
  return n;
}

function optNumber(el: XmlElement, attr: string): number | undefined {
  const v = el.attrs[attr];
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Parse OME-XML text; `where` names the file in errors. */
export function parseOmeXml(xml: string, where: string): OmeXml {
  const root = parseXml(xml, where);
  if (root.name !== "OME") throw new Error(`${where}: not OME-XML (root element <${root.name}>)`);
  const binaryOnly = childNamed(root, "BinaryOnly");
  const images = childrenNamed(root, "Image").map((img, i): OmeImage => {
    const px = childNamed(img, "Pixels");
    if (!px) throw new Error(`${where}: Image ${i} has no <Pixels>`);
    const order = px.attrs.DimensionOrder ?? "XYZCT";
    if (!/^XY[ZCT]{3}$/.test(order) || new Set(order).size !== 5)
      throw new Error(`${where}: unknown DimensionOrder "${order}"`);
    const pixels: OmePixels = {
      sizeX: int(px, "SizeX", where),
      sizeY: int(px, "SizeY", where),
      sizeZ: int(px, "SizeZ", where, 1),
      sizeC: int(px, "SizeC", where, 1),
      sizeT: int(px, "SizeT", where, 1),
      type: px.attrs.Type ?? px.attrs.PixelType ?? "",
      dimensionOrder: order,
      ...opt("physicalSizeX", optNumber(px, "PhysicalSizeX")),
      ...opt("physicalSizeY", optNumber(px, "PhysicalSizeY")),
      ...opt("physicalSizeZ", optNumber(px, "PhysicalSizeZ")),
      ...opt("physicalSizeXUnit", px.attrs.PhysicalSizeXUnit),
      channels: childrenNamed(px, "Channel").map((c) => ({
        ...opt("name", c.attrs.Name),
        samplesPerPixel: int(c, "SamplesPerPixel", where, 1),
      })),
      tiffData: childrenNamed(px, "TiffData").map((td) => {
        const uuid = childNamed(td, "UUID");
        return {
          ...opt("ifd", td.attrs.IFD !== undefined ? int(td, "IFD", where) : undefined),
          firstC: int(td, "FirstC", where, 0),
          firstZ: int(td, "FirstZ", where, 0),
          firstT: int(td, "FirstT", where, 0),
          ...opt("planeCount", td.attrs.PlaneCount !== undefined ? int(td, "PlaneCount", where) : undefined),
          ...opt("fileName", uuid?.attrs.FileName),
        };
      }),
    };
    return { id: img.attrs.ID ?? `Image:${i}`, ...opt("name", img.attrs.Name), pixels };
  });
  return { images, ...opt("metadataFile", binaryOnly?.attrs.MetadataFile) };
}

function opt<K extends string, V>(key: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [key]: v }) as { [P in K]?: V };
}

/** Number of channel planes (a channel with several samples per pixel, such as RGB, is one plane). */
export function channelPlanes(px: OmePixels): number {
  const spp = px.channels[0]?.samplesPerPixel ?? 1;
  return spp > 1 ? Math.max(1, Math.round(px.sizeC / spp)) : px.sizeC;
}

/** Index of plane (c, z, t) in the image's DimensionOrder (c counts channel planes). */
export function planeIndex(px: OmePixels, c: number, z: number, t: number): number {
  const sizes: Record<string, number> = { Z: px.sizeZ, C: channelPlanes(px), T: px.sizeT };
  const at: Record<string, number> = { Z: z, C: c, T: t };
  let idx = 0;
  let stride = 1;
  for (const d of px.dimensionOrder.slice(2)) {
    idx += at[d]! * stride;
    stride *= sizes[d]!;
  }
  return idx;
}

/** Where a plane is stored. */
export interface PlaneLocation {
  /** File name from TiffData (relative to the metadata file), or `undefined` for the file itself. */
  readonly fileName?: string;
  readonly ifd: number;
}

/**
 * Map every plane index to its file and IFD. Without TiffData, plane `i` is IFD `i` of the file itself.
 * A TiffData with an IFD but no PlaneCount covers one plane; with neither, all planes from its start.
 */
export function planeLocations(px: OmePixels, where: string): PlaneLocation[] {
  const n = channelPlanes(px) * px.sizeZ * px.sizeT;
  const out: (PlaneLocation | undefined)[] = new Array(n).fill(undefined);
  if (px.tiffData.length === 0) return Array.from({ length: n }, (_, i) => ({ ifd: i }));
  for (const td of px.tiffData) {
    const start = planeIndex(px, td.firstC, td.firstZ, td.firstT);
    const count = td.planeCount ?? (td.ifd !== undefined ? 1 : n - start);
    for (let k = 0; k < count && start + k < n; k++) {
      out[start + k] = { ...(td.fileName ? { fileName: td.fileName } : {}), ifd: (td.ifd ?? 0) + k };
    }
  }
  const missing = out.indexOf(undefined);
  if (missing >= 0)
    throw new Error(`${where}: OME-XML TiffData does not say where plane ${missing} of ${n} is stored`);
  return out as PlaneLocation[];
}

/**
 * SVG → PNG and SVG → vector PDF, the two file formats of figures (snapshots and plots).
 *
 * Exports (stable):
 * - `svgToPng(svg, { dpi })`: sharp (librsvg) at `density = dpi`; an SVG of W × H user units (pt)
 *   becomes `round(W·dpi/72) × round(H·dpi/72)` pixels.
 * - `svgToPdf(svg, { widthPt, heightPt, info? })`: pdfkit + svg-to-pdfkit, vector paths and text
 *   (DejaVu Sans embedded when installed, Helvetica otherwise), rasters embedded as images; `info`
 *   goes in the PDF's document information dictionary (Title, Subject, Keywords, …). One
 *   `<g class="markers">` group of plain `<circle>`/`<rect>` elements (as `markerGroup` in
 *   `pdf-markers.ts` writes them) is drawn by pdfkit directly: svg-to-pdfkit takes ~0.5 ms per element.
 *   From the main thread it runs on the figure thread.
 * - `pngSize(png)`: width and height from the IHDR chunk.
 * - `FIGURE_DPI_RANGE`: the dpi a figure may be rendered at.
 */
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { deflate } from "node:zlib";
import PDFDocument from "pdfkit";
import sharp from "sharp";
import SVGtoPDF from "svg-to-pdfkit";
import { onFigureThread } from "./figure-thread.js";
import { drawMarkers, splitMarkers } from "./pdf-markers.js";

/**
 * Smallest and largest dpi accepted for PNG output (72 is the page's own size, 600 is print and
 * beyond; small values make previews and thumbnails of large pages).
 */
export const FIGURE_DPI_RANGE = { min: 1, max: 1200 } as const;

/** Largest PNG side in pixels, so that a large page at a high dpi cannot ask for gigapixels. */
export const MAX_PNG_SIDE = 20000;

/** Options of `svgToPng`. */
export interface PngOptions {
  /** Pixels per inch; one SVG user unit is 1/72 inch. */
  dpi: number;
}

/**
 * Rasterises an SVG document to PNG at `dpi`. The SVG is this program's own output (figures), so
 * librsvg's size limits for untrusted XML are lifted (`unlimited`): an embedded image makes an
 * attribute longer than libxml2's default 10 MB.
 */
export async function svgToPng(svg: string, opts: PngOptions): Promise<Uint8Array> {
  const { dpi } = opts;
  if (!(dpi >= FIGURE_DPI_RANGE.min && dpi <= FIGURE_DPI_RANGE.max)) {
    throw new RangeError(
      `dpi must be between ${FIGURE_DPI_RANGE.min} and ${FIGURE_DPI_RANGE.max}, got ${dpi}`,
    );
  }
  const size = svgSize(svg);
  if (size) {
    const side = (Math.max(size.width, size.height) * dpi) / 72;
    if (side > MAX_PNG_SIDE) {
      throw new RangeError(
        `a PNG of ${Math.round(side)} px on its longest side is more than ${MAX_PNG_SIDE} px`,
      );
    }
  }
  const out = await sharp(Buffer.from(svg), { density: dpi, unlimited: true, limitInputPixels: false })
    .png({ compressionLevel: 6, adaptiveFiltering: true })
    .toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** Width and height of the root `<svg>` element, when given as plain numbers. */
function svgSize(svg: string): { width: number; height: number } | undefined {
  const head = /<svg\b[^>]*>/.exec(svg.slice(0, 4096))?.[0];
  if (!head) return undefined;
  const w = /\swidth="([\d.]+)(?:pt|px)?"/.exec(head)?.[1];
  const h = /\sheight="([\d.]+)(?:pt|px)?"/.exec(head)?.[1];
  return w && h ? { width: Number(w), height: Number(h) } : undefined;
}

/** Width and height of a PNG from its IHDR chunk. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  if (png.length < 24 || png[12] !== 0x49 || png[13] !== 0x48 || png[14] !== 0x44 || png[15] !== 0x52) {
    throw new Error("not a PNG file (no IHDR)");
  }
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

/** Options of `svgToPdf`. */
export interface PdfOptions {
  /** Page width in points; the SVG's user units are points. */
  widthPt: number;
  /** Page height in points. */
  heightPt: number;
  /** Document information entries (Title, Author, Subject, Keywords, Creator, …). */
  info?: Record<string, string>;
}

const deflateAsync = promisify(deflate);

/** Opaque PNGs larger than this go into the PDF as JPEG (see `pdfRaster`). */
const PDF_JPEG_ABOVE_BYTES = 256 * 1024;

/**
 * The bytes a raster is embedded in the PDF as. pdfkit reads a PNG with png-js, byte by byte in
 * JS (seconds and hundreds of MB of garbage for a 3-megapixel image), but passes a JPEG through
 * untouched: an opaque PNG of more than `PDF_JPEG_ABOVE_BYTES` is embedded as a JPEG at quality 95
 * without chroma subsampling (visually lossless; the PNG output keeps the exact pixels). PNGs with
 * alpha (rasterised cells over an image) stay PNG.
 */
async function pdfRaster(bytes: Buffer): Promise<Buffer> {
  const isPng = bytes.length > 26 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47;
  if (!isPng || bytes.length <= PDF_JPEG_ABOVE_BYTES) return bytes;
  const colorType = bytes[25];
  if (colorType !== 0 && colorType !== 2) return bytes; // alpha or palette
  return sharp(bytes).jpeg({ quality: 95, chromaSubsampling: "4:4:4" }).toBuffer();
}

/** Whether a PNG has an alpha channel (colour type 4 or 6). */
function pngHasAlpha(bytes: Buffer): boolean {
  return bytes.length > 26 && bytes[1] === 0x50 && bytes[2] === 0x4e && (bytes[25] === 4 || bytes[25] === 6);
}

/**
 * A PNG with alpha as a pdfkit image object: RGB and a DeviceGray soft mask, split here and deflated
 * on the thread pool. pdfkit would decode the PNG and split its alpha in JS on the main thread
 * (seconds for the 5-megapixel raster of a million cells, blocking the event loop).
 */
async function alphaImage(
  doc: InstanceType<typeof PDFDocument>,
  png: Buffer,
  label: string,
): Promise<{ width: number; height: number; label: string; obj: unknown; embed(): void }> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const n = info.width * info.height;
  const rgb = Buffer.allocUnsafe(n * 3);
  const alpha = Buffer.allocUnsafe(n);
  for (let i = 0, j = 0, k = 0; i < n; i++, j += 4, k += 3) {
    rgb[k] = data[j]!;
    rgb[k + 1] = data[j + 1]!;
    rgb[k + 2] = data[j + 2]!;
    alpha[i] = data[j + 3]!;
  }
  const [rgbZ, alphaZ] = await Promise.all([deflateAsync(rgb), deflateAsync(alpha)]);
  const d = doc as unknown as { ref(data: Record<string, unknown>): { end(b: Buffer): void } };
  const common = {
    Type: "XObject",
    Subtype: "Image",
    Width: info.width,
    Height: info.height,
    BitsPerComponent: 8,
  };
  const smask = d.ref({ ...common, ColorSpace: "DeviceGray", Filter: "FlateDecode" });
  smask.end(alphaZ);
  const obj = d.ref({ ...common, ColorSpace: "DeviceRGB", Filter: "FlateDecode", SMask: smask });
  obj.end(rgbZ);
  return { width: info.width, height: info.height, label, obj, embed() {} };
}

/** Prefix of the image references `svgToPdf` substitutes for data URIs. */
const IMAGE_REF = "tessera-image:";

/** TrueType files of the figure font on Debian (`fonts-dejavu-core`). */
const DEJAVU = {
  regular: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
  bold: "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
} as const;

/**
 * Draws an SVG document into a one-page vector PDF. Text is set in DejaVu Sans (embedded as a subset)
 * when the font is installed, so that the PDF shows what the PNG shows; without it, the standard
 * Helvetica (no embedding, Latin-1 only). pdfkit and svg-to-pdfkit are JavaScript, so on the main
 * thread the work goes to the figure thread (`figure-thread.ts`); elsewhere it runs in place.
 */
export function svgToPdf(svg: string, opts: PdfOptions): Promise<Uint8Array> {
  return onFigureThread("pdf", { svg, options: opts }, (i) => svgToPdfHere(i.svg, i.options));
}

/** `svgToPdf` on the calling thread (what the figure thread runs). */
export async function svgToPdfHere(svg: string, opts: PdfOptions): Promise<Uint8Array> {
  const { widthPt, heightPt } = opts;
  if (!(widthPt > 0 && heightPt > 0 && widthPt <= 14400 && heightPt <= 14400)) {
    throw new RangeError(
      `PDF page must be between 0 and 14400 pt on each side, got ${widthPt} × ${heightPt}`,
    );
  }
  const info: Record<string, string | Date> = {
    Producer: "Tessera",
    Creator: "Tessera",
    ...(opts.info ?? {}),
  };
  const doc = new PDFDocument({
    size: [widthPt, heightPt],
    margin: 0,
    compress: true,
    autoFirstPage: true,
    info,
  });
  const hasRegular = existsSync(DEJAVU.regular);
  const hasBold = existsSync(DEJAVU.bold);
  if (hasRegular) doc.registerFont("DejaVuSans", DEJAVU.regular);
  if (hasBold) doc.registerFont("DejaVuSans-Bold", DEJAVU.bold);

  // svg-to-pdfkit parses the SVG in JS character by character: embedded rasters (megabytes of
  // base64) go to it as short references resolved by `imageCallback`, their bytes decoded natively.
  const images: Buffer[] = [];
  const lean = svg.replace(/href="data:image\/(?:png|jpeg);base64,([^"]*)"/g, (_m, b64: string) => {
    images.push(Buffer.from(b64, "base64"));
    return `href="${IMAGE_REF}${images.length - 1}"`;
  });
  const refs: string[] = [];
  for (let i = 0; i < images.length; i++) {
    const img = images[i]!;
    if (pngHasAlpha(img) && img.length > PDF_JPEG_ABOVE_BYTES) {
      // registered under a name svg-to-pdfkit hands back to doc.openImage
      const key = `${IMAGE_REF}alpha${i}`;
      (doc as unknown as { _imageRegistry: Record<string, unknown> })._imageRegistry[key] = await alphaImage(
        doc,
        img,
        `Tx${i}`,
      );
      refs[i] = key;
    } else images[i] = await pdfRaster(img);
  }
  const parts: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    doc.on("data", (b: Buffer) => parts.push(b));
    doc.on("end", () => resolve());
    doc.on("error", reject);
  });
  const svgOptions = {
    width: widthPt,
    height: heightPt,
    assumePt: true,
    preserveAspectRatio: "none",
    // Its warnings are about SVG features it skips (none that figures use); they would go to the console.
    warningCallback: () => {},
    // A Buffer is what pdfkit's openImage takes best; the typings say string.
    // A raster with alpha is a name pdfkit's registry resolves (see `alphaImage`).
    imageCallback: ((link: string) => {
      if (!link.startsWith(IMAGE_REF)) return link;
      const i = Number(link.slice(IMAGE_REF.length));
      return refs[i] ?? images[i];
    }) as (l: string) => string,
    fontCallback: (_family: string, bold: boolean) => {
      if (bold && hasBold) return "DejaVuSans-Bold";
      if (hasRegular) return "DejaVuSans";
      return bold ? "Helvetica-Bold" : "Helvetica";
    },
  };
  const split = splitMarkers(lean);
  if (!split) {
    SVGtoPDF(doc, lean, 0, 0, svgOptions);
  } else {
    SVGtoPDF(doc, split.before, 0, 0, svgOptions);
    drawMarkers(doc, split.markers, split.scaleX(widthPt), split.scaleY(heightPt));
    SVGtoPDF(doc, split.after, 0, 0, svgOptions);
  }
  doc.end();
  await done;
  const out = Buffer.concat(parts);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

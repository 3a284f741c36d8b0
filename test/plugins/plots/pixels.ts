/** Reading figures back in tests: SVG elements by class, PNG pixels, PDF structure. */
import sharp from "sharp";
import { PLOT_DPI } from "../../../src/plugins/plots/finish.js";

/** The attributes of every `<tag class="cls" …>` element of an SVG, in document order. */
export function elementsOf(svg: string, tag: string, cls: string): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  const re = new RegExp(`<${tag}\\b([^>]*)\\bclass="${cls}"([^>]*)/?>`, "g");
  for (const m of svg.matchAll(re)) {
    const attrs: Record<string, string> = {};
    for (const a of `${m[1]} ${m[2]}`.matchAll(/([\w:-]+)="([^"]*)"/g)) attrs[a[1]!] = a[2]!;
    out.push(attrs);
  }
  return out;
}

/** The text contents of every `<text>` element. */
export function textsOf(svg: string): string[] {
  const entities: Record<string, string> = {
    "&lt;": "<",
    "&gt;": ">",
    "&quot;": '"',
    "&#39;": "'",
    "&amp;": "&",
  };
  return [...svg.matchAll(/<text\b[^>]*>([^<]*)<\/text>/g)].map((m) =>
    m[1]!.replace(/&(lt|gt|quot|#39|amp);/g, (e) => entities[e]!),
  );
}

/** The RGB of the PNG pixel under SVG point (x, y) (the PNG is drawn at PLOT_DPI, 1 user unit = 1 pt). */
export async function pixelAt(png: Uint8Array, x: number, y: number): Promise<[number, number, number]> {
  const k = PLOT_DPI / 72;
  const img = sharp(png).removeAlpha();
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  const px = Math.floor(x * k);
  const py = Math.floor(y * k);
  const o = (py * info.width + px) * info.channels;
  return [data[o]!, data[o + 1]!, data[o + 2]!];
}

/** `#rrggbb` → RGB. */
export function rgbOf(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** Whether two colours differ by at most `tol` in every channel. */
export function near(a: readonly number[], b: readonly number[], tol = 3): boolean {
  return a.every((v, i) => Math.abs(v - b[i]!) <= tol);
}

/** A PDF's checks: the header, and the vector painting operators in its (decompressed) content streams. */
export async function pdfFacts(
  pdf: Uint8Array,
): Promise<{ header: string; fills: number; texts: number; images: number }> {
  const { inflateSync } = await import("node:zlib");
  const buf = Buffer.from(pdf);
  const header = buf.subarray(0, 5).toString("latin1");
  let fills = 0;
  let texts = 0;
  let images = 0;
  const s = buf.toString("latin1");
  for (const m of s.matchAll(/stream\r?\n/g)) {
    const start = m.index! + m[0].length;
    const end = s.indexOf("endstream", start);
    let content: string;
    try {
      content = inflateSync(buf.subarray(start, end)).toString("latin1");
    } catch {
      continue;
    }
    fills += (content.match(/\s(f|f\*|B|b)\n/g) ?? []).length;
    texts += (content.match(/\bTj\b|\bTJ\b/g) ?? []).length;
    images += (content.match(/\bDo\b/g) ?? []).length;
  }
  return { header, fills, texts, images };
}

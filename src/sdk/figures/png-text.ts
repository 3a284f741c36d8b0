/**
 * PNG text chunks, written and read by hand: sharp (libvips) can attach XMP but not an arbitrary
 * keyword/text pair, and provenance is JSON that may hold any Unicode, so it goes in an `iTXt` chunk
 * (UTF-8, uncompressed) inserted just before `IEND`. The CRC is `zlib.crc32` (Node ≥ 20.15).
 *
 * Exports: `addPngText(png, key, text)`, `readPngText(png)`.
 */
import { crc32 } from "node:zlib";

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder("utf-8", { fatal: true });
/** Largest text a chunk may carry here: a PNG chunk's length is a 31-bit number, provenance is small. */
const MAX_TEXT_BYTES = 64 * 1024 * 1024;

function isPng(png: Uint8Array): boolean {
  if (png.length < SIGNATURE.length + 12) return false;
  for (let i = 0; i < SIGNATURE.length; i++) if (png[i] !== SIGNATURE[i]) return false;
  return true;
}

/** Chunks of a PNG as (type, data start, data length, chunk start) in file order; throws on a truncated file. */
function* chunks(png: Uint8Array): Generator<{ type: string; start: number; length: number; at: number }> {
  if (!isPng(png)) throw new Error("not a PNG file (bad signature)");
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let at = SIGNATURE.length;
  while (at + 12 <= png.length) {
    const length = view.getUint32(at);
    const type = latin1.decode(png.subarray(at + 4, at + 8));
    if (at + 12 + length > png.length) throw new Error(`PNG chunk ${type} runs past the end of the file`);
    yield { type, start: at + 8, length, at };
    if (type === "IEND") return;
    at += 12 + length;
  }
  throw new Error("PNG file has no IEND chunk");
}

/**
 * A copy of `png` with an `iTXt` chunk (`key`, UTF-8 `text`, uncompressed, no language tag) inserted
 * before `IEND`. `key` is 1–79 Latin-1 printable characters, as the PNG specification requires.
 */
export function addPngText(png: Uint8Array, key: string, text: string): Uint8Array {
  if (!/^[\x20-\x7e\xa1-\xff]{1,79}$/.test(key) || key.startsWith(" ") || key.endsWith(" ")) {
    throw new Error(`PNG text key must be 1–79 printable Latin-1 characters, got ${JSON.stringify(key)}`);
  }
  const keyBytes = new Uint8Array(key.length);
  for (let i = 0; i < key.length; i++) keyBytes[i] = key.charCodeAt(i);
  const textBytes = new TextEncoder().encode(text);
  if (textBytes.length > MAX_TEXT_BYTES)
    throw new Error(`PNG text is ${textBytes.length} bytes, more than ${MAX_TEXT_BYTES}`);
  // keyword \0 compression-flag(0) compression-method(0) language-tag \0 translated-keyword \0 text
  const data = new Uint8Array(keyBytes.length + 5 + textBytes.length);
  data.set(keyBytes, 0);
  let p = keyBytes.length + 5; // the five bytes after the keyword are already zero
  data.set(textBytes, p);
  p += textBytes.length;

  let iend = -1;
  for (const c of chunks(png)) if (c.type === "IEND") iend = c.at;
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  chunk.set([0x69, 0x54, 0x58, 0x74], 4); // "iTXt"
  chunk.set(data, 8);
  view.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)) >>> 0);

  const out = new Uint8Array(png.length + chunk.length);
  out.set(png.subarray(0, iend), 0);
  out.set(chunk, iend);
  out.set(png.subarray(iend), iend + chunk.length);
  return out;
}

/**
 * The text chunks of a PNG (`tEXt` as Latin-1, uncompressed `iTXt` as UTF-8) as key → text; a
 * compressed `iTXt` or `zTXt` is skipped. Later chunks with the same key win.
 */
export function readPngText(png: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of chunks(png)) {
    const data = png.subarray(c.start, c.start + c.length);
    const nul = data.indexOf(0);
    if (nul <= 0) continue;
    const key = latin1.decode(data.subarray(0, nul));
    if (c.type === "tEXt") {
      out[key] = latin1.decode(data.subarray(nul + 1));
    } else if (c.type === "iTXt") {
      if (data[nul + 1] !== 0) continue; // compressed
      const langEnd = data.indexOf(0, nul + 3);
      if (langEnd < 0) continue;
      const transEnd = data.indexOf(0, langEnd + 1);
      if (transEnd < 0) continue;
      try {
        out[key] = utf8.decode(data.subarray(transEnd + 1));
      } catch {
        // not UTF-8: not a valid iTXt, ignore it
      }
    }
  }
  return out;
}

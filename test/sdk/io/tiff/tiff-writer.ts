/**
 * A minimal little-endian baseline TIFF writer for tests: uncompressed 8/16-bit single-sample pages,
 * stripped or tiled, an optional ImageDescription, and SubIFDs (the pyramid layout of OME-TIFF ≥ 6).
 * No staged fixture has SubIFDs, so the tests build their own with this.
 */

/** One page (IFD) to write. */
export interface TestPage {
  readonly width: number;
  readonly height: number;
  /** Row-major pixels; `Uint8Array` → 8-bit, `Uint16Array` → 16-bit unsigned. */
  readonly data: Uint8Array | Uint16Array;
  readonly description?: string;
  /** Tile edge; stripped (one strip) when absent. */
  readonly tile?: number;
  /** Compression tag value to claim (the bytes stay uncompressed); default 1. */
  readonly compression?: number;
  /** Reduced-resolution pages stored as SubIFDs of this page. */
  readonly subIfds?: readonly TestPage[];
}

const SHORT = 3;
const LONG = 4;
const ASCII = 2;
const IFD = 13;

class Builder {
  private readonly parts: Uint8Array[] = [];
  size = 0;

  /** Append bytes at a word boundary and return their offset. */
  add(bytes: Uint8Array): number {
    if (this.size % 2) this.push(new Uint8Array(1));
    const at = this.size;
    this.push(bytes);
    return at;
  }

  private push(b: Uint8Array): void {
    this.parts.push(b);
    this.size += b.length;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

interface Entry {
  tag: number;
  type: number;
  values: number[] | Uint8Array;
}

function typeSize(type: number): number {
  return type === SHORT ? 2 : type === ASCII ? 1 : 4;
}

function le(values: readonly number[], type: number): Uint8Array {
  const size = typeSize(type);
  const out = new Uint8Array(values.length * size);
  const dv = new DataView(out.buffer);
  values.forEach((v, i) => {
    if (size === 2) dv.setUint16(i * 2, v, true);
    else if (size === 4) dv.setUint32(i * 4, v, true);
    else out[i] = v;
  });
  return out;
}

/** Pixel blocks of a page: one strip, or tiles padded to the tile edge. */
function blocks(page: TestPage): { bytes: Uint8Array[]; bps: number } {
  const bps = page.data instanceof Uint16Array ? 2 : 1;
  const px = new Uint8Array(page.data.buffer, page.data.byteOffset, page.data.byteLength);
  if (!page.tile) return { bytes: [px.slice()], bps };
  const t = page.tile;
  const out: Uint8Array[] = [];
  for (let ty = 0; ty < Math.ceil(page.height / t); ty++) {
    for (let tx = 0; tx < Math.ceil(page.width / t); tx++) {
      const tileBytes = new Uint8Array(t * t * bps);
      for (let y = 0; y < t; y++) {
        const sy = ty * t + y;
        if (sy >= page.height) break;
        const x0 = tx * t;
        const n = Math.min(t, page.width - x0);
        tileBytes.set(
          px.subarray((sy * page.width + x0) * bps, (sy * page.width + x0 + n) * bps),
          y * t * bps,
        );
      }
      out.push(tileBytes);
    }
  }
  return { bytes: out, bps };
}

/** Write a page (and its SubIFDs) and return the offset of its IFD and of its next-IFD pointer. */
function writePage(b: Builder, page: TestPage): { ifd: number; nextPtr: number } {
  const subs = (page.subIfds ?? []).map((p) => writePage(b, p).ifd);
  const { bytes, bps } = blocks(page);
  const offsets = bytes.map((x) => b.add(x));
  const counts = bytes.map((x) => x.length);
  const entries: Entry[] = [
    { tag: 256, type: LONG, values: [page.width] },
    { tag: 257, type: LONG, values: [page.height] },
    { tag: 258, type: SHORT, values: [bps * 8] },
    { tag: 259, type: SHORT, values: [page.compression ?? 1] },
    { tag: 262, type: SHORT, values: [1] },
    { tag: 277, type: SHORT, values: [1] },
    { tag: 284, type: SHORT, values: [1] },
    { tag: 339, type: SHORT, values: [1] },
  ];
  if (page.description !== undefined) {
    entries.push({ tag: 270, type: ASCII, values: new TextEncoder().encode(`${page.description}\0`) });
  }
  if (page.tile) {
    entries.push(
      { tag: 322, type: LONG, values: [page.tile] },
      { tag: 323, type: LONG, values: [page.tile] },
      { tag: 324, type: LONG, values: offsets },
      { tag: 325, type: LONG, values: counts },
    );
  } else {
    entries.push(
      { tag: 273, type: LONG, values: offsets },
      { tag: 278, type: LONG, values: [page.height] },
      { tag: 279, type: LONG, values: counts },
    );
  }
  if (subs.length) entries.push({ tag: 330, type: IFD, values: subs });
  entries.sort((x, y) => x.tag - y.tag);
  // Out-of-line values first, then the IFD itself.
  const inline = entries.map((e) => {
    const raw = e.values instanceof Uint8Array ? e.values : le(e.values, e.type);
    if (raw.length <= 4) {
      const v = new Uint8Array(4);
      v.set(raw);
      return v;
    }
    return le([b.add(raw)], LONG);
  });
  const ifd = new Uint8Array(2 + entries.length * 12 + 4);
  const dv = new DataView(ifd.buffer);
  dv.setUint16(0, entries.length, true);
  entries.forEach((e, i) => {
    const o = 2 + i * 12;
    dv.setUint16(o, e.tag, true);
    dv.setUint16(o + 2, e.type, true);
    dv.setUint32(o + 4, e.values.length, true);
    ifd.set(inline[i]!, o + 8);
  });
  const at = b.add(ifd);
  return { ifd: at, nextPtr: at + 2 + entries.length * 12 };
}

/** Bytes of a TIFF whose top-level IFD chain holds `pages` in order. */
export function writeTestTiff(pages: readonly TestPage[]): Uint8Array {
  const b = new Builder();
  b.add(new Uint8Array(8));
  const written = pages.map((p) => writePage(b, p));
  const out = b.bytes();
  const dv = new DataView(out.buffer);
  dv.setUint16(0, 0x4949, false);
  dv.setUint16(2, 42, true);
  dv.setUint32(4, written[0]!.ifd, true);
  for (let i = 0; i + 1 < written.length; i++) dv.setUint32(written[i]!.nextPtr, written[i + 1]!.ifd, true);
  return out;
}

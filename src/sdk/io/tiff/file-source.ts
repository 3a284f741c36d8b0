/**
 * A byte source for geotiff over a local file that opens the file per fetch (no descriptor stays open
 * between reads, so an element that is never closed leaks nothing) and refuses reads that start past
 * the end of the file, which geotiff's own file source would silently zero-fill.
 */
import { open } from "node:fs/promises";

/** A byte range geotiff asks for. */
interface Slice {
  readonly offset: number;
  readonly length: number;
}

/** The source object `GeoTIFF.fromSource` accepts. */
export class NodeFileSource {
  constructor(
    readonly path: string,
    readonly size: number,
  ) {}

  /** The file size in bytes (geotiff asks for it). */
  get fileSize(): number {
    return this.size;
  }

  /** Read each slice; a slice reaching past the end comes back short, one starting past the end throws. */
  async fetch(slices: readonly Slice[], signal?: AbortSignal): Promise<ArrayBuffer[]> {
    signal?.throwIfAborted();
    for (const s of slices) {
      if (s.offset >= this.size && s.length > 0) {
        throw new Error(
          `${this.path}: read at byte ${s.offset} is past the end of the file (${this.size} bytes); the file is truncated or corrupt`,
        );
      }
    }
    const fh = await open(this.path, "r");
    try {
      const out: ArrayBuffer[] = [];
      for (const s of slices) {
        const len = Math.max(0, Math.min(s.length, this.size - s.offset));
        const buf = new Uint8Array(len);
        let got = 0;
        while (got < len) {
          const { bytesRead } = await fh.read(buf, got, len - got, s.offset + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        out.push(buf.buffer.slice(0, got));
      }
      return out;
    } finally {
      await fh.close();
    }
  }

  /** Nothing stays open. */
  async close(): Promise<void> {}
}

/**
 * The memory an instrument folder's parse needs at its peak, estimated from its files' sizes, so a
 * load from raw input is admitted by need like any other job (a 503 before anything is read when it
 * cannot fit). Images are left out (read lazily by window); compressed files (parquet, gzip, h5)
 * expand more in memory than plain text does.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Bytes in memory per byte on disk, by kind of file (measured with `bench/readers.ts`; see docs/readers.md). */
const EXPANSION = { compressed: 8, text: 3 } as const;
/** A fixed allowance for the reader's own structures (indexes, decoders). */
const BASE_BYTES = 64 * 2 ** 20;
/** How deep and how many entries the walk looks at (an instrument folder is shallow). */
const MAX_DEPTH = 4;
const MAX_ENTRIES = 20_000;

const IMAGE_RE = /\.(tiff?|png|jpe?g|btf)$/i;
const COMPRESSED_RE = /\.(parquet|gz|h5|hdf5|zip|zst)$/i;

/** The estimate and how it was made (for the admission message). */
export interface LoadNeed {
  readonly bytes: number;
  readonly why: string;
}

/** Estimate the peak memory of parsing folder `dir` (null when it is not a folder). */
export function estimateFolderNeed(dir: string): LoadNeed | null {
  try {
    if (!statSync(dir).isDirectory()) return null;
  } catch {
    return null;
  }
  let compressed = 0;
  let text = 0;
  let seen = 0;
  const walk = (d: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      if (++seen > MAX_ENTRIES) return;
      const p = join(d, n);
      let st: ReturnType<typeof statSync>;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (depth < MAX_DEPTH) walk(p, depth + 1);
      } else if (st.isFile() && !IMAGE_RE.test(n)) {
        if (COMPRESSED_RE.test(n)) compressed += st.size;
        else text += st.size;
      }
    }
  };
  walk(dir, 0);
  const bytes = BASE_BYTES + compressed * EXPANSION.compressed + text * EXPANSION.text;
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;
  return {
    bytes,
    why: `estimated from the folder's files: ${mb(compressed)} compressed × ${EXPANSION.compressed} + ${mb(text)} text × ${EXPANSION.text}, images excluded`,
  };
}

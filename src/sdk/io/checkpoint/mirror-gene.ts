/**
 * Serving one gene from a checkpoint's column-major mirror only while that is safe: the table's X
 * must still be the very matrix the checkpoint was opened with (no commit replaced it), and the file
 * must still be the one opened (a save that rewrote it in place moves every entry, so the mirror's
 * offsets would read other bytes).
 */
import { stat } from "node:fs/promises";
import type { MatrixSlot } from "../../data/lazy.js";
import { type Checkpoint, readGeneFromMirror } from "./read.js";

const stamps = new WeakMap<Checkpoint, string | null>();

/** Bytes of gene vectors kept per checkpoint: a viewer flips between a few genes, many clients ask for the same one. */
const GENE_CACHE_BYTES = 64 * 2 ** 20;

/** Recently served genes per checkpoint, oldest first (Map keeps insertion order). */
const geneCaches = new WeakMap<Checkpoint, Map<string, Float32Array>>();

function cached(cp: Checkpoint, key: string): Float32Array | undefined {
  const cache = geneCaches.get(cp);
  const v = cache?.get(key);
  if (v && cache) {
    cache.delete(key);
    cache.set(key, v);
  }
  return v;
}

function remember(cp: Checkpoint, key: string, v: Float32Array): void {
  let cache = geneCaches.get(cp);
  if (!cache) {
    cache = new Map();
    geneCaches.set(cp, cache);
  }
  cache.set(key, v);
  let bytes = 0;
  for (const x of cache.values()) bytes += x.byteLength;
  for (const [k, x] of cache) {
    if (bytes <= GENE_CACHE_BYTES || cache.size === 1) break;
    cache.delete(k);
    bytes -= x.byteLength;
  }
}

async function fileStamp(path: string): Promise<string | null> {
  try {
    const s = await stat(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return null;
  }
}

/** Record the identity of a checkpoint's file as opened (call right after opening it). */
export async function stampCheckpoint(cp: Checkpoint): Promise<void> {
  stamps.set(cp, /^https?:\/\//.test(cp.location) ? null : await fileStamp(cp.location));
}

/**
 * Gene `gene` of table `table` from `cp`'s mirror when `currentX` is the X the checkpoint holds and
 * the file is unchanged since `stampCheckpoint`; null otherwise (the caller reads X instead). The
 * last genes served (up to 64 MB per checkpoint) are kept; callers must not write into the result.
 */
export async function mirroredGene(
  cp: Checkpoint,
  table: string,
  gene: string,
  currentX: MatrixSlot | null | undefined,
): Promise<Float32Array | null> {
  if (!currentX || currentX !== cp.sdata.tables[table]?.X) return null;
  if (!cp.sidecar.tables.find((t) => t.name === table)?.x_mirror) return null;
  const stamp = stamps.get(cp);
  if (!stamp || stamp !== (await fileStamp(cp.location))) return null;
  const key = `${table}\u0000${gene}`;
  const hit = cached(cp, key);
  if (hit) return hit;
  try {
    const v = await readGeneFromMirror(cp, table, gene);
    remember(cp, key, v);
    return v;
  } catch {
    return null;
  }
}

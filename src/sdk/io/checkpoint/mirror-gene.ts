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
 * the file is unchanged since `stampCheckpoint`; null otherwise (the caller reads X instead).
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
  try {
    return await readGeneFromMirror(cp, table, gene);
  } catch {
    return null;
  }
}

/**
 * Size accounting: bytes per element, per pyramid level and per table slot. Real compressed bytes on
 * disk where the reader recorded them, otherwise an estimate of the in-memory size (never a read).
 */
import { BYTES_PER_ELEMENT, memoryBytes } from "./arrays.js";
import type { DataFrame } from "./dataframe.js";
import type { RasterLevel, SpatialElement } from "./elements.js";
import { type MatrixSlot, matrixInfo } from "./lazy.js";
import { type AxisArray, KEYED_SLOTS, type Table } from "./table.js";
import { isUnsDict, type UnsValue } from "./uns.js";

/** A table slot with its size; `required` slots cannot be left out of a save. */
export interface SlotSize {
  path: string;
  bytes: number;
  required: boolean;
}

/** Estimated in-memory bytes of a matrix slot, from its description (lazy slots are not read). */
export function matrixBytes(slot: MatrixSlot): number {
  if (slot.kind !== "lazy") return memoryBytes(slot);
  const info = matrixInfo(slot);
  const item = BYTES_PER_ELEMENT[info.dtype];
  if (info.format === "dense") return info.shape.reduce((p, s) => p * s, 1) * item;
  const nnz = info.nnz ?? 0;
  const major = info.format === "csr" ? info.shape[0]! : info.shape[1]!;
  return nnz * (item + 4) + (major + 1) * 8;
}

/** Estimated bytes of a data frame (index plus columns). */
export function frameBytes(df: DataFrame): number {
  let n = memoryBytes(df.index);
  for (const c of df.columnOrder) n += memoryBytes(df.columns[c]!);
  return n;
}

function axisArrayBytes(a: AxisArray): number {
  return a.kind === "dataframe" ? frameBytes(a) : matrixBytes(a);
}

/** Estimated bytes of an uns subtree. */
export function unsBytes(v: UnsValue): number {
  if (v === null || typeof v !== "object") return 8;
  if (isUnsDict(v)) return Object.values(v.entries).reduce<number>((p, x) => p + unsBytes(x), 0);
  if (v.kind === "dataframe") return frameBytes(v);
  return memoryBytes(v);
}

/** Every slot of a table with its bytes (disk bytes where known), in save-slot vocabulary. */
export function tableSlotSizes(t: Table): SlotSize[] {
  const disk = t.diskBytes ?? {};
  const pick = (path: string, estimate: () => number) => disk[path] ?? estimate();
  const out: SlotSize[] = [];
  if (t.X) out.push({ path: "X", bytes: pick("X", () => matrixBytes(t.X!)), required: false });
  out.push({ path: "obs", bytes: pick("obs", () => frameBytes(t.obs)), required: true });
  out.push({ path: "var", bytes: pick("var", () => frameBytes(t.var)), required: true });
  out.push({ path: "uns", bytes: pick("uns", () => unsBytes(t.uns)), required: true });
  if (t.raw) {
    out.push({
      path: "raw",
      bytes: pick("raw", () => matrixBytes(t.raw!.X) + frameBytes(t.raw!.var)),
      required: false,
    });
  }
  for (const slot of KEYED_SLOTS) {
    for (const [key, value] of Object.entries(t[slot])) {
      const path = `${slot}/${key}`;
      const bytes = pick(path, () =>
        slot === "obsm" || slot === "varm"
          ? axisArrayBytes(value as AxisArray)
          : matrixBytes(value as MatrixSlot),
      );
      out.push({ path, bytes, required: false });
    }
  }
  return out;
}

/** Bytes of one pyramid level (disk where known, else uncompressed pixels). */
export function levelBytes(level: RasterLevel): number {
  return level.diskBytes ?? level.shape.reduce((p, s) => p * s, 1) * BYTES_PER_ELEMENT[level.dtype];
}

/** Bytes of a spatial element (disk where known, else an in-memory estimate). */
export function elementBytes(el: SpatialElement): number {
  switch (el.kind) {
    case "image":
    case "labels":
      return el.levels.reduce((p, l) => p + levelBytes(l), 0);
    case "points":
      return el.diskBytes ?? frameBytes(el.frame);
    case "shapes": {
      if (el.diskBytes != null) return el.diskBytes;
      const g = el.geometry;
      const geo =
        g.coords.byteLength +
        (g.geomOffsets?.byteLength ?? 0) +
        (g.polygonOffsets?.byteLength ?? 0) +
        (g.ringOffsets?.byteLength ?? 0);
      return geo + frameBytes(el.frame);
    }
  }
}

/** Bytes of a table: the sum of its slots. */
export function tableBytes(t: Table): number {
  return tableSlotSizes(t).reduce((p, s) => p + s.bytes, 0);
}

/** Bytes expressed in MB (10^6) rounded to 3 decimals, as the service reports `size_mb`. */
export function toMb(bytes: number): number {
  return Math.round((bytes / 1e6) * 1000) / 1000;
}

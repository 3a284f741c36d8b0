/**
 * Transcripts: the detected molecules behind the count matrix. Most are drawn without replacement from
 * the counts themselves (so a cell never shows more transcripts of a gene than it has counts) and
 * placed uniformly inside their cell's polygon; the rest are background molecules outside every cell,
 * with genes in proportion to their overall abundance. The order is shuffled, so any prefix is a fair
 * sample (viewers can draw the first k points).
 */
import { allocArray, type SparseMatrix } from "../data/arrays.js";
import type { Rng } from "../math/rng.js";
import type { CellGeometry } from "./cells.js";
import { insideOutline, type TissueOutline } from "./tissue.js";

/** Columns of the transcripts frame. */
export interface Transcripts {
  readonly x: Float32Array;
  readonly y: Float32Array;
  /** Gene code (column of the count matrix). */
  readonly gene: Int32Array;
  /** Cell id, or -1 for background. */
  readonly cellId: Int32Array;
}

/** Inputs of `sampleTranscripts`. */
export interface TranscriptInput {
  readonly counts: SparseMatrix;
  readonly cells: CellGeometry;
  /** Id of each cell (row of counts). */
  readonly cellIds: Int32Array;
  readonly labels: Uint32Array;
  readonly width: number;
  readonly height: number;
  readonly pixelSize: number;
  readonly outline: TissueOutline;
  readonly nTranscripts: number;
  /** Share of background molecules (default 0.08). */
  readonly backgroundFraction?: number;
}

/** Even–odd point-in-polygon test on ring `i`. */
function inRing(coords: Float64Array, v0: number, v1: number, x: number, y: number): boolean {
  let inside = false;
  for (let v = v0; v < v1; v++) {
    const ax = coords[2 * v]!;
    const ay = coords[2 * v + 1]!;
    const bx = coords[2 * v + 2]!;
    const by = coords[2 * v + 3]!;
    if (ay <= y !== by <= y && x < ax + ((y - ay) * (bx - ax)) / (by - ay)) inside = !inside;
  }
  return inside;
}

/** Draw the transcripts. */
export function sampleTranscripts(rng: Rng, input: TranscriptInput): Transcripts {
  const { counts, cells, cellIds, labels, width, height, pixelSize, outline } = input;
  const nCells = counts.shape[0];
  const nGenes = counts.shape[1];
  const indptr = counts.indptr;
  const indices = counts.indices;
  const values = counts.data as Float32Array;
  let totalUnits = 0;
  for (let k = 0; k < values.length; k++) totalUnits += values[k]!;
  const nBackground = Math.round(input.nTranscripts * (input.backgroundFraction ?? 0.08));
  const nCell = Math.min(totalUnits, input.nTranscripts - nBackground);
  const total = nCell + nBackground;

  const x = allocArray("float32", total) as Float32Array;
  const y = allocArray("float32", total) as Float32Array;
  const gene = allocArray("int32", total) as Int32Array;
  const cellId = allocArray("int32", total) as Int32Array;
  const { coords, ringOffsets } = cells;

  // Selection sampling (Knuth's Algorithm S) over every count unit, in matrix order.
  let seen = 0;
  let chosen = 0;
  for (let i = 0; i < nCells && chosen < nCell; i++) {
    const v0 = ringOffsets[i]!;
    const v1 = ringOffsets[i + 1]! - 1;
    let minX = Number.POSITIVE_INFINITY;
    let minY = Number.POSITIVE_INFINITY;
    let maxX = Number.NEGATIVE_INFINITY;
    let maxY = Number.NEGATIVE_INFINITY;
    for (let v = v0; v < v1; v++) {
      minX = Math.min(minX, coords[2 * v]!);
      maxX = Math.max(maxX, coords[2 * v]!);
      minY = Math.min(minY, coords[2 * v + 1]!);
      maxY = Math.max(maxY, coords[2 * v + 1]!);
    }
    for (let k = indptr[i]!; k < indptr[i + 1]!; k++) {
      const units = values[k]!;
      for (let u = 0; u < units; u++) {
        if ((totalUnits - seen) * rng.next() < nCell - chosen) {
          let px: number;
          let py: number;
          do {
            px = minX + (maxX - minX) * rng.next();
            py = minY + (maxY - minY) * rng.next();
          } while (!inRing(coords, v0, v1, px, py));
          x[chosen] = px;
          y[chosen] = py;
          gene[chosen] = indices[k]!;
          cellId[chosen] = cellIds[i]!;
          chosen++;
        }
        seen++;
      }
    }
  }

  // Background: genes by overall abundance, positions in the tissue where no cell is.
  const geneTotals = new Float64Array(nGenes);
  for (let k = 0; k < values.length; k++) geneTotals[indices[k]!]! += values[k];
  const cum = new Float64Array(nGenes);
  let acc = 0;
  for (let g = 0; g < nGenes; g++) cum[g] = acc += geneTotals[g]!;
  const w = width * pixelSize;
  const h = height * pixelSize;
  for (let b = 0; b < nBackground; b++) {
    let px = 0;
    let py = 0;
    for (let attempt = 0; attempt < 1000; attempt++) {
      px = rng.next() * w;
      py = rng.next() * h;
      const col = Math.min(width - 1, Math.floor(px / pixelSize));
      const row = Math.min(height - 1, Math.floor(py / pixelSize));
      if (labels[row * width + col] === 0 && insideOutline(outline, px, py)) break;
    }
    const target = rng.next() * acc;
    let lo = 0;
    let hi = nGenes - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! > target) hi = mid;
      else lo = mid + 1;
    }
    x[chosen + b] = px;
    y[chosen + b] = py;
    gene[chosen + b] = lo;
    cellId[chosen + b] = -1;
  }

  // Shuffle all four columns with one permutation.
  for (let i = total - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    let t: number = x[i]!;
    x[i] = x[j]!;
    x[j] = t;
    t = y[i]!;
    y[i] = y[j]!;
    y[j] = t;
    t = gene[i]!;
    gene[i] = gene[j]!;
    gene[j] = t;
    t = cellId[i]!;
    cellId[i] = cellId[j]!;
    cellId[j] = t;
  }
  return { x, y, gene, cellId };
}

/**
 * The morphology image: four uint16 channels rendered from the cell layout, the way a multiplexed
 * immunofluorescence stain looks. DAPI shows nuclei with chromatin texture; the membrane stain
 * outlines every cell (where the label changes); PanCK fills the cytoplasm of epithelial and tumour
 * cells; CD45 marks immune cells. A slight optical blur, tissue autofluorescence, shot noise and
 * read noise finish it. Channels are rendered one at a time through one float plane.
 */
import { allocArray, type DenseArray } from "../data/arrays.js";
import type { Rng } from "../math/rng.js";
import type { CellGeometry } from "./cells.js";
import { CELL_TYPES } from "./genes.js";
import { insideOutline, type TissueOutline } from "./tissue.js";

/** Channel names of the morphology image, in order. */
export const MORPHOLOGY_CHANNELS = ["DAPI", "Membrane", "PanCK", "CD45"] as const;

/** Display colours (hex, no `#`) per channel, for the NGFF `omero` block. */
export const MORPHOLOGY_COLORS = ["0000FF", "00FF00", "FF0000", "FFFF00"] as const;

/** Everything the renderer needs. */
export interface MorphologyInput {
  readonly width: number;
  readonly height: number;
  /** World units (µm) per pixel. */
  readonly pixelSize: number;
  readonly labels: Uint32Array;
  readonly cells: CellGeometry;
  readonly types: Int32Array;
  readonly outline: TissueOutline;
}

/** Separable [1 2 1]/4 blur of a plane, in place, with two row buffers. */
function blur121(plane: Float32Array, w: number, h: number): void {
  for (let y = 0; y < h; y++) {
    const o = y * w;
    let prev = plane[o]!;
    for (let x = 0; x < w; x++) {
      const cur = plane[o + x]!;
      const next = x + 1 < w ? plane[o + x + 1]! : cur;
      plane[o + x] = 0.25 * prev + 0.5 * cur + 0.25 * next;
      prev = cur;
    }
  }
  const above = new Float32Array(w);
  const here = new Float32Array(w);
  above.set(plane.subarray(0, w));
  for (let y = 0; y < h; y++) {
    const o = y * w;
    here.set(plane.subarray(o, o + w));
    const below = y + 1 < h ? o + w : o;
    for (let x = 0; x < w; x++) plane[o + x] = 0.25 * above[x]! + 0.5 * here[x]! + 0.25 * plane[below + x]!;
    above.set(here);
  }
}

/** Render the four channels as a `[4, height, width]` uint16 array on shared memory. */
export function renderMorphology(rng: Rng, input: MorphologyInput): DenseArray {
  const { width: w, height: h, pixelSize: ps, labels, cells, types, outline } = input;
  const n = types.length;
  const inv = 1 / ps;

  // Per-cell parameters in pixel units.
  const ncx = new Float64Array(n);
  const ncy = new Float64Array(n);
  const cosA = new Float64Array(n);
  const sinA = new Float64Array(n);
  const invA2 = new Float64Array(n);
  const invB2 = new Float64Array(n);
  const dapi = new Float32Array(n);
  const membrane = new Float32Array(n);
  const panck = new Float32Array(n);
  const cd45 = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const spec = CELL_TYPES[types[i]!]!;
    ncx[i] = cells.nucleusX[i]! * inv;
    ncy[i] = cells.nucleusY[i]! * inv;
    cosA[i] = Math.cos(cells.nucleusAngle[i]!);
    sinA[i] = Math.sin(cells.nucleusAngle[i]!);
    invA2[i] = 1 / (cells.nucleusA[i]! * inv) ** 2;
    invB2[i] = 1 / (cells.nucleusB[i]! * inv) ** 2;
    const proliferating = spec.name === "Tumor" ? 1.3 : spec.cd45 > 0.5 ? 1.15 : 1;
    dapi[i] = 9000 * proliferating * (0.75 + 0.5 * rng.next());
    membrane[i] = 4200 * (0.7 + 0.6 * rng.next());
    panck[i] = 7000 * spec.panck * (0.6 + 0.8 * rng.next());
    cd45[i] = 6000 * spec.cd45 * (0.6 + 0.8 * rng.next());
  }

  // Tissue mask on 4-pixel blocks (autofluorescence inside the section, darker glass outside).
  const bw = Math.ceil(w / 4);
  const bh = Math.ceil(h / 4);
  const tissue = new Uint8Array(bw * bh);
  for (let by = 0; by < bh; by++) {
    for (let bx = 0; bx < bw; bx++)
      tissue[by * bw + bx] = insideOutline(outline, (bx * 4 + 2) * ps, (by * 4 + 2) * ps) ? 1 : 0;
  }

  // 8192 standard normals, indexed by random bits, make per-pixel noise cheap.
  const normals = new Float32Array(8192);
  for (let i = 0; i < normals.length; i++) normals[i] = rng.normal();

  const out = allocArray("uint16", 4 * w * h) as Uint16Array;
  const plane = new Float32Array(w * h);
  const glass = [110, 90, 80, 70];
  const autofluor = [320, 260, 230, 200];
  for (let c = 0; c < 4; c++) {
    for (let y = 0; y < h; y++) {
      const trow = (y >> 2) * bw;
      const row = y * w;
      const yc = y + 0.5;
      for (let x = 0; x < w; x++) {
        const p = row + x;
        const id = labels[p]!;
        let v = tissue[trow + (x >> 2)] ? autofluor[c]! : glass[c]!;
        if (id > 0) {
          const i = id - 1;
          const dx = x + 0.5 - ncx[i]!;
          const dy = yc - ncy[i]!;
          const u = dx * cosA[i]! + dy * sinA[i]!;
          const t = -dx * sinA[i]! + dy * cosA[i]!;
          const d2 = u * u * invA2[i]! + t * t * invB2[i]!;
          const inNucleus = d2 < 1;
          const edge =
            (x > 0 && labels[p - 1] !== id) ||
            (x + 1 < w && labels[p + 1] !== id) ||
            (y > 0 && labels[p - w] !== id) ||
            (y + 1 < h && labels[p + w] !== id);
          if (c === 0) {
            if (d2 < 1.15) v += dapi[i]! * Math.min(1, (1.15 - d2) / 0.3) * (0.7 + 0.6 * rng.next());
          } else if (c === 1) {
            v += edge ? membrane[i]! : 350;
          } else if (c === 2) {
            v += panck[i]! * (inNucleus ? 0.25 : 1) * (0.85 + 0.3 * rng.next());
          } else {
            v += cd45[i]! * (edge ? 1.5 : inNucleus ? 0.3 : 1) * (0.85 + 0.3 * rng.next());
          }
        }
        plane[p] = v;
      }
    }
    blur121(plane, w, h);
    const base = c * w * h;
    for (let p = 0; p < w * h; p++) {
      const v = plane[p]!;
      const bits = rng.uint32();
      const noisy = v + normals[bits & 8191]! * (25 + 0.9 * Math.sqrt(v));
      out[base + p] = noisy <= 0 ? 0 : noisy >= 65535 ? 65535 : Math.round(noisy);
    }
  }
  return { kind: "dense", dtype: "uint16", shape: [4, h, w], data: out };
}

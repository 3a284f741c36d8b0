/**
 * Synthetic large inputs for the benchmarks: a realistic raw-count table of any size (1M cells × 2k
 * genes fits in a few GB) and a large multi-channel uint16 image with its pyramid.
 *
 * The table is written row by row into shared buffers allocated once from an estimate of the number
 * of non-zeros (no per-cell JS objects), using the demo's expression model. Size factors are
 * quantised to 64 log-spaced levels so that P(0) and the NB recursion constants come from a table:
 * most entries then cost one uniform draw and one comparison.
 */
import { allocArray, type IndexArray, strings, type TypedArray } from "../src/sdk/data/arrays.js";
import { dataFrame } from "../src/sdk/data/dataframe.js";
import type { ImageElement } from "../src/sdk/data/elements.js";
import { makeTable, type Table } from "../src/sdk/data/table.js";
import { defaultAxes } from "../src/sdk/data/transforms.js";
import { buildExpressionModel, NB_INVERSION_MAX_MEAN, nbZero } from "../src/sdk/demo/expression.js";
import { CELL_TYPES, geneIds, panelGenes } from "../src/sdk/demo/genes.js";
import { Rng } from "../src/sdk/math/rng.js";
import { buildPyramid } from "../src/sdk/raster/pyramid.js";

/** Options of `generateLargeTable`. */
export interface LargeTableOptions {
  /** Mean total counts of a cell of size factor 1 (default 600: about 14% non-zeros over 2k genes). */
  readonly targetCounts?: number;
  /** NB dispersion (default 0.3). */
  readonly dispersion?: number;
  /** Log-sd of non-marker gene expression (default 1.8: many near-silent genes, a few abundant ones). */
  readonly backgroundSpread?: number;
  /** Initial non-zero capacity (default: estimated from the model; buffers grow by 25% if it is exceeded). */
  readonly initialCapacity?: number;
}

const SIZE_BINS = 64;
const LOG_SF_MIN = -1.6;
const LOG_SF_MAX = 1.6;

/** Copy a typed array into a larger shared one (rare: only when the nnz estimate was exceeded). */
function grow<T extends TypedArray>(a: T, length: number, dtype: "float32" | "int32"): T {
  const b = allocArray(dtype, length) as T;
  (b as unknown as { set(x: ArrayLike<number>): void }).set(a as unknown as ArrayLike<number>);
  return b;
}

/**
 * A table of `nCells × nGenes` raw counts (float32 CSR on shared memory) with 8 cell types, the obs
 * columns `cell_type` and `total_counts`, and var `gene_ids`. Deterministic per seed.
 */
export function generateLargeTable(
  nCells: number,
  nGenes: number,
  seed = 0,
  opts: LargeTableOptions = {},
): Table {
  if (!Number.isInteger(nCells) || nCells < 1)
    throw new Error(`generateLargeTable: nCells must be a positive integer, got ${nCells}`);
  const rng = new Rng(seed);
  const genes = panelGenes(nGenes);
  const model = buildExpressionModel(rng.fork("model"), genes, {
    targetCounts: opts.targetCounts ?? 600,
    dispersion: opts.dispersion ?? 0.3,
    backgroundSpread: opts.backgroundSpread ?? 1.8,
  });
  const nTypes = model.nTypes;
  const r = 1 / model.dispersion;

  // Cells: type by random proportions, size factor log-normal, quantised to a bin.
  const props = CELL_TYPES.map(() => 0.3 + rng.next());
  const cellRng = rng.fork("cells");
  const typeIdx = CELL_TYPES.map((_, i) => i);
  const types = new Int32Array(nCells);
  const bins = new Uint8Array(nCells);
  const binCount = new Float64Array(SIZE_BINS * nTypes);
  for (let i = 0; i < nCells; i++) {
    const t = cellRng.choice(typeIdx, props);
    const logSf = Math.min(LOG_SF_MAX, Math.max(LOG_SF_MIN, 0.35 * cellRng.normal()));
    const b = Math.round(((logSf - LOG_SF_MIN) / (LOG_SF_MAX - LOG_SF_MIN)) * (SIZE_BINS - 1));
    types[i] = t;
    bins[i] = b;
    binCount[b * nTypes + t]!++;
  }

  // Per (bin, type, gene): mean, P(0) and the NB ratio q = μ/(r+μ); and the expected non-zeros.
  const table = SIZE_BINS * nTypes * nGenes;
  const muT = new Float64Array(table);
  const p0T = new Float64Array(table);
  const qT = new Float64Array(table);
  let expectedNnz = 0;
  for (let b = 0; b < SIZE_BINS; b++) {
    const sf = Math.exp(LOG_SF_MIN + ((LOG_SF_MAX - LOG_SF_MIN) * b) / (SIZE_BINS - 1));
    for (let t = 0; t < nTypes; t++) {
      const base = (b * nTypes + t) * nGenes;
      let nz = 0;
      for (let g = 0; g < nGenes; g++) {
        const mu = sf * model.mean[t * nGenes + g]!;
        muT[base + g] = mu;
        p0T[base + g] = nbZero(mu, r);
        qT[base + g] = mu / (r + mu);
        nz += 1 - p0T[base + g]!;
      }
      expectedNnz += nz * binCount[b * nTypes + t]!;
    }
  }
  // The non-zero count is a sum of independent Bernoullis: its sd is below √E, so E + 8√E rarely overflows.
  let capacity = Math.max(
    1,
    Math.ceil(opts.initialCapacity ?? expectedNnz + 8 * Math.sqrt(expectedNnz) + 1024),
  );
  let data = allocArray("float32", capacity) as Float32Array;
  let indices = allocArray("int32", capacity) as Int32Array;
  const wideIndptr = capacity >= 2 ** 31 - 1;
  const indptr = allocArray(wideIndptr ? "float64" : "int32", nCells + 1) as Int32Array | Float64Array;
  const totals = allocArray("float32", nCells) as Float32Array;

  const countRng = rng.fork("counts");
  let nnz = 0;
  for (let i = 0; i < nCells; i++) {
    const base = (bins[i]! * nTypes + types[i]!) * nGenes;
    let total = 0;
    for (let g = 0; g < nGenes; g++) {
      const u = countRng.next();
      let p = p0T[base + g]!;
      if (u < p) continue;
      const mu = muT[base + g]!;
      let k: number;
      if (mu > NB_INVERSION_MAX_MEAN) {
        k = countRng.negativeBinomial(mu, model.dispersion);
        if (k === 0) continue;
      } else {
        // Continue the CDF inversion past k = 0 (see nbInverse).
        const q = qT[base + g]!;
        let cdf = p;
        k = 0;
        const cap = 20 + 20 * mu;
        while (u >= cdf && k < cap) {
          p *= ((k + r) / (k + 1)) * q;
          k++;
          cdf += p;
          if (p === 0) break;
        }
      }
      if (nnz === capacity) {
        capacity = Math.ceil(capacity * 1.25) + 16;
        data = grow(data, capacity, "float32");
        indices = grow(indices, capacity, "int32");
      }
      data[nnz] = k;
      indices[nnz] = g;
      nnz++;
      total += k;
    }
    totals[i] = total;
    indptr[i + 1] = nnz;
  }

  const names = Array.from({ length: nCells }, (_, i) => `cell_${i}`);
  return makeTable({
    X: {
      kind: "csr",
      dtype: "float32",
      shape: [nCells, nGenes],
      // Views of the exact length; the buffers keep the (small) unused tail of the estimate.
      data: data.subarray(0, nnz),
      indices: indices.subarray(0, nnz),
      indptr: indptr as IndexArray,
    },
    obs: dataFrame(strings(names), {
      cell_type: {
        kind: "categorical",
        codes: types,
        categories: strings(CELL_TYPES.map((t) => t.name)),
        ordered: false,
      },
      total_counts: { kind: "dense", dtype: "float32", shape: [nCells], data: totals },
    }),
    var: dataFrame(strings(genes), { gene_ids: strings(geneIds(genes)) }),
  });
}

/** Options of `generateLargeImage`. */
export interface LargeImageOptions {
  readonly seed?: number;
  /** Build the pyramid down to ≤ 256 px (default true); otherwise only level 0. */
  readonly pyramid?: boolean;
}

/**
 * A `channels × size × size` uint16 image (axes c,y,x) with tissue-like texture: a smooth background
 * at the 64-pixel scale, nucleus-sized blobs on a jittered 14-pixel lattice (shared by all channels,
 * with per-channel brightness), and per-pixel noise, so that it compresses like a real fluorescence
 * image rather than like a constant. Returned as an image element with its pyramid.
 */
export function generateLargeImage(
  size: number,
  channels: number,
  opts: LargeImageOptions = {},
): ImageElement {
  if (!Number.isInteger(size) || size < 2)
    throw new Error(`generateLargeImage: size must be an integer ≥ 2, got ${size}`);
  if (!Number.isInteger(channels) || channels < 1)
    throw new Error(`generateLargeImage: channels must be ≥ 1, got ${channels}`);
  const rng = new Rng(opts.seed ?? 0);
  const plane = size * size;
  const out = allocArray("uint16", channels * plane) as Uint16Array;

  // Blob lattice: centre, radius and a brightness seed per site (about one in five sites is empty).
  const spacing = 14;
  const sites = Math.ceil(size / spacing);
  const blobRng = rng.fork("blobs");
  const nBlobs = sites * sites;
  const bx = new Float32Array(nBlobs);
  const by = new Float32Array(nBlobs);
  const br = new Float32Array(nBlobs);
  for (let j = 0; j < sites; j++) {
    for (let i = 0; i < sites; i++) {
      const b = j * sites + i;
      bx[b] = (i + 0.2 + 0.6 * blobRng.next()) * spacing;
      by[b] = (j + 0.2 + 0.6 * blobRng.next()) * spacing;
      br[b] = blobRng.next() < 0.8 ? 3.5 + 2.5 * blobRng.next() : 0;
    }
  }

  const coarse = 64;
  const gc = Math.ceil(size / coarse) + 2;
  const gridC = new Float32Array(gc * gc);
  const rowC = new Float32Array(gc);
  for (let c = 0; c < channels; c++) {
    const cr = rng.fork(c);
    for (let i = 0; i < gridC.length; i++) gridC[i] = cr.next();
    const level = 400 + 3000 * cr.next();
    let noise = cr.uint32() | 1;
    const o = c * plane;
    // Background: bilinear coarse field plus 7 bits of xorshift32 noise.
    for (let y = 0; y < size; y++) {
      const yc = y / coarse;
      const yc0 = Math.floor(yc);
      const fy = yc - yc0;
      for (let gx = 0; gx < gc; gx++)
        rowC[gx] = gridC[yc0 * gc + gx]! * (1 - fy) + gridC[(yc0 + 1) * gc + gx]! * fy;
      const row = o + y * size;
      for (let x = 0; x < size; x++) {
        const xc = x / coarse;
        const xc0 = xc | 0;
        const vc = rowC[xc0]! + (rowC[xc0 + 1]! - rowC[xc0]!) * (xc - xc0);
        noise ^= noise << 13;
        noise ^= noise >>> 17;
        noise ^= noise << 5;
        out[row + x] = level * vc * vc + 40 + ((noise >>> 0) & 127);
      }
    }
    // Blobs: stamp each one over its bounding box.
    for (let b = 0; b < nBlobs; b++) {
      const r = br[b]!;
      if (r === 0) continue;
      const peak = (c === 0 ? 8000 : 1500) + 9000 * cr.next();
      const cx = bx[b]!;
      const cy = by[b]!;
      const inv = 1 / (r * r);
      for (let y = Math.max(0, Math.floor(cy - r)); y <= Math.min(size - 1, Math.ceil(cy + r)); y++) {
        const dy2 = (y + 0.5 - cy) ** 2;
        const row = o + y * size;
        for (let x = Math.max(0, Math.floor(cx - r)); x <= Math.min(size - 1, Math.ceil(cx + r)); x++) {
          const f = 1 - ((x + 0.5 - cx) ** 2 + dy2) * inv;
          if (f > 0) {
            const v = out[row + x]! + peak * Math.sqrt(f);
            out[row + x] = v > 65535 ? 65535 : v;
          }
        }
      }
    }
  }
  const axes = ["c", "y", "x"];
  const base = { kind: "dense" as const, dtype: "uint16" as const, shape: [channels, size, size], data: out };
  const levels = buildPyramid(base, axes, { method: "mean", maxLevels: opts.pyramid === false ? 1 : 16 });
  return {
    kind: "image",
    name: "large_image",
    transformations: {
      global: {
        type: "identity",
        input: { name: "cyx", axes: defaultAxes(axes) },
        output: { name: "global", axes: defaultAxes(axes) },
      },
    },
    axes,
    channels: Array.from({ length: channels }, (_, c) => `channel_${c}`),
    dtype: "uint16",
    levels,
  };
}

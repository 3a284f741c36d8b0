/**
 * The column-major mirror of X (`viewer/X_csc/<table>`, a CSC matrix in AnnData's encoding) written as a
 * stream: the non-zeros are produced a block of columns at a time, in CSC order, and written chunk by chunk,
 * so saving holds a few chunks and one block beside X, never a CSC copy of it. A dense X of 50,000 × 3,000
 * (what `sc.pp.scale` leaves) has 150 M non-zeros: a whole CSC copy (indices + values, 1.2 GB) took the
 * server past its memory and killed it.
 *
 * Dense X is read row-major, one block of columns per pass; CSR X walks a cursor per row through its sorted
 * column indices (one pass overall); CSC X is written as it is. Values are stored as float32, the mirror's
 * dtype whatever X's.
 * @module
 */
import * as zarr from "zarrita";
import type { DenseArray, Matrix, SparseMatrix } from "../../data/arrays.js";
import { loadMatrix, type MatrixSlot } from "../../data/lazy.js";
import { switchCompression } from "../../math/sparse.js";
import type { ListableWritableStore } from "../store/types.js";
import { numericCodecs, writeZarrArray } from "../zarr/arrays.js";
import { registerCodecs } from "../zarr/codecs.js";

/**
 * Non-zeros per chunk of the mirror: about two genes' worth, so one gene reads one or two chunks, kept
 * between 16 Ki (small tables: few bytes per gene read) and 256 Ki (big tables: not too many files).
 */
export function mirrorChunk(nnz: number, nVars: number): number {
  const perGene = nnz / Math.max(1, nVars);
  const target = 2 ** Math.ceil(Math.log2(Math.max(1, 2 * perGene)));
  return Math.min(262_144, Math.max(16_384, target));
}

/**
 * Compressor of the mirror's chunks: gzip, which every reader of a gene has natively (Node's zlib,
 * decoding on its thread pool so the server keeps answering meanwhile; the browser's
 * DecompressionStream). zstd through WebAssembly decoded no faster (46 against 42 ms for one gene of
 * a million cells), blocked the event loop while it did, and made a larger file (512 against 470 MB
 * on the 1M-cell benchmark).
 */
const MIRROR_COMPRESSOR = { name: "gzip", configuration: { level: 1 } } as const;

/** Non-zeros gathered per block of columns (32 MB of row indices and values): bounds the save's extra memory. */
const BLOCK_VALUES = 4 * 1024 * 1024;

/** Options of {@link writeXMirror}. */
export interface XMirrorOptions {
  signal?: AbortSignal;
  /** Non-zeros gathered per block of columns (default 4 Mi); small values exercise the block seams in tests. */
  blockValues?: number;
  /** Non-zeros per chunk (default {@link mirrorChunk}). */
  chunkValues?: number;
}

/** Chunk pairs (indices + values) being compressed and written at once. */
const MAX_CHUNKS_IN_FLIGHT = 4;

/** One block of columns `[j0, j1)` in CSC order: row indices and float32 values, column after column. */
interface ColumnBlock {
  readonly indices: Int32Array;
  readonly data: Float32Array;
}

/** Something that yields X's non-zeros in CSC order, a block of columns at a time. */
interface CscStream {
  /** Non-zeros of each column. */
  readonly counts: Float64Array;
  /** The block `[j0, j1)`; `into` buffers are large enough for its non-zeros. */
  block(j0: number, j1: number, into: ColumnBlock): ColumnBlock;
}

/** Where each column of the block `[j0, j1)` starts in the block's buffers (prefix sums of the counts). */
function blockStarts(counts: Float64Array, j0: number, j1: number): Float64Array {
  const next = new Float64Array(j1 - j0);
  for (let j = j0 + 1; j < j1; j++) next[j - j0] = next[j - j0 - 1]! + counts[j - 1]!;
  return next;
}

/** Numeric view of any typed array (bigint dtypes read through `Number`). */
function numberReader(a: ArrayLike<number | bigint>): (i: number) => number {
  if (a instanceof BigInt64Array || a instanceof BigUint64Array) return (i) => Number(a[i]!);
  const n = a as ArrayLike<number>;
  return (i) => n[i]!;
}

function denseStream(m: DenseArray): CscStream {
  const [rows, cols] = m.shape as [number, number];
  const at = numberReader(m.data as ArrayLike<number | bigint>);
  const counts = new Float64Array(cols);
  for (let i = 0; i < rows; i++) {
    const base = i * cols;
    for (let j = 0; j < cols; j++) if (at(base + j) !== 0) counts[j]!++;
  }
  return {
    counts,
    block(j0, j1, into) {
      const next = blockStarts(counts, j0, j1);
      for (let i = 0; i < rows; i++) {
        const base = i * cols;
        for (let j = j0; j < j1; j++) {
          const v = at(base + j);
          if (v !== 0) {
            const k = next[j - j0]!++;
            into.indices[k] = i;
            into.data[k] = v;
          }
        }
      }
      return into;
    },
  };
}

/** CSR with sorted column indices in every row: a cursor per row walks its row once over all blocks. */
function csrStream(m: SparseMatrix): CscStream | null {
  const [rows, cols] = m.shape;
  const indptr = numberReader(m.indptr as ArrayLike<number | bigint>);
  const indices = m.indices as ArrayLike<number>;
  const value = numberReader(m.data as ArrayLike<number | bigint>);
  const counts = new Float64Array(cols);
  const cursor = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const end = indptr(i + 1);
    cursor[i] = indptr(i);
    let prev = -1;
    for (let k = indptr(i); k < end; k++) {
      const j = indices[k]!;
      if (j <= prev) return null; // unsorted or duplicate indices: no cursor walk possible
      prev = j;
      counts[j]!++;
    }
  }
  return {
    counts,
    block(j0, j1, into) {
      const next = blockStarts(counts, j0, j1);
      for (let i = 0; i < rows; i++) {
        const end = indptr(i + 1);
        let k = cursor[i]!;
        while (k < end && indices[k]! < j1) {
          const at = next[indices[k]! - j0]!++;
          into.indices[at] = i;
          into.data[at] = value(k);
          k++;
        }
        cursor[i] = k;
      }
      return into;
    },
  };
}

function cscStream(m: SparseMatrix): CscStream {
  const cols = m.shape[1];
  const indptr = numberReader(m.indptr as ArrayLike<number | bigint>);
  const value = numberReader(m.data as ArrayLike<number | bigint>);
  const counts = new Float64Array(cols);
  for (let j = 0; j < cols; j++) counts[j] = indptr(j + 1) - indptr(j);
  return {
    counts,
    block(j0, j1, into) {
      const start = indptr(j0);
      const end = indptr(j1);
      for (let k = start; k < end; k++) {
        into.indices[k - start] = Number(m.indices[k]);
        into.data[k - start] = value(k);
      }
      return into;
    },
  };
}

function streamOf(m: Matrix): CscStream {
  if (m.kind === "dense") return denseStream(m);
  if (m.kind === "csc") return cscStream(m);
  // An unsorted CSR (rare: every writer we know sorts) is converted whole, as before.
  return csrStream(m) ?? cscStream(switchCompression(m));
}

/** Write chunk `k` (positions `[k·C, k·C + n)`) of a 1-d array. */
async function writeChunk(
  arr: zarr.Array<zarr.DataType, ListableWritableStore>,
  start: number,
  data: Int32Array | Float32Array,
): Promise<void> {
  await zarr.set(arr, [zarr.slice(start, start + data.length)], {
    data,
    shape: [data.length],
    stride: [1],
  } as never);
}

/**
 * Write the CSC mirror of `slot` as the AnnData `csc_matrix` group at `location`, streaming: the extra memory is
 * one block of columns (≤ 4 Mi non-zeros) and one chunk per array, whatever X's size.
 */
export async function writeXMirror(
  location: zarr.Location<ListableWritableStore>,
  slot: MatrixSlot,
  opts: XMirrorOptions = {},
): Promise<void> {
  const { signal, blockValues = BLOCK_VALUES } = opts;
  registerCodecs();
  const m = await loadMatrix(slot);
  if (m.shape.length !== 2) throw new Error(`X has ${m.shape.length} dimensions; a mirror needs 2`);
  const [rows, cols] = m.shape as [number, number];
  const stream = streamOf(m);
  let nnz = 0;
  const indptr = new BigInt64Array(cols + 1);
  for (let j = 0; j < cols; j++) {
    nnz += stream.counts[j]!;
    indptr[j + 1] = BigInt(nnz);
  }
  await zarr.create(location, {
    attributes: { "encoding-type": "csc_matrix", "encoding-version": "0.1.0", shape: [rows, cols] },
  });
  await writeZarrArray(location.resolve("indptr"), { dtype: "int64", shape: [cols + 1], data: indptr });
  const chunk = Math.max(1, Math.min(opts.chunkValues ?? mirrorChunk(nnz, cols), nnz));
  const create = (name: string, dtype: "int32" | "float32") =>
    zarr.create(location.resolve(name), {
      shape: [nnz],
      chunkShape: [chunk],
      dtype,
      codecs: numericCodecs(dtype, MIRROR_COMPRESSOR),
      fillValue: 0 as never,
      attributes: {},
    });
  const indicesArr = await create("indices", "int32");
  const dataArr = await create("data", "float32");
  if (nnz === 0) return;

  // The largest block's non-zeros size the gather buffers; a single column larger than BLOCK_VALUES is one block.
  let maxBlock = 0;
  const blocks: [number, number][] = [];
  for (let j0 = 0; j0 < cols; ) {
    let j1 = j0;
    let n = 0;
    while (j1 < cols && (j1 === j0 || n + stream.counts[j1]! <= blockValues)) n += stream.counts[j1++]!;
    blocks.push([j0, j1]);
    maxBlock = Math.max(maxBlock, n);
    j0 = j1;
  }
  const gather: ColumnBlock = { indices: new Int32Array(maxBlock), data: new Float32Array(maxBlock) };
  const newCarry = (): ColumnBlock => ({ indices: new Int32Array(chunk), data: new Float32Array(chunk) });
  let carry = newCarry();
  let filled = 0;
  let written = 0;
  // Chunks are compressed on zlib's thread pool: keep a few in flight (each owns its buffers) so both cores
  // work while this thread gathers the next block.
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  const flush = async (n: number) => {
    const [block, start] = [carry, written];
    carry = newCarry();
    written += n;
    filled = 0;
    const p = Promise.all([
      writeChunk(indicesArr, start, block.indices.subarray(0, n)),
      writeChunk(dataArr, start, block.data.subarray(0, n)),
    ]).then(
      () => {
        inFlight.delete(p);
      },
      (err) => {
        failure ??= err;
        inFlight.delete(p);
      },
    );
    inFlight.add(p);
    while (inFlight.size >= MAX_CHUNKS_IN_FLIGHT) await Promise.race(inFlight);
    if (failure) throw failure;
  };
  try {
    for (const [j0, j1] of blocks) {
      signal?.throwIfAborted();
      let n = 0;
      for (let j = j0; j < j1; j++) n += stream.counts[j]!;
      stream.block(j0, j1, gather);
      for (let k = 0; k < n; ) {
        const take = Math.min(chunk - filled, n - k);
        carry.indices.set(gather.indices.subarray(k, k + take), filled);
        carry.data.set(gather.data.subarray(k, k + take), filled);
        filled += take;
        k += take;
        if (filled === chunk) await flush(chunk);
      }
    }
    if (filled > 0) await flush(filled);
  } finally {
    await Promise.all(inFlight);
  }
  if (failure) throw failure;
}

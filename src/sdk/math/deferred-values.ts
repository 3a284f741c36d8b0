/**
 * Writing out a deferred chain of element-wise steps (`data/deferred.ts`): one pass over the base
 * matrix's stored values into a new float32 array, rows shared among threads, the CSR structure
 * (`indices`, `indptr`) shared with the base. Each value comes out as the steps one after the other
 * would have made it: the row division in float32 (`scaleRowsRange`, the kernel normalize_total
 * writes with), then the SIMD log1p (`log1pSimdRange`, the kernel log1p writes with).
 *
 * On the main thread (a field read, a save) the pass runs wholly on kernel threads, so the event
 * loop is not held for it; on a job's worker it takes the job's threads as any other pass.
 */
import { allocArray, type Matrix, type SparseMatrix } from "../data/arrays.js";
import {
  type DeferredMarker,
  type DeferredMatrix,
  type DeferredSteps,
  deferredMatrix,
} from "../data/deferred.js";
import { scaleRowsRange } from "./csr.js";
import { log1pModuleBytes, log1pSimdRange } from "./log1p-simd.js";
import { onSharedMemory, rowShares, runRowKernel } from "./row-threads.js";

/** Fewer stored values than this are written out on the calling thread (a thread's start costs more). */
const MIN_THREADED_VALUES = 1_000_000;

/** Where and with how many threads a chain is written out. */
export interface WriteOutOptions {
  /** Threads to share the rows among. */
  readonly threads: number;
  /** Keep the calling thread free (the main thread): every share of the rows runs on a kernel thread. */
  readonly offThread: boolean;
  readonly signal?: AbortSignal;
}

/** The rows r0…r1−1 of a chain into `out` (self-contained parts: the kernels run in threads as is). */
function writeRowsArgs(
  chain: DeferredMarker,
  out: Float32Array,
  r0: number,
  r1: number,
  bytes: Uint8Array<ArrayBuffer> | null,
) {
  const { base } = chain;
  const k0 = Number(base.indptr[r0]);
  const k1 = Number(base.indptr[r1]);
  if (!chain.log1p) return [base.indptr, base.data, out, chain.rowDivisors, r0, r1, 1];
  const rows = chain.rowDivisors ? { indptr: base.indptr, divisors: chain.rowDivisors, r0 } : null;
  return [base.data, out, k0, k1, bytes, chain.log1p.lb, null, 0, rows];
}

/** Write a chain's values out: a float32 CSR matrix with the base's structure. */
export async function writeOutDeferred(chain: DeferredMarker, opts: WriteOutOptions): Promise<Matrix> {
  const { base } = chain;
  const n = base.shape[0];
  const src = base.data as Float32Array;
  const out = allocArray("float32", src.length) as Float32Array;
  const bytes = chain.log1p ? log1pModuleBytes() : null;
  const kernel = chain.log1p ? log1pSimdRange : scaleRowsRange;
  const run = (r0: number, r1: number) =>
    (kernel as (...a: unknown[]) => void)(...writeRowsArgs(chain, out, r0, r1, bytes));
  const threaded =
    opts.threads > 1 && src.length >= MIN_THREADED_VALUES && onSharedMemory(src, out, base.indptr);
  if (!threaded) {
    // Small: on the calling thread, in steps of rows so an abort is seen.
    const step = Math.max(1, Math.floor((n * 65536) / Math.max(1, src.length)));
    for (let r = 0; r < n; r += step) {
      opts.signal?.throwIfAborted();
      run(r, Math.min(n, r + step));
    }
  } else {
    const shares = rowShares(base.indptr, n, opts.threads);
    // Off the calling thread: its share (part 0) is an empty range, the others take the rows.
    const bounds = opts.offThread ? [0, ...shares] : shares;
    await runRowKernel(
      kernel,
      bounds,
      (p) => writeRowsArgs(chain, out, bounds[p]!, bounds[p + 1]!, bytes),
      opts.signal,
    );
  }
  const m: SparseMatrix = {
    kind: "csr",
    dtype: "float32",
    shape: base.shape,
    data: out,
    indices: base.indices,
    indptr: base.indptr,
  };
  return m;
}

/**
 * A deferred matrix: `steps` on the float32 CSR `base`, written out with `opts` when first read. `id`
 * rebuilds a main-thread matrix on a worker (so values written there can be handed back).
 */
export function deferredValues(
  base: SparseMatrix,
  steps: DeferredSteps,
  opts: Omit<WriteOutOptions, "signal">,
  id?: number,
): DeferredMatrix {
  return deferredMatrix(base, steps, (chain) => writeOutDeferred(chain, opts), id);
}

/**
 * `meanVarBlocks` (column sums and sums of squares per block of rows, after `tf`) over a chain's values
 * computed on the fly instead of read: the base's stored values of each block, a block of them at a
 * time, divided by their row's divisor, through the SIMD log1p (`lb`: its base, or 0), then summed
 * as `meanVarBlocks` sums stored values (same order, same float32 values: the same sums). So a reader
 * that only needs column statistics (highly_variable_genes) takes them without writing the chain out.
 * Arguments as `meanVarBlocks`, then the chain's `divisors`, log1p's `logLb` and the module `bytes`.
 * Self-contained (it runs in kernel threads as is).
 */
export function meanVarChainBlocks(
  indptr: ArrayLike<number>,
  indices: ArrayLike<number>,
  data: Float32Array,
  rowMask: Uint8Array | null,
  bounds: Int32Array,
  q0: number,
  q1: number,
  cols: number,
  sums: Float64Array,
  sq: Float64Array,
  used: Int32Array,
  tf: number,
  lb: number,
  hasBase: number,
  f32: number,
  divisors: Float64Array | null,
  logLb: number,
  bytes: Uint8Array<ArrayBuffer>,
): void {
  type Kit = {
    log1p: (p: number, n: number) => number;
    log1pDiv: (p: number, n: number, d: number) => number;
    divide: (p: number, n: number, d: number) => void;
    block: Float32Array;
  };
  const g = globalThis as unknown as { __tesseraLog1pSimd?: Kit };
  let kit = g.__tesseraLog1pSimd;
  if (!kit) {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
    const ex = inst.exports as unknown as Omit<Kit, "block">;
    kit = {
      log1p: ex.log1p,
      log1pDiv: ex.log1pDiv,
      divide: ex.divide,
      block: new Float32Array(memory.buffer),
    };
    g.__tesseraLog1pSimd = kit;
  }
  const block = kit.block;
  const size = block.length;
  const blockBits = new Uint32Array(block.buffer, block.byteOffset, size);
  // The transform and its cache on the float32 value's bits, as `meanVarBlocks`.
  const f = (v: number): number => (tf ? Math.fround(Math.expm1(hasBase ? Math.fround(v * lb) : v)) : v);
  const square = (v: number): number => (f32 ? Math.fround(v * v) : v * v);
  const mask = 4095;
  const keys = new Uint32Array(mask + 1);
  const v0 = f(0);
  const vals = new Float64Array(mask + 1).fill(v0);
  const sqs = new Float64Array(mask + 1).fill(square(v0));
  for (let q = q0; q < q1; q++) {
    const base = q * cols;
    const r0 = bounds[q] as number;
    const r1 = bounds[q + 1] as number;
    let n = 0;
    for (let i = r0; i < r1; i++) if (!rowMask || rowMask[i]) n++;
    used[q] = n;
    const k1 = indptr[r1] as number;
    // The row of the next value, its end, divisor and whether it counts.
    let row = r0;
    let rowEnd = indptr[row + 1] as number;
    let divisor = divisors ? (divisors[row] as number) : 1;
    let counted = !rowMask || rowMask[row] ? 1 : 0;
    for (let k0 = indptr[r0] as number; k0 < k1; k0 += size) {
      const m = Math.min(size, k1 - k0);
      // The chain's steps on this block: division (float32), then log1p in SIMD, in place.
      block.set(data.subarray(k0, k0 + m));
      if (divisors) {
        // Each row's stretch of the block divided by its divisor (SIMD, a call per row).
        let r = row;
        let e = rowEnd;
        let d = divisor;
        for (let j = 0; j < m; ) {
          while (k0 + j >= e) {
            r++;
            e = indptr[r + 1] as number;
            d = divisors[r] as number;
          }
          const stop = Math.min(m, e - k0);
          kit.divide(j * 4, stop - j, d);
          j = stop;
        }
      }
      const n4 = (m + 3) & ~3;
      for (let j = m; j < n4; j++) block[j] = 0;
      if (logLb === 0) kit.log1p(0, n4);
      else kit.log1pDiv(0, n4, logLb);
      // Then the sums, value by value in the rows' order, skipping rows outside the mask.
      for (let j = 0; j < m; j++) {
        while (k0 + j >= rowEnd) {
          row++;
          rowEnd = indptr[row + 1] as number;
          divisor = divisors ? (divisors[row] as number) : 1;
          counted = !rowMask || rowMask[row] ? 1 : 0;
        }
        if (!counted) continue;
        const b = blockBits[j] as number;
        const h = (b ^ (b >>> 12) ^ (b >>> 24)) & mask;
        if (keys[h] !== b) {
          const v = f(block[j] as number);
          keys[h] = b;
          vals[h] = v;
          sqs[h] = square(v);
        }
        const c = base + (indices[k0 + j] as number);
        sums[c] = (sums[c] as number) + (vals[h] as number);
        sq[c] = (sq[c] as number) + (sqs[h] as number);
      }
    }
  }
}

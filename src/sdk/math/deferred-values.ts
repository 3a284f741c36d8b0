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
 * computed on the fly instead of read, so a reader that only needs column statistics
 * (highly_variable_genes) takes them without writing the chain out. Counts repeat within a row, and a
 * row's value depends only on its count: each row's distinct counts (whole numbers below 4096) go
 * through the chain's steps once — divided by the row's divisor in float32, then the SIMD log1p (`lb`:
 * its base, or 0), then `tf` — and the row's values are summed from that small table, in the row's
 * order, as `meanVarBlocks` sums stored values (the same float32 values: the same sums). A row holding
 * other values (fractions, large counts) takes each of its values through the steps.
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
  const f = (v: number): number => (tf ? Math.fround(Math.expm1(hasBase ? Math.fround(v * lb) : v)) : v);
  const square = (v: number): number => (f32 ? Math.fround(v * v) : v * v);
  // The chain's steps on block[0…n): log1p in place (the division is done by the caller).
  const logBlock = (n: number) => {
    const n4 = (n + 3) & ~3;
    for (let j = n; j < n4; j++) block[j] = 0;
    if (logLb === 0) kit.log1p(0, n4);
    else kit.log1pDiv(0, n4, logLb);
  };
  // A row's table: count → transformed value and its square, valid where stamp = the row + 1.
  const K = 4096;
  const stamp = new Int32Array(K);
  const tabV = new Float64Array(K);
  const tabS = new Float64Array(K);
  const distinct = new Int32Array(K);
  for (let q = q0; q < q1; q++) {
    const base = q * cols;
    let n = 0;
    for (let i = bounds[q] as number; i < (bounds[q + 1] as number); i++) {
      if (rowMask && !rowMask[i]) continue;
      n++;
      const d = divisors ? (divisors[i] as number) : 1;
      const k0 = indptr[i] as number;
      const k1 = indptr[i + 1] as number;
      const tag = i + 1;
      // Pass 1: the row's distinct counts, divided, into the block (a row of other values: none).
      let nd = 0;
      let whole = true;
      for (let k = k0; k < k1; k++) {
        const c = data[k] as number;
        const ci = c | 0;
        if (ci !== c || ci < 0 || ci >= K) {
          whole = false;
          break;
        }
        if (stamp[ci] !== tag) {
          stamp[ci] = tag;
          distinct[nd] = ci;
          block[nd++] = c / d;
        }
      }
      if (whole) {
        logBlock(nd);
        for (let t = 0; t < nd; t++) {
          const v = f(block[t] as number);
          const ci = distinct[t] as number;
          tabV[ci] = v;
          tabS[ci] = square(v);
        }
        // Pass 2: the sums, in the row's order.
        for (let k = k0; k < k1; k++) {
          const ci = (data[k] as number) | 0;
          const c = base + (indices[k] as number);
          sums[c] = (sums[c] as number) + (tabV[ci] as number);
          sq[c] = (sq[c] as number) + (tabS[ci] as number);
        }
      } else {
        // Other values: every value through the steps, a block at a time.
        for (let s0 = k0; s0 < k1; s0 += size) {
          const m = Math.min(size, k1 - s0);
          for (let j = 0; j < m; j++) block[j] = (data[s0 + j] as number) / d;
          logBlock(m);
          for (let j = 0; j < m; j++) {
            const v = f(block[j] as number);
            const c = base + (indices[s0 + j] as number);
            sums[c] = (sums[c] as number) + v;
            sq[c] = (sq[c] as number) + square(v);
          }
        }
      }
    }
    used[q] = n;
  }
}

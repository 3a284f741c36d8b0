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

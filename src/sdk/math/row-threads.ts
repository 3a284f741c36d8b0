/**
 * Sharing row-wise work on a matrix among threads: the rows are split into contiguous ranges of like
 * numbers of stored entries, the calling thread takes the first range and plain worker threads the
 * others. A kernel is one self-contained function (no outside references), sent to each worker as
 * its source text, so nothing needs building or resolving; its array arguments must live on shared
 * memory (Tessera's large arrays do), which the workers then read and write in place.
 */
import { Worker } from "node:worker_threads";

/** Whether every array lives on a SharedArrayBuffer (so worker threads see it without a copy). */
export function onSharedMemory(...arrays: ArrayLike<unknown>[]): boolean {
  if (typeof SharedArrayBuffer === "undefined") return false;
  return arrays.every((a) => (a as { buffer?: unknown }).buffer instanceof SharedArrayBuffer);
}

/**
 * Row boundaries [0, b1, …, n] cutting rows 0…n−1 into `parts` ranges of about equal stored entries
 * (by binary search on the CSR `indptr`).
 */
export function rowShares(indptr: ArrayLike<number | bigint>, n: number, parts: number): number[] {
  const total = Number(indptr[n]);
  const bounds = [0];
  for (let p = 1; p < parts; p++) {
    const target = (total * p) / parts;
    let lo = bounds[p - 1] as number;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (Number(indptr[mid]) < target) lo = mid + 1;
      else hi = mid;
    }
    bounds.push(lo);
  }
  bounds.push(n);
  return bounds;
}

/**
 * Run `kernel(...argsFor(p))` for every range p of `bounds` (length parts + 1): range 0 on this
 * thread, the others in worker threads, all at once. Resolves when all have finished; rejects with a
 * worker's error; an abort stops the workers.
 */
export async function runRowKernel(
  // biome-ignore lint/suspicious/noExplicitAny: kernels take typed arrays and numbers of any shape.
  kernel: (...args: any[]) => void,
  bounds: readonly number[],
  argsFor: (part: number) => unknown[],
  signal?: AbortSignal,
): Promise<void> {
  await runKernelThreads(kernel, bounds.length - 1, argsFor, signal);
}

/**
 * Run `kernel(...argsFor(p))` for p = 0…parts−1: part 0 on this thread, the others in worker threads
 * started first, so parts may wait on each other (with `Atomics.wait` on shared memory) while they run.
 * Part 0's arguments may hold functions (a progress callback, an abort check); the others' must be
 * cloneable. Resolves when all have finished. When part 0 fails because a worker did, the worker's
 * error is the one thrown. Parts that wait on each other pass `failure`: a worker that throws (even
 * before the kernel's own code runs) sets `words[state] = 2` and wakes the waiters on `words[wake]`, so
 * the others can give up instead of waiting for it forever.
 */
export async function runKernelThreads(
  // biome-ignore lint/suspicious/noExplicitAny: kernels take typed arrays and numbers of any shape.
  kernel: (...args: any[]) => void,
  parts: number,
  argsFor: (part: number) => unknown[],
  signal?: AbortSignal,
  failure?: { words: Int32Array; state: number; wake: number },
): Promise<void> {
  // `__name` is the helper esbuild (tsx, vitest) wraps named inner functions in when keeping names;
  // the kernel's text may call it, so the worker defines it as the identity.
  const source = `const { parentPort, workerData } = require("node:worker_threads");
const __name = (f) => f;
const [args, failure] = workerData;
try {
  const kernel = (${kernel.toString()});
  kernel(...args);
} catch (e) {
  if (failure) {
    Atomics.store(failure.words, failure.state, 2);
    Atomics.notify(failure.words, failure.wake);
  }
  throw e;
}
parentPort.postMessage("done");`;
  const workers: Worker[] = [];
  const done: Promise<void>[] = [];
  for (let p = 1; p < parts; p++) {
    const w = new Worker(source, { eval: true, workerData: [argsFor(p), failure ?? null] });
    workers.push(w);
    done.push(
      new Promise<void>((resolve, reject) => {
        w.once("message", () => resolve());
        w.once("error", reject);
        w.once("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`kernel worker exited with ${code}`)),
        );
      }),
    );
  }
  const stop = () => {
    for (const w of workers) void w.terminate();
  };
  try {
    try {
      // No terminating while part 0 runs: an abort seen inside it (a synchronous check) must let the
      // other parts reach the barrier where they learn to stop, not leave part 0 waiting for them.
      kernel(...argsFor(0));
    } catch (e) {
      // A teammate's failure usually surfaces here first (as a wait that gave up): report its cause.
      const settled = await Promise.race([
        Promise.allSettled(done),
        new Promise<null>((r) => setTimeout(() => r(null), 1000)),
      ]);
      const failed = settled?.find((s): s is PromiseRejectedResult => s.status === "rejected");
      throw failed ? failed.reason : e;
    }
    if (signal?.aborted) {
      // Stopped workers "fail"; the abort is the answer.
      stop();
      await Promise.allSettled(done);
      signal.throwIfAborted();
    }
    signal?.addEventListener("abort", stop, { once: true });
    await Promise.all(done).catch((e) => {
      signal?.throwIfAborted();
      throw e;
    });
    signal?.throwIfAborted();
  } finally {
    signal?.removeEventListener("abort", stop);
    stop();
  }
}

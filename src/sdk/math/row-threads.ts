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
  const source = `const { parentPort, workerData } = require("node:worker_threads");
const kernel = (${kernel.toString()});
kernel(...workerData);
parentPort.postMessage("done");`;
  const workers: Worker[] = [];
  const done: Promise<void>[] = [];
  for (let p = 1; p < bounds.length - 1; p++) {
    const w = new Worker(source, { eval: true, workerData: argsFor(p) });
    workers.push(w);
    done.push(
      new Promise<void>((resolve, reject) => {
        w.once("message", () => resolve());
        w.once("error", reject);
        w.once("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`row worker exited with ${code}`)),
        );
      }),
    );
  }
  const stop = () => {
    for (const w of workers) void w.terminate();
  };
  signal?.addEventListener("abort", stop, { once: true });
  try {
    kernel(...argsFor(0));
    await Promise.all(done);
    signal?.throwIfAborted();
  } finally {
    signal?.removeEventListener("abort", stop);
    stop();
  }
}

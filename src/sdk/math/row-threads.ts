/**
 * Sharing row-wise work on a matrix among threads: the rows are split into contiguous ranges of like
 * numbers of stored entries, the calling thread takes the first range and plain worker threads the
 * others. A kernel is one self-contained function (no outside references), sent to each worker as
 * its source text, so nothing needs building or resolving (the threads stay a short while for the
 * next call); its array arguments must live on shared
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
 * Kernel threads are kept between calls: starting a worker costs ~30–50 ms of CPU (more under tsx,
 * whose loader a worker would inherit), which was a third of a whole `log1p` at 50,000 cells. An idle
 * thread exits after this long, which also lets go of the shared arrays its last kernel was given
 * (a thread keeps them reachable until it collects garbage or exits). 10 s, as the compute pool's
 * idle workers: each pool worker has its own kernel threads, and with 1.5 s the next job's worker
 * often found them gone (normalize_total at 50k: 92 ms with a thread start, 46 ms without).
 */
const IDLE_EXIT_MS = 10_000;

/**
 * The source of a kernel thread: it runs the kernels it is sent (compiled once per source text) and
 * answers each with `{ ok }` or the error. `__name` is the helper esbuild (tsx, vitest) wraps named inner
 * functions in when keeping names; a kernel's text may call it, so it is defined as the identity.
 */
const THREAD_SOURCE = `const { parentPort } = require("node:worker_threads");
globalThis.__name = (f) => f;
const compiled = new Map();
parentPort.on("message", (m) => {
  try {
    let kernel = compiled.get(m.source);
    if (!kernel) {
      kernel = new Function("return (" + m.source + ")")();
      if (compiled.size > 64) compiled.clear();
      compiled.set(m.source, kernel);
    }
    kernel(...m.args);
    parentPort.postMessage({ ok: true });
  } catch (e) {
    if (m.failure) {
      Atomics.store(m.failure.words, m.failure.state, 2);
      Atomics.notify(m.failure.words, m.failure.wake);
    }
    const err = e instanceof Error ? e : new Error(String(e));
    parentPort.postMessage({ ok: false, name: err.name, message: err.message, stack: err.stack });
  }
});`;

/** Idle kernel threads of this thread, each with the timer that ends it. */
const idleThreads: { worker: Worker; timer: NodeJS.Timeout }[] = [];

/** An idle kernel thread, or a new one (plain Node: no loader flags, the kernels are plain JavaScript). */
function takeThread(): Worker {
  const idle = idleThreads.pop();
  if (idle) {
    clearTimeout(idle.timer);
    idle.worker.ref();
    return idle.worker;
  }
  const w = new Worker(THREAD_SOURCE, { eval: true, execArgv: [] });
  // A thread that dies while idle (it should not) just leaves the list.
  w.on("error", () => undefined);
  w.once("exit", () => {
    const at = idleThreads.findIndex((t) => t.worker === w);
    if (at >= 0) {
      clearTimeout(idleThreads[at]!.timer);
      idleThreads.splice(at, 1);
    }
  });
  return w;
}

/** Put a thread that finished its kernel back (it exits after `IDLE_EXIT_MS` unused). */
function returnThread(w: Worker): void {
  w.unref();
  const timer = setTimeout(() => {
    // Out of the list first: a thread being terminated must not be handed a kernel.
    const at = idleThreads.findIndex((t) => t.worker === w);
    if (at >= 0) idleThreads.splice(at, 1);
    void w.terminate();
  }, IDLE_EXIT_MS);
  timer.unref();
  idleThreads.push({ worker: w, timer });
}

/** Run one kernel on thread `w`; settles with its answer, or rejects if the thread dies. */
function runOnThread(
  w: Worker,
  source: string,
  args: unknown[],
  failure: { words: Int32Array; state: number; wake: number } | null,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMessage = (m: { ok: boolean; name?: string; message?: string; stack?: string }) => {
      w.off("exit", onExit);
      if (m.ok) resolve();
      else {
        const e = new Error(m.message);
        if (m.name) e.name = m.name;
        if (m.stack) e.stack = m.stack;
        reject(e);
      }
    };
    const onExit = (code: number) => {
      w.off("message", onMessage);
      reject(new Error(`kernel worker exited with ${code}`));
    };
    w.once("message", onMessage);
    w.once("exit", onExit);
    try {
      w.postMessage({ source, args, failure });
    } catch (e) {
      w.off("message", onMessage);
      w.off("exit", onExit);
      reject(e);
    }
  });
}

/**
 * Run `kernel(...argsFor(p))` for p = 0…parts−1: part 0 on this thread, the others on kernel threads
 * handed their part first, so parts may wait on each other (with `Atomics.wait` on shared memory) while
 * they run. Part 0's arguments may hold functions (a progress callback, an abort check); the others'
 * must be cloneable. Resolves when all have finished. When part 0 fails because a worker did, the
 * worker's error is the one thrown. Parts that wait on each other pass `failure`: a part that throws
 * sets `words[state] = 2` and wakes the waiters on `words[wake]`, so the others can give up instead of
 * waiting for it forever. Threads are reused between calls; an abort terminates the call's threads.
 */
export async function runKernelThreads(
  // biome-ignore lint/suspicious/noExplicitAny: kernels take typed arrays and numbers of any shape.
  kernel: (...args: any[]) => void,
  parts: number,
  argsFor: (part: number) => unknown[],
  signal?: AbortSignal,
  failure?: { words: Int32Array; state: number; wake: number },
): Promise<void> {
  const source = kernel.toString();
  const workers: Worker[] = [];
  const done: Promise<void>[] = [];
  // Per thread: "running", then "answered" (it is free again, even if its kernel threw) or "dead".
  const state: ("running" | "answered" | "dead")[] = [];
  for (let p = 1; p < parts; p++) {
    const w = takeThread();
    const i = workers.push(w) - 1;
    state.push("running");
    const run = runOnThread(w, source, argsFor(p), failure ?? null);
    run.then(
      () => {
        state[i] = "answered";
      },
      (e: Error) => {
        state[i] = /^kernel worker exited/.test(e.message) ? "dead" : "answered";
      },
    );
    done.push(run);
  }
  let stopped = false;
  const stop = () => {
    stopped = true;
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
    // Threads that answered go back for the next call; any still running (a failure elsewhere left
    // it waiting) or told to stop is ended.
    for (let i = 0; i < workers.length; i++) {
      if (!stopped && state[i] === "answered") returnThread(workers[i]!);
      else void workers[i]!.terminate();
    }
  }
}

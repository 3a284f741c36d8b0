/**
 * WorkerPool: runs operations on worker threads (piscina). The committed data goes in zero-copy
 * (SharedArrayBuffers, see `transfer.ts`); the result comes back by transfer.
 *
 * How a job ends:
 * - the operation returns → `run` resolves with its result (raster markers re-attached);
 * - the operation throws → `OperationError` with the operation's message (its worker stack as `stack`);
 * - the thread dies (process.exit, an uncaught error, out of memory) → `WorkerCrashError` naming the
 *   operation; piscina replaces the worker and other jobs carry on;
 * - the caller's signal fires → `JobCancelledError` (name "AbortError");
 * - it runs longer than `longRunningS` → `JobTimeoutError` (message names TESSERA_LONG_RUNNING_S).
 *
 * Stopping is cooperative first (the op sees `ctx.signal`), then forced: after `abortGraceMs` the
 * thread is terminated. Read operations run on the main thread instead (`inlineReads`). `run` settles only once the job's thread has let go of it, so a session's next
 * job never overlaps a cancelled one.
 */
import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { provideDeferred } from "../data/deferred.js";
import { Rng } from "../math/rng.js";
import { resolveWorkerEntry } from "./entry.js";
import { JobCancelledError, JobTimeoutError, OperationError, WorkerCrashError } from "./errors.js";
import { longRunningSFromEnv, poolThreadsFromEnv } from "./limits.js";
import type { OpContext } from "./operation.js";
import {
  ABORT_INDEX,
  type ControlMessage,
  type JobMessage,
  type TaskEnvelope,
  type TaskOutcome,
  type WorkerTask,
} from "./task.js";
import { prepareForWorker, unpackResult } from "./transfer.js";

export type { WorkerTask } from "./task.js";

/** Options of a WorkerPool. */
export interface WorkerPoolOptions {
  /** Worker threads (default `TESSERA_COMPUTE_POOL_WORKERS`, else the cgroup-aware CPU count). */
  readonly threads?: number;
  /** Watchdog limit in seconds (default `TESSERA_LONG_RUNNING_S`, else 120); 0 or Infinity disables it. */
  readonly longRunningS?: number;
  /**
   * Threads started eagerly and kept when idle (default 0). A worker that ran a job keeps that job's shared
   * arrays resident until its thread exits (a collection in the worker does not give them back: measured
   * with bench/session-memory.ts, RSS stayed +400 MB after closing a 20,000 × 2,000 scaled session while a
   * worker lived, and fell back to the start once it exited), so idle workers stop.
   */
  readonly minThreads?: number;
  /** Idle time before threads above `minThreads` stop, ms (default 10 000: memory back soon after the last job). */
  readonly idleTimeoutMs?: number;
  /** Time a cancelled or timed-out job gets to stop on its own before its thread is terminated, ms (default 2000). */
  readonly abortGraceMs?: number;
  /**
   * Run `read`-effect operations on the main thread (default true). A reader's result holds live store
   * handles (lazy matrices, raster sources) that cannot cross a thread boundary; reading is I/O-bound
   * and async, so running it in-process costs the event loop little and keeps the result lazy.
   */
  readonly inlineReads?: boolean;
  /** V8 old-generation heap cap per worker in MB (an operation above it crashes its worker cleanly). */
  readonly maxOldGenerationSizeMb?: number;
  /** Worker entry override (path or URL); default: resolved for source vs built (see `entry.ts`). */
  readonly workerFile?: string | URL;
}

/** Callbacks and controls of one job. */
export interface RunHooks {
  /** Cancels the job (queued in the pool or running). */
  readonly signal?: AbortSignal;
  /** Progress reports, in order. */
  onProgress?(fraction: number, message?: string): void;
  /** Log lines, in order (all delivered before `run` settles). */
  onLog?(text: string): void;
  /** The worker has begun the job. */
  onStart?(): void;
  /**
   * Reads a gene from the session's column mirror for the job (`OpContext.mirrorGene`); null or
   * absent: the job reads X itself.
   */
  geneReader?(table: string, gene: string): Promise<Float32Array | null>;
  /** Name of the operation in messages (default: the export name). */
  readonly name?: string;
}

/** A point-in-time picture of the pool. */
export interface PoolStats {
  readonly threads: number;
  /** Worker threads alive now. */
  readonly workers: number;
  /** Jobs handed to the pool and not yet settled. */
  readonly active: number;
  /** Jobs waiting for a free thread inside the pool. */
  readonly waiting: number;
  readonly completed: number;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** The worker pool (see the module comment). */
export class WorkerPool {
  /** Maximum worker threads. */
  readonly threads: number;
  /** Watchdog limit, seconds (Infinity when disabled). */
  readonly longRunningS: number;
  /** How the worker entry was resolved (`source` under vitest/tsx, `built` from dist). */
  readonly mode: "source" | "built";
  private readonly piscina: Piscina;
  private readonly abortGraceMs: number;
  private readonly inlineReads: boolean;
  private active = 0;
  private destroyed = false;

  constructor(opts: WorkerPoolOptions = {}) {
    this.threads = opts.threads ?? poolThreadsFromEnv();
    if (!Number.isInteger(this.threads) || this.threads < 1) {
      throw new Error(`WorkerPool: threads must be a positive integer, got ${this.threads}`);
    }
    const limit = opts.longRunningS ?? longRunningSFromEnv();
    this.longRunningS = limit > 0 ? limit : Number.POSITIVE_INFINITY;
    this.abortGraceMs = opts.abortGraceMs ?? 2000;
    this.inlineReads = opts.inlineReads ?? true;
    const entry = resolveWorkerEntry(opts.workerFile);
    this.mode = entry.mode;
    this.piscina = new Piscina({
      filename: entry.filename,
      execArgv: entry.execArgv,
      maxThreads: this.threads,
      minThreads: Math.min(opts.minThreads ?? 0, this.threads),
      idleTimeout: opts.idleTimeoutMs ?? 10_000,
      concurrentTasksPerWorker: 1,
      recordTiming: false,
      ...(opts.maxOldGenerationSizeMb
        ? { resourceLimits: { maxOldGenerationSizeMb: opts.maxOldGenerationSizeMb } }
        : {}),
    });
    // Without a listener, an error of an idle worker (a stray timer throwing after its job) would be
    // an unhandled 'error' event and take the whole process down. Piscina replaces the worker.
    this.piscina.on("error", (err: unknown) => {
      console.error("tessera worker pool: a worker failed outside any job:", err);
    });
  }

  /** Threads alive, jobs in flight and waiting. */
  get stats(): PoolStats {
    return {
      threads: this.threads,
      workers: this.piscina.threads.length,
      active: this.active,
      waiting: this.piscina.queueSize,
      completed: this.piscina.completed,
    };
  }

  /**
   * Run `task` on a worker thread. `task.sdata` is prepared with `prepareForWorker` (a no-op walk if
   * the caller did it already). Settles as the module comment describes.
   */
  async run(task: WorkerTask, hooks: RunHooks = {}): Promise<unknown> {
    const name = hooks.name ?? task.export;
    if (this.destroyed) throw new Error(`worker pool is shut down; cannot run ${name}`);
    if (hooks.signal?.aborted) throw new JobCancelledError(name);
    if (task.effect === "read" && this.inlineReads) return this.runInline(task, hooks, name);
    const sdata = await prepareForWorker(task.sdata);
    if (hooks.signal?.aborted) throw new JobCancelledError(name);

    const { port1, port2 } = new MessageChannel();
    const abortFlag = new Int32Array(new SharedArrayBuffer(4));
    const kill = new AbortController();
    let started = false;
    let stopReason: Error | null = null;
    let watchdog: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    let ended!: () => void;
    const endSeen = new Promise<void>((resolve) => {
      ended = resolve;
    });

    const requestStop = (reason: Error) => {
      if (stopReason) return;
      stopReason = reason;
      if (!started) {
        // Still waiting in piscina's queue (or about to start): drop or terminate at once.
        kill.abort(reason);
        return;
      }
      Atomics.store(abortFlag, ABORT_INDEX, 1);
      port1.postMessage({ type: "abort", reason: reason.message } satisfies ControlMessage);
      grace = setTimeout(() => kill.abort(reason), this.abortGraceMs);
    };
    const onAbort = () => requestStop(new JobCancelledError(name));
    hooks.signal?.addEventListener("abort", onAbort, { once: true });

    const safe = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        console.error(`tessera worker pool: a hook of ${name} threw:`, err);
      }
    };
    // A gene from the mirror, copied to the worker (the reader's cache keeps its own array).
    const answerGene = async (id: number, table: string, gene: string) => {
      let values: Float32Array | null = null;
      try {
        values = (await hooks.geneReader?.(table, gene)) ?? null;
      } catch {
        values = null; // the job reads X instead
      }
      try {
        port1.postMessage({ type: "gene", id, values } satisfies ControlMessage);
      } catch {
        // the job has ended and its port is closed
      }
    };
    port1.on("message", (m: JobMessage) => {
      switch (m.type) {
        case "start":
          started = true;
          if (Number.isFinite(this.longRunningS)) {
            watchdog = setTimeout(
              () => requestStop(new JobTimeoutError(name, this.longRunningS)),
              this.longRunningS * 1000,
            );
          }
          if (hooks.onStart) safe(() => hooks.onStart!());
          break;
        case "progress":
          if (hooks.onProgress) safe(() => hooks.onProgress!(m.fraction, m.message));
          break;
        case "log":
          if (hooks.onLog) safe(() => hooks.onLog!(m.text));
          break;
        case "gene":
          void answerGene(m.id, m.table, m.gene);
          break;
        case "end":
          ended();
          break;
      }
    });

    const envelope: TaskEnvelope = { task: { ...task, sdata }, port: port2, abortFlag, name };
    this.active++;
    try {
      let outcome: TaskOutcome;
      try {
        outcome = (await this.piscina.run(envelope, {
          transferList: [port2] as never,
          signal: kill.signal,
        })) as TaskOutcome;
      } catch (err) {
        if (stopReason) throw stopReason;
        if (this.destroyed) throw new Error(`worker pool shut down while running ${name}`);
        throw new WorkerCrashError(name, err);
      }
      // The job's messages travel on their own port: let the last of them arrive before settling.
      await Promise.race([endSeen, delay(1000)]);
      if (stopReason) throw stopReason;
      if (!outcome.ok) {
        throw new OperationError(name, outcome.error.message, outcome.error.name, outcome.error.stack);
      }
      for (const w of outcome.written ?? []) provideDeferred(w.id, w.matrix);
      return unpackResult(outcome.value);
    } finally {
      this.active--;
      clearTimeout(watchdog);
      clearTimeout(grace);
      hooks.signal?.removeEventListener("abort", onAbort);
      port1.close();
    }
  }

  /**
   * Run a task on this thread (read operations, see `inlineReads`), with the same hooks, errors,
   * cancellation and watchdog as a worker job. An operation that ignores its signal is abandoned:
   * `run` rejects at once and whatever it still produces is dropped.
   */
  private async runInline(task: WorkerTask, hooks: RunHooks, name: string): Promise<unknown> {
    const controller = new AbortController();
    let stopReason: Error | null = null;
    let rejectStop!: (e: Error) => void;
    const stopped = new Promise<never>((_, reject) => {
      rejectStop = reject;
    });
    stopped.catch(() => {});
    const requestStop = (reason: Error) => {
      if (stopReason) return;
      stopReason = reason;
      controller.abort(reason);
      rejectStop(reason);
    };
    const onAbort = () => requestStop(new JobCancelledError(name));
    hooks.signal?.addEventListener("abort", onAbort, { once: true });
    const watchdog = Number.isFinite(this.longRunningS)
      ? setTimeout(() => requestStop(new JobTimeoutError(name, this.longRunningS)), this.longRunningS * 1000)
      : undefined;
    const safe = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        console.error(`tessera worker pool: a hook of ${name} threw:`, err);
      }
    };
    this.active++;
    try {
      const run = (async () => {
        const mod = (await import(task.module)) as Record<string, unknown>;
        const fn = mod[task.export];
        if (typeof fn !== "function") {
          throw new Error(`${name}: module ${task.module} has no exported function "${task.export}"`);
        }
        const ctx: OpContext = {
          table: task.table,
          signal: controller.signal,
          rng: new Rng(task.seed),
          threads: task.threads,
          progress: (fraction, message) => {
            if (stopReason || !hooks.onProgress) return;
            const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
            safe(() => hooks.onProgress!(f, message === undefined ? undefined : String(message)));
          },
          log: (text) => {
            if (!stopReason && hooks.onLog) safe(() => hooks.onLog!(String(text)));
          },
          mirrorGene: async (table, gene) => (await hooks.geneReader?.(table, gene)) ?? null,
        };
        if (hooks.onStart) safe(() => hooks.onStart!());
        return (await fn(task.sdata, task.params, ctx)) as unknown;
      })();
      run.catch(() => {});
      try {
        return await Promise.race([run, stopped]);
      } catch (err) {
        if (stopReason) throw stopReason;
        const e = err instanceof Error ? err : new Error(String(err));
        throw new OperationError(name, e.message, e.name, e.stack);
      }
    } finally {
      this.active--;
      clearTimeout(watchdog);
      hooks.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Stop every worker; jobs still running reject. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.piscina.destroy();
  }
}

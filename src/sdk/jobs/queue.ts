/**
 * SerialQueue: one session's job queue. Jobs run one at a time in FIFO order; queues of different
 * sessions are independent, so sessions run concurrently (the worker pool bounds the total).
 *
 * A queued job can be cancelled (it is removed and never runs); a running one is stopped through the
 * AbortSignal its `run` receives, via `abort(id)`. A job's own failure is its business: `run` should
 * record it; a rejection is caught so the queue always moves on.
 */

/** A queued job's body; it receives the signal that `abort(id)` fires. */
export type JobRunner = (signal: AbortSignal) => Promise<void>;

interface Entry {
  readonly id: string;
  readonly run: JobRunner;
  readonly controller: AbortController;
}

/** Options of a SerialQueue. */
export interface SerialQueueOptions {
  /** Called when a job's `run` rejects (default: `console.error`); the queue continues either way. */
  readonly onError?: (id: string, error: unknown) => void;
}

/** A FIFO queue running one job at a time (see the module comment). */
export class SerialQueue {
  private readonly waiting: Entry[] = [];
  private current: Entry | null = null;
  private idleWaiters: (() => void)[] = [];
  private readonly onError: (id: string, error: unknown) => void;

  constructor(opts: SerialQueueOptions = {}) {
    this.onError =
      opts.onError ?? ((id, error) => console.error(`job ${id} failed outside its handler:`, error));
  }

  /** Append a job; it starts at once when the queue is empty. Ids must be unique within the queue. */
  push(id: string, run: JobRunner): void {
    if (this.position(id) !== null) throw new Error(`SerialQueue: job ${id} is already queued or running`);
    this.waiting.push({ id, run, controller: new AbortController() });
    this.pump();
  }

  /** Remove a queued job that has not started: true if it was queued and is removed. */
  cancel(id: string): boolean {
    const i = this.waiting.findIndex((e) => e.id === id);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    this.settleIdle();
    return true;
  }

  /** Abort the running job with `reason` (its runner sees the signal fire): true if `id` was running. */
  abort(id: string, reason?: unknown): boolean {
    if (this.current?.id !== id) return false;
    this.current.controller.abort(reason);
    return true;
  }

  /** 0 when running, 1.. for the place in line, null when unknown (finished, cancelled or never pushed). */
  position(id: string): number | null {
    if (this.current?.id === id) return 0;
    const i = this.waiting.findIndex((e) => e.id === id);
    return i < 0 ? null : i + 1;
  }

  /** Id of the running job, if any. */
  get running(): string | null {
    return this.current?.id ?? null;
  }

  /** Ids of the waiting jobs, next first. */
  get queued(): string[] {
    return this.waiting.map((e) => e.id);
  }

  /** Number of jobs running or waiting. */
  get size(): number {
    return this.waiting.length + (this.current ? 1 : 0);
  }

  /** Resolves when nothing is running or waiting (at once if already so). */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    if (this.current) return;
    const next = this.waiting.shift();
    if (!next) {
      this.settleIdle();
      return;
    }
    this.current = next;
    // Start on a fresh microtask, so `push` never runs user code synchronously.
    void Promise.resolve()
      .then(() => next.run(next.controller.signal))
      .catch((error: unknown) => {
        try {
          this.onError(next.id, error);
        } catch {
          // Reporting must never stall the queue.
        }
      })
      .finally(() => {
        this.current = null;
        this.pump();
      });
  }

  private settleIdle(): void {
    if (this.size !== 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

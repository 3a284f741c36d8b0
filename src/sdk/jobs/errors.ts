/**
 * The ways a pool job ends other than with a result. Sessions tell them apart by `name`:
 * `AbortError` → the job is cancelled; anything else → the job failed with `message`.
 */

/** The job was cancelled (its signal fired). `name` is "AbortError", as for DOM aborts. */
export class JobCancelledError extends Error {
  override readonly name = "AbortError";
  constructor(readonly operation: string) {
    super(`${operation} was cancelled`);
  }
}

/** The long-running watchdog stopped the job. */
export class JobTimeoutError extends Error {
  override readonly name = "TimeoutError";
  constructor(
    readonly operation: string,
    readonly limitS: number,
  ) {
    super(`${operation} exceeded TESSERA_LONG_RUNNING_S (${limitS} s) and was stopped`);
  }
}

/** The worker thread died under the job (process.exit, an uncaught error, out of memory). */
export class WorkerCrashError extends Error {
  override readonly name = "WorkerCrashError";
  constructor(
    readonly operation: string,
    cause: unknown,
  ) {
    super(
      `worker crashed while running ${operation}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/**
 * The operation threw. `message` is the operation's own message; `stack` is its stack in the worker
 * (for the job's log); `operationErrorName` the error's original name (`TypeError` …).
 */
export class OperationError extends Error {
  override readonly name = "OperationError";
  constructor(
    readonly operation: string,
    message: string,
    readonly operationErrorName: string,
    stack?: string,
  ) {
    super(message);
    if (stack) this.stack = stack;
  }
}

/**
 * Jobs: the worker pool that runs operations on worker threads, the per-session serial queue, and the
 * zero-copy data transfer between the main thread and the workers.
 */
export * from "./entry.js";
export * from "./errors.js";
export * from "./limits.js";
export * from "./operation.js";
export * from "./pool.js";
export * from "./queue.js";
export * from "./strings.js";
export type { JobMessage, TaskEnvelope, TaskOutcome } from "./task.js";
export * from "./transfer.js";

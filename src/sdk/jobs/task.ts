/**
 * What the main thread and a worker say to each other: the task, the envelope piscina carries, the
 * messages on the job's own MessagePort, and the result envelope. Shared by `pool.ts` (main) and
 * `worker.ts` (worker); plain data only, since all of it is structured-cloned.
 */
import type { MessagePort } from "node:worker_threads";
import type { Matrix } from "../data/arrays.js";
import type { SpatialData } from "../data/spatialdata.js";
import type { EffectClass } from "./operation.js";

/** One operation call, as the pool runs it. */
export interface WorkerTask {
  /** URL (`file:`) or path of the module exporting the operation (`.ts` in development, `.js` when built). */
  readonly module: string;
  /** Export name of the operation in that module. */
  readonly export: string;
  /** The data to run on: the committed object after `prepareForWorker` (the pool prepares it otherwise). */
  readonly sdata: SpatialData;
  /** Validated params. */
  readonly params: Record<string, unknown>;
  /** Active table name. */
  readonly table: string;
  /** Seed of the job's random stream. */
  readonly seed: number;
  /** Threads the operation may use. */
  readonly threads: number;
  /** How the result is treated. */
  readonly effect: EffectClass;
}

/** What piscina hands the worker: the task plus the job's channel and abort flag. */
export interface TaskEnvelope {
  readonly task: WorkerTask;
  /** The worker's end of the job channel (transferred). */
  readonly port: MessagePort;
  /** Int32 on a SharedArrayBuffer: 0 = run, 1 = abort requested (seen even by synchronous loops). */
  readonly abortFlag: Int32Array;
  /** Human name of the operation, for messages. */
  readonly name: string;
}

/** Messages from the worker on the job channel, in order. */
export type JobMessage =
  | { readonly type: "start" }
  | { readonly type: "progress"; readonly fraction: number; readonly message?: string }
  | { readonly type: "log"; readonly text: string }
  /** Asks the main thread for a gene from the session's column mirror (`OpContext.mirrorGene`). */
  | { readonly type: "gene"; readonly id: number; readonly table: string; readonly gene: string }
  /** Last message of a task that ran to the end (with a result or an operation error). */
  | { readonly type: "end" };

/** Messages from the main thread on the job channel. */
export type ControlMessage =
  | { readonly type: "abort"; readonly reason: string }
  /** The answer to a `gene` request: the values, or null (no current mirror: read X). */
  | { readonly type: "gene"; readonly id: number; readonly values: Float32Array | null };

/** The result envelope: the operation's value, or its error (a crash never gets here). */
export type TaskOutcome =
  | {
      readonly ok: true;
      readonly value: unknown;
      /** Deferred matrices of the task's data the job wrote out, by main-thread id (`data/deferred.ts`). */
      readonly written?: readonly { readonly id: number; readonly matrix: Matrix }[];
    }
  | {
      readonly ok: false;
      readonly error: { readonly name: string; readonly message: string; readonly stack?: string };
    };

/** Index of the abort flag in `abortFlag`. */
export const ABORT_INDEX = 0;

/**
 * Engine test operations (namespace `custom`): what the job queue, the worker pool and the registry's
 * validation are tested with. They do real, observable things (sleep, throw, exit the worker), never
 * analysis.
 */
import { isMainThread } from "node:worker_threads";
import type { Change } from "../../../src/sdk/data/change.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { nObs } from "../../../src/sdk/data/table.js";
import type { OpContext } from "../../../src/sdk/jobs/operation.js";
import type { Rng } from "../../../src/sdk/math/rng.js";

/** Params of `noop` (none). */
export type NoopParams = Record<string, never>;

/** Do nothing and change nothing (measures the engine's own overhead). */
export async function noop(_sd: SpatialData, _params: NoopParams, _ctx: OpContext): Promise<Change> {
  return {};
}

/** Params of `sleep`. */
export interface SleepParams {
  /**
   * How long to sleep, in milliseconds.
   * @asType integer
   * @minimum 0
   * @maximum 3600000
   * @default 1000
   */
  ms?: number;
  /** Logged when the sleep starts. */
  message?: string;
}

/**
 * Sleep for `ms` milliseconds, reporting progress and stopping as soon as the job is cancelled.
 */
export async function sleep(_sd: SpatialData, params: SleepParams, ctx: OpContext): Promise<Change> {
  const ms = params.ms ?? 1000;
  if (params.message) ctx.log(params.message);
  const start = Date.now();
  while (Date.now() - start < ms) {
    ctx.signal.throwIfAborted();
    ctx.progress(Math.min(1, (Date.now() - start) / Math.max(ms, 1)));
    await new Promise((r) => setTimeout(r, Math.min(10, ms - (Date.now() - start))));
  }
  ctx.signal.throwIfAborted();
  ctx.progress(1);
  return {};
}

/** Params of `fail`. */
export interface FailParams {
  /**
   * The error message.
   * @default "testkit.fail: failed on purpose"
   */
  message?: string;
}

/** Throw an error (a failing operation: its job fails and the data stays as it was). */
export async function fail(_sd: SpatialData, params: FailParams, ctx: OpContext): Promise<Change> {
  ctx.log("about to fail");
  throw new Error(params.message ?? "testkit.fail: failed on purpose");
}

/** Params of `crash`. */
export interface CrashParams {
  /**
   * `exit` ends the worker thread with `process.exit(1)`; `oom` allocates until the worker's heap
   * limit (`resourceLimits`) kills it.
   * @default "exit"
   */
  mode?: "exit" | "oom";
}

/**
 * Kill the worker thread running this job (a crashing operation). Refuses to run on the main thread,
 * where it would end the whole process.
 */
export async function crash(_sd: SpatialData, params: CrashParams, _ctx: OpContext): Promise<Change> {
  if (isMainThread) throw new Error("testkit.crash only runs in a worker thread (it would end the process)");
  if ((params.mode ?? "exit") === "exit") process.exit(1);
  const hoard: number[][] = [];
  for (;;) hoard.push(new Array<number>(1 << 20).fill(hoard.length));
}

/** Params of `with_callback`. */
export interface WithCallbackParams {
  /**
   * Multiplier of the cell count.
   * @default 1
   */
  scale?: number;
  /** Called with the result (a callback cannot come through JSON, so it stays unset). */
  on_value?: (value: number) => void;
  /** A random stream (a class instance: not JSON, locked to the job's own). */
  rng?: Rng;
}

/**
 * Return the active table's cell count times `scale`.
 * @effect extract
 */
export async function with_callback(
  sd: SpatialData,
  params: WithCallbackParams,
  ctx: OpContext,
): Promise<{ value: number }> {
  const t = sd.tables[ctx.table];
  if (!t) throw new Error(`no table "${ctx.table}"`);
  const value = nObs(t) * (params.scale ?? 1);
  params.on_value?.(value);
  return { value };
}

/** Params of `echo_params`: one of each kind of field the registry's rules know. */
export interface EchoParamsParams {
  /**
   * Number of neighbours.
   * @asType integer
   * @minimum 1
   * @default 15
   */
  n_neighbors?: number;
  /**
   * Connectivity method.
   * @default "umap"
   */
  method?: "umap" | "gauss";
  /** Obs column of clusters. */
  cluster_key: string;
  /** Genes to use. */
  genes?: string[];
  /** Layer to read instead of X. */
  layer?: string;
  /** obsm representation. */
  use_rep?: string;
  /** obsp connectivities. */
  connectivity_key?: string;
  /** Visium library. */
  library_id?: string;
  /** obs column of the score. */
  score_key?: string;
  /**
   * Column to colour by.
   * @widget obs_key
   * @tooltip Pick any obs column.
   */
  color?: string;
  /**
   * Clustering resolution.
   * @minimum 0
   * @default 1
   */
  resolution?: number;
  /** Return a copy. */
  copy?: boolean;
  /** Extra options. */
  options?: { alpha?: number };
}

/**
 * Return the params as the operation received them (after validation filled defaults).
 * @effect extract
 */
export async function echo_params(
  _sd: SpatialData,
  params: EchoParamsParams,
  _ctx: OpContext,
): Promise<EchoParamsParams> {
  return params;
}

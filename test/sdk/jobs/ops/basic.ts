/** Test operations for the worker pool: no-op, echo, sleep, busy loops, failures. */
import type { Change } from "../../../../src/sdk/data/change.js";
import type { SpatialData } from "../../../../src/sdk/data/spatialdata.js";
import type { OpContext } from "../../../../src/sdk/jobs/operation.js";

/** Does nothing: an empty change. */
export function noop(): Change {
  return {};
}

/** Returns what it was given (params, table, threads, first rng draw, table names). */
export function echo(sd: SpatialData, params: Record<string, unknown>, ctx: OpContext): unknown {
  return {
    params,
    table: ctx.table,
    threads: ctx.threads,
    draw: ctx.rng.next(),
    tables: Object.keys(sd.tables),
  };
}

/** Sleeps `ms` in `steps` steps, reporting progress and logging each step; honours the signal. */
export async function sleep(
  _sd: SpatialData,
  params: { ms: number; steps?: number; tag?: string },
  ctx: OpContext,
): Promise<unknown> {
  const steps = params.steps ?? 10;
  const started = Date.now();
  for (let i = 0; i < steps; i++) {
    ctx.signal.throwIfAborted();
    await new Promise((r) => setTimeout(r, params.ms / steps));
    ctx.progress((i + 1) / steps, `step ${i + 1}`);
    ctx.log(`${params.tag ?? "sleep"} ${i + 1}`);
  }
  return { started, finished: Date.now(), tag: params.tag ?? null };
}

/** A synchronous busy loop that polls `ctx.signal.aborted` (no event-loop turns). */
export function busyPolling(_sd: SpatialData, params: { ms: number }, ctx: OpContext): unknown {
  const end = Date.now() + params.ms;
  let n = 0;
  while (Date.now() < end) {
    n++;
    if (n % 1000 === 0 && ctx.signal.aborted) throw new Error("stopped by the signal");
  }
  return { n };
}

/** A synchronous busy loop that ignores the signal (needs the thread to be terminated). */
export function spin(_sd: SpatialData, params: { ms: number }): unknown {
  const end = Date.now() + params.ms;
  let n = 0;
  while (Date.now() < end) n++;
  return { n };
}

/** Throws an operation error. */
export function fail(_sd: SpatialData, params: { n?: number }, ctx: OpContext): never {
  ctx.log("about to fail");
  throw new TypeError(`n must be positive, got ${params.n ?? -1}`);
}

/** Asks the main thread for genes through `ctx.mirrorGene` and returns what came back (null: none). */
export async function mirrorGenes(
  _sd: SpatialData,
  params: { genes: string[] },
  ctx: OpContext,
): Promise<unknown> {
  const got = await Promise.all(params.genes.map((g) => ctx.mirrorGene?.(ctx.table, g) ?? null));
  return { got: got.map((v) => (v ? Array.from(v) : null)) };
}

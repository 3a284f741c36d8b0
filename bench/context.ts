/** A plain OpContext for calling operations directly in benchmarks (no worker, no job, seed 0). */
import type { OpContext } from "../src/sdk/jobs/operation.js";
import { Rng } from "../src/sdk/math/rng.js";

/** Thread budget of benchmark operations: `BENCH_THREADS` (default 1). */
export const BENCH_THREADS = Math.max(1, Number(process.env.BENCH_THREADS ?? 1) || 1);

/** A context on table `table`, seed 0, `BENCH_THREADS` threads, progress and log discarded. */
export function benchCtx(table = "table"): OpContext {
  return {
    table,
    signal: new AbortController().signal,
    rng: new Rng(0),
    threads: BENCH_THREADS,
    progress: () => {},
    log: () => {},
  };
}

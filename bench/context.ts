/** A plain OpContext for calling operations directly in benchmarks (no worker, no job, seed 0). */
import type { OpContext } from "../src/sdk/jobs/operation.js";
import { Rng } from "../src/sdk/math/rng.js";

/** A context on table `table`, seed 0, one thread, progress and log discarded. */
export function benchCtx(table = "table"): OpContext {
  return {
    table,
    signal: new AbortController().signal,
    rng: new Rng(0),
    threads: 1,
    progress: () => {},
    log: () => {},
  };
}

/** A plain OpContext for calling operations directly in tests (no worker, no job). */
import type { OpContext } from "../../src/sdk/jobs/operation.js";
import { Rng } from "../../src/sdk/math/rng.js";

/** A context on table `table` that records progress and log lines. */
export function testContext(table = "table", signal: AbortSignal = new AbortController().signal) {
  const logs: string[] = [];
  const progress: number[] = [];
  const ctx: OpContext = {
    table,
    signal,
    rng: new Rng(0),
    threads: 1,
    progress: (f) => {
      progress.push(f);
    },
    log: (t) => {
      logs.push(t);
    },
  };
  return { ctx, logs, progress };
}

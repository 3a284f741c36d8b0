/** A plain OpContext for calling scanpy operations directly in tests (no worker, no job). */
import type { OpContext } from "../../../src/sdk/jobs/operation.js";
import { Rng } from "../../../src/sdk/math/rng.js";

/** A context on table `table` with an RNG seeded by `seed`; progress and log lines are kept in `progress`/`logs`. */
export function makeCtx(
  table = "table",
  seed = 0,
  signal: AbortSignal = new AbortController().signal,
): OpContext & { progress: (f: number) => void; logs: string[]; fractions: number[] } {
  const logs: string[] = [];
  const fractions: number[] = [];
  return {
    table,
    signal,
    rng: new Rng(seed),
    threads: 1,
    progress: (f: number) => {
      fractions.push(f);
    },
    log: (t: string) => {
      logs.push(t);
    },
    logs,
    fractions,
  };
}

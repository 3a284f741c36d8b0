/** Test operations that kill their worker thread. */
import type { SpatialData } from "../../../../src/sdk/data/spatialdata.js";

/** Exits the worker thread (process.exit in a worker stops that thread only). */
export function exit(): never {
  process.exit(3);
}

/** Throws from a timer: an uncaught error in the worker. */
export async function uncaught(): Promise<unknown> {
  setTimeout(() => {
    throw new Error("async boom");
  }, 5);
  await new Promise((r) => setTimeout(r, 5_000));
  return null;
}

/** Allocates until the worker's heap limit is hit. */
export function oom(_sd: SpatialData): unknown {
  const keep: number[][] = [];
  for (;;) keep.push(new Array(1_000_000).fill(keep.length));
}

/** Returns a function: not something a worker can send back. */
export function badResult(): unknown {
  return { ok: 1, fn: () => 1 };
}

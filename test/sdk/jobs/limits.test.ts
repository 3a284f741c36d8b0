import { availableParallelism } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { resolveWorkerEntry } from "../../../src/sdk/jobs/entry.js";
import { availableCpus, longRunningSFromEnv, poolThreadsFromEnv } from "../../../src/sdk/jobs/limits.js";

const saved = { ...process.env };
afterEach(() => {
  for (const k of ["TESSERA_COMPUTE_POOL_WORKERS", "TESSERA_LONG_RUNNING_S"]) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe("pool limits from the environment", () => {
  it("counts CPUs (never more than the OS reports, at least 1)", () => {
    const n = availableCpus();
    expect(n).toBeGreaterThanOrEqual(1);
    expect(n).toBeLessThanOrEqual(availableParallelism());
  });

  it("reads TESSERA_COMPUTE_POOL_WORKERS and TESSERA_LONG_RUNNING_S, with defaults", () => {
    delete process.env.TESSERA_COMPUTE_POOL_WORKERS;
    delete process.env.TESSERA_LONG_RUNNING_S;
    expect(poolThreadsFromEnv()).toBe(availableCpus());
    expect(longRunningSFromEnv()).toBe(120);
    process.env.TESSERA_COMPUTE_POOL_WORKERS = "3";
    process.env.TESSERA_LONG_RUNNING_S = "2.5";
    expect(poolThreadsFromEnv()).toBe(3);
    expect(longRunningSFromEnv()).toBe(2.5);
  });

  it("rejects malformed values naming the variable", () => {
    process.env.TESSERA_COMPUTE_POOL_WORKERS = "1.5";
    expect(() => poolThreadsFromEnv()).toThrow(
      /TESSERA_COMPUTE_POOL_WORKERS must be a positive integer, got "1.5"/,
    );
    process.env.TESSERA_LONG_RUNNING_S = "-1";
    expect(() => longRunningSFromEnv()).toThrow(/TESSERA_LONG_RUNNING_S must be a positive number/);
  });
});

describe("worker entry resolution", () => {
  it("uses worker.ts with tsx in the source tree, and a built .js as is", () => {
    expect(resolveWorkerEntry().mode).toBe("source");
    const built = resolveWorkerEntry("/opt/tessera/dist/jobs/worker.js");
    expect(built).toEqual({
      filename: "file:///opt/tessera/dist/jobs/worker.js",
      execArgv: [],
      mode: "built",
    });
    expect(resolveWorkerEntry(new URL("file:///x/worker.ts")).mode).toBe("source");
  });
});

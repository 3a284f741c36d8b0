/**
 * Pool sizing and the watchdog limit from the environment (`TESSERA_COMPUTE_POOL_WORKERS`,
 * `TESSERA_LONG_RUNNING_S`), with a cgroup-aware CPU count for containers.
 */
import { availableParallelism } from "node:os";
import { machineCpus } from "../resources/cgroup.js";

/**
 * Whole CPUs this process may use: `os.availableParallelism()`, capped by the cgroup CPU quota
 * (`resources/cgroup.ts`) rounded up, at least 1.
 */
export function availableCpus(): number {
  const n = Math.min(availableParallelism(), Math.ceil(machineCpus()));
  return Math.max(1, Number.isFinite(n) ? n : 1);
}

/** A positive number from an environment variable, or `fallback` when unset; throws when malformed. */
export function envNumber(name: string, fallback: number, opts: { integer?: boolean } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v <= 0 || (opts.integer && !Number.isInteger(v))) {
    throw new Error(`${name} must be a positive ${opts.integer ? "integer" : "number"}, got "${raw}"`);
  }
  return v;
}

/** Worker threads of the compute pool: `TESSERA_COMPUTE_POOL_WORKERS`, else the CPU count. */
export function poolThreadsFromEnv(): number {
  return envNumber("TESSERA_COMPUTE_POOL_WORKERS", availableCpus(), { integer: true });
}

/** Seconds a job may run before the watchdog stops it: `TESSERA_LONG_RUNNING_S`, default 120. */
export function longRunningSFromEnv(): number {
  return envNumber("TESSERA_LONG_RUNNING_S", 120);
}

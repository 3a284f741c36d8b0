/**
 * How much memory one array read may take, checked against what a file declares before anything is
 * allocated. A dense X declared at 80 GB, a sparse matrix of ten billion values: refused with the
 * figure instead of allocating until the process dies. The budget is half the memory limit:
 * `TESSERA_CONTAINER_MEM_MB` when set, else the cgroup limit Node reports
 * (`process.constrainedMemory`), else the machine's memory (set from Node by
 * `memory-budget-node.ts`, or the browser's `navigator.deviceMemory`), else 8 GiB. One array past it
 * could not be used anyway. Browser-safe (no Node imports).
 */
import { DataError } from "./data-error.js";

/** Fraction of the memory limit one array read may take. */
export const ARRAY_BUDGET_FRACTION = 0.5;

let limitBytes: number | undefined;

/** Set the memory limit the checks use (the service passes its configured one); null forgets it. */
export function setMemoryLimitBytes(bytes: number | null): void {
  limitBytes = bytes === null || !(bytes > 0) ? undefined : bytes;
}

/** The memory limit in bytes (see the module comment). */
export function memoryLimitBytes(): number {
  if (limitBytes !== undefined) return limitBytes;
  const proc = (
    globalThis as {
      process?: {
        env?: Record<string, string | undefined>;
        constrainedMemory?: () => number | undefined;
        availableMemory?: () => number;
      };
    }
  ).process;
  const env = Number(proc?.env?.TESSERA_CONTAINER_MEM_MB);
  if (Number.isFinite(env) && env > 0) return env * 2 ** 20;
  const constrained = proc?.constrainedMemory?.();
  // Node reports a huge number (or 0) when no cgroup limit applies.
  if (constrained && constrained > 0 && constrained < 2 ** 50) return constrained;
  if (hostBytes !== undefined) return hostBytes;
  const nav = (globalThis as { navigator?: { deviceMemory?: number } }).navigator;
  if (nav?.deviceMemory) return nav.deviceMemory * 2 ** 30;
  return 8 * 2 ** 30;
}

let hostBytes: number | undefined;

/** The machine's memory (Node: the cgroup limit or RAM), set by `memory-budget-node.ts` on load. */
export function setHostMemoryBytes(bytes: number): void {
  if (bytes > 0) hostBytes = bytes;
}

/** Bytes one array read may take. */
export function arrayBudgetBytes(): number {
  return memoryLimitBytes() * ARRAY_BUDGET_FRACTION;
}

/** `12.3 GB`. */
export function formatBytes(n: number): string {
  const units = ["bytes", "KB", "MB", "GB", "TB", "PB"];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[i]}`;
}

/**
 * Refuse a read of `bytes` (what a file declares) when it exceeds the budget, naming `what` (the file
 * and element) and the figures. Also refuses sizes that are not finite.
 */
export function checkReadSize(bytes: number, what: string): void {
  const budget = arrayBudgetBytes();
  if (!Number.isFinite(bytes) || bytes > budget)
    throw new DataError(
      `${what}: reading it needs ${formatBytes(bytes)}, more than ${formatBytes(budget)} (half of this machine's ${formatBytes(memoryLimitBytes())} memory limit); the file declares a size this server cannot hold`,
    );
}

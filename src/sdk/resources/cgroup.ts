/**
 * What the container grants this process: the memory limit and the CPU quota, read from the cgroup
 * files (v2, else v1), else the host's. One reader, so the service configuration, the pool size and
 * the readers' size checks agree on the machine they run on.
 */
import { readFileSync } from "node:fs";
import { availableParallelism, totalmem } from "node:os";

/** Reads a small system file as trimmed text, or undefined when it cannot be read. */
export type TextReader = (path: string) => string | undefined;

/** The real file system as a `TextReader`. */
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/**
 * Memory limit in MB from the cgroup files: v2 `memory.max` (`max` = none), else v1
 * `memory/memory.limit_in_bytes` (an unlimited v1 group reports a huge number: anything at or above
 * the host's RAM counts as no limit), else host RAM, else 8192.
 */
export function memLimitMb(read: TextReader, hostBytes: number): number {
  const host = hostBytes > 0 ? Math.floor(hostBytes / 2 ** 20) : 8192;
  const v2 = read("/sys/fs/cgroup/memory.max");
  if (v2 !== undefined)
    return v2 !== "max" && /^\d+$/.test(v2) ? Math.min(host, Math.floor(Number(v2) / 2 ** 20)) : host;
  const v1 = read("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  if (v1 && /^\d+$/.test(v1)) {
    const mb = Math.floor(Number(v1) / 2 ** 20);
    if (mb > 0 && mb < host) return mb;
  }
  return host;
}

/**
 * CPU cores from the cgroup files: v2 `cpu.max` quota/period, else v1 `cpu/cpu.cfs_quota_us` over
 * `cpu.cfs_period_us` (quota -1 = none), else the host's available parallelism.
 */
export function cpuLimit(read: TextReader, hostCpus: number): number {
  const v2 = read("/sys/fs/cgroup/cpu.max");
  if (v2) {
    const [quota, period] = v2.split(/\s+/);
    if (quota && quota !== "max" && Number(period) > 0) return Math.max(0.1, Number(quota) / Number(period));
    return Math.max(1, hostCpus);
  }
  const quota = Number(read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"));
  const period = Number(read("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
  if (quota > 0 && period > 0) return Math.max(0.1, quota / period);
  return Math.max(1, hostCpus);
}

/** This machine's memory limit in MB (cgroup, else host RAM). */
export function machineMemMb(): number {
  return memLimitMb(readText, totalmem());
}

/** This machine's CPU quota in cores, possibly fractional (cgroup, else host parallelism). */
export function machineCpus(): number {
  return cpuLimit(readText, availableParallelism());
}

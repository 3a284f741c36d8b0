/**
 * Measuring what the service uses: resident memory of the process (the API and its worker threads
 * share one process), CPU time since the last reading, and the size of a folder (the working dir,
 * when it is RAM-backed and so counts against the memory limit).
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

/** CPU use between two calls, as percent of one core (100 = one full core), summed over all threads. */
export class CpuMeter {
  private last = process.cpuUsage();
  private lastAt = performance.now();

  /** Percent of one core used since the previous call (or since construction). */
  read(): number {
    const now = performance.now();
    const usage = process.cpuUsage(this.last);
    this.last = process.cpuUsage();
    const wallMs = Math.max(1e-3, now - this.lastAt);
    this.lastAt = now;
    return ((usage.user + usage.system) / 1000 / wallMs) * 100;
  }
}

/** Resident set size of the process in MB. */
export function rssMb(): number {
  return process.memoryUsage.rss() / 2 ** 20;
}

/** Total size of the files under `dir` in MB (0 when it does not exist); symlinks are not followed. */
export async function folderMb(dir: string): Promise<number> {
  let bytes = 0;
  const walk = async (d: string): Promise<void> => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) bytes += (await stat(p).catch(() => ({ size: 0 }))).size;
    }
  };
  await walk(dir);
  return bytes / 2 ** 20;
}

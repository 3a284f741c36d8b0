import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cpuLimit,
  memLimitMb,
  PACKAGE_RECIPES_DIR,
  platformEnabled,
  readConfig,
} from "../../../src/sdk/session/config.js";

describe("readConfig", () => {
  it("gives the spec's defaults", () => {
    const c = readConfig({});
    expect(c.dataDir).toBe(resolve(".tessera-data"));
    expect(c.maxSessions).toBe(8);
    expect(c.longRunningS).toBe(120);
    expect(c.admissionPct).toBe(0.8);
    expect(c.rasterChunkCacheMb).toBe(256);
    expect(c.workTmpfsPct).toBe(85);
    expect(c.clientImageCompositing).toBe(true);
    expect(c.clientImageMaxChannels).toBe(6);
    expect(c.rasterBasePx).toBe(1024);
    expect(c.resourceHz).toBe(2);
    expect(c.presenceTimeoutS).toBe(20);
    expect(c.mcpIdleReleaseS).toBe(900);
    expect(c.workDirInRam).toBe(false);
    expect(c.appUrl).toBeNull();
    expect(c.plugins).toBeNull();
    expect(c.nThreads).toBeGreaterThanOrEqual(1);
    expect(c.computePoolWorkers).toBeGreaterThanOrEqual(1);
    expect(c.containerMemMb).toBeGreaterThan(0);
    expect(c.recipesDir).toBe(PACKAGE_RECIPES_DIR);
    expect(PACKAGE_RECIPES_DIR).toBe(resolve("recipes"));
    expect(platformEnabled(c)).toBe(false);
  });

  it("reads TESSERA_ variables", () => {
    const c = readConfig({
      TESSERA_DATA_DIR: "/tmp/x/../y",
      TESSERA_MAX_SESSIONS: "3",
      TESSERA_LONG_RUNNING_S: "5",
      TESSERA_N_THREADS: "2",
      TESSERA_COMPUTE_POOL_WORKERS: "4",
      TESSERA_CONTAINER_CPUS: "1.5",
      TESSERA_CONTAINER_MEM_MB: "0",
      TESSERA_WORK_DIR_IN_RAM: "1",
      TESSERA_CLIENT_IMAGE_COMPOSITING: "0",
      TESSERA_PLUGINS: "tessera, testkit",
      PLATFORM_BASE_URL: "https://p.example",
      PLATFORM_CLIENT_ID: "id",
      PLATFORM_CLIENT_SECRET: "s",
    });
    expect(c.dataDir).toBe("/tmp/y");
    expect(c.maxSessions).toBe(3);
    expect(c.longRunningS).toBe(5);
    expect(c.nThreads).toBe(2);
    expect(c.computePoolWorkers).toBe(4);
    expect(c.containerCpus).toBe(1.5);
    expect(c.containerMemMb).toBe(0);
    expect(c.workDirInRam).toBe(true);
    expect(c.clientImageCompositing).toBe(false);
    expect(c.plugins).toEqual(["tessera", "testkit"]);
    expect(platformEnabled(c)).toBe(true);
  });

  it("names the variable of a bad value", () => {
    expect(() => readConfig({ TESSERA_MAX_SESSIONS: "two" })).toThrow(
      'TESSERA_MAX_SESSIONS="two": expected an integer ≥ 1',
    );
    expect(() => readConfig({ TESSERA_WORK_DIR_IN_RAM: "maybe" })).toThrow("TESSERA_WORK_DIR_IN_RAM");
  });
});

describe("limits from cgroup files", () => {
  const GiB = 2 ** 30;
  const files = (m: Record<string, string>) => (p: string) => m[p];
  it("reads cgroup v2 memory.max and cpu.max", () => {
    expect(memLimitMb(files({ "/sys/fs/cgroup/memory.max": `${4 * GiB}` }), 24 * GiB)).toBe(4096);
    expect(memLimitMb(files({ "/sys/fs/cgroup/memory.max": "max" }), 24 * GiB)).toBe(24 * 1024);
    expect(cpuLimit(files({ "/sys/fs/cgroup/cpu.max": "150000 100000" }), 8)).toBe(1.5);
    expect(cpuLimit(files({ "/sys/fs/cgroup/cpu.max": "max 100000" }), 8)).toBe(8);
  });
  it("reads cgroup v1 memory.limit_in_bytes and cfs quota/period, ignoring v1's 'unlimited' huge value", () => {
    const v1 = "/sys/fs/cgroup/memory/memory.limit_in_bytes";
    expect(memLimitMb(files({ [v1]: `${2 * GiB}` }), 24 * GiB)).toBe(2048);
    expect(memLimitMb(files({ [v1]: "9223372036854771712" }), 24 * GiB)).toBe(24 * 1024);
    const q = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us";
    const p = "/sys/fs/cgroup/cpu/cpu.cfs_period_us";
    expect(cpuLimit(files({ [q]: "200000", [p]: "100000" }), 8)).toBe(2);
    expect(cpuLimit(files({ [q]: "-1", [p]: "100000" }), 8)).toBe(8);
  });
  it("falls back to the host when no cgroup file is readable", () => {
    expect(memLimitMb(files({}), 16 * GiB)).toBe(16 * 1024);
    expect(memLimitMb(files({}), 0)).toBe(8192);
    expect(cpuLimit(files({}), 2)).toBe(2);
  });
});

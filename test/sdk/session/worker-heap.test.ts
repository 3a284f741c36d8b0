/** The compute workers' heap limit comes from the memory budget (issue: a worker's heap grew to 4.3 GB whatever the limit). */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../../src/sdk/session/config.js";
import { Service, workerHeapLimit } from "../../../src/sdk/session/service.js";

describe("workerHeapLimit", () => {
  it("gives each worker its share of the admitted memory, between 256 MB and 8 GB; none without a limit", () => {
    const c = (mem: number, workers: number) =>
      readConfig({ TESSERA_CONTAINER_MEM_MB: `${mem}`, TESSERA_COMPUTE_POOL_WORKERS: `${workers}` });
    expect(workerHeapLimit(c(1024, 2))).toEqual({ maxOldGenerationSizeMb: 410 });
    expect(workerHeapLimit(c(256, 4))).toEqual({ maxOldGenerationSizeMb: 256 });
    expect(workerHeapLimit(c(65536, 1))).toEqual({ maxOldGenerationSizeMb: 8192 });
    expect(workerHeapLimit(c(0, 2))).toEqual({});
  });
  it("is what the service's own pool is started with", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tessera-worker-heap-"));
    const s = await Service.start({
      env: { TESSERA_CONTAINER_MEM_MB: "1024", TESSERA_COMPUTE_POOL_WORKERS: "1" },
      plugins: ["testkit"],
      config: { recipesDir: join(dir, "no-recipes"), dataDir: dir, workDir: join(dir, ".work") },
    });
    try {
      const piscina = (s.pool as unknown as { piscina: { options: { resourceLimits?: object } } }).piscina;
      expect(piscina.options.resourceLimits).toMatchObject({ maxOldGenerationSizeMb: 819 });
    } finally {
      await s.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

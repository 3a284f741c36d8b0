import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LimitError } from "../../../src/sdk/errors.js";
import { folderMb } from "../../../src/sdk/resources/measure.js";
import { ResourceMonitor } from "../../../src/sdk/resources/monitor.js";

const config = (over: Partial<ConstructorParameters<typeof ResourceMonitor>[0]["config"]> = {}) => ({
  containerMemMb: 1000,
  admissionPct: 0.8,
  containerCpus: 2,
  resourceHz: 20,
  workDir: "/nonexistent",
  workDirInRam: false,
  ...over,
});

describe("ResourceMonitor", () => {
  it("admits below the threshold and refuses with a 503 at or above it", () => {
    let rss = 500;
    const m = new ResourceMonitor({
      config: config(),
      perSession: () => ({}),
      emit: () => {},
      rss: () => rss,
    });
    expect(() => m.admit("a job")).not.toThrow();
    rss = 800;
    expect(() => m.admit("a job")).toThrow(LimitError);
    try {
      m.admit("a job");
    } catch (e) {
      expect((e as LimitError).status).toBe(503);
      expect((e as Error).message).toMatch(/a job refused: memory is at 80% of the 1000 MB limit/);
    }
  });

  it("never blocks when the memory limit is 0", () => {
    const m = new ResourceMonitor({
      config: config({ containerMemMb: 0 }),
      perSession: () => ({}),
      emit: () => {},
      rss: () => 1e9,
    });
    expect(() => m.admit("x")).not.toThrow();
    expect(m.memoryPct()).toBe(0);
  });

  it("counts a RAM-backed working dir and samples the spec's fields", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tessera-res-"));
    try {
      await writeFile(join(dir, "a.bin"), Buffer.alloc(2 * 2 ** 20));
      expect(await folderMb(dir)).toBeCloseTo(2, 5);
      const m = new ResourceMonitor({
        config: config({ workDir: dir, workDirInRam: true }),
        perSession: () => ({ s1: 12.5 }),
        emit: () => {},
        rss: () => 100,
      });
      const s = await m.sample();
      expect(s.global).toMatchObject({
        rss_mb: 100,
        work_dir_mb: 2,
        rss_pct: 10.2,
        cpu_count: 2,
        rasters_mb: 0,
      });
      expect(s.global.cpu_pct).toBeGreaterThanOrEqual(0);
      expect(s.per_session).toEqual({ s1: 12.5 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("emits samples at the configured rate and one warning when crossing the threshold", async () => {
    const events: [string, object][] = [];
    let rss = 100;
    const m = new ResourceMonitor({
      config: config(),
      perSession: () => ({}),
      emit: (e, d) => events.push([e, d]),
      rss: () => rss,
    });
    m.start();
    await new Promise((r) => setTimeout(r, 180));
    rss = 900;
    await new Promise((r) => setTimeout(r, 250));
    m.stop();
    const samples = events.filter(([e]) => e === "resource.sample");
    expect(samples.length).toBeGreaterThanOrEqual(4);
    expect(events.filter(([e]) => e === "memory.warning")).toHaveLength(1);
  });
});

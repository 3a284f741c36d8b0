/**
 * What a running operation reports through `ctx.progress` reaches the event stream as `job.progress` (the SDK
 * listener, the web app and `tessera run` follow it), throttled so a kernel reporting per row cannot flood it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { progressBar } from "../../../src/adapters/cli/run.js";
import type { Service } from "../../../src/sdk/session/service.js";
import { demoDataDir, openDemo, record, startService } from "./helpers.js";

let service: Service;
let demo: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  const d = await demoDataDir();
  ({ demo, cleanup } = d);
  service = await startService(d.dataDir);
});
afterAll(async () => {
  await service.close();
  await cleanup();
});

describe("job.progress", () => {
  it("carries the operation's fraction, in order, a few times a second, ending at 1", async () => {
    const s = await openDemo(service, demo);
    const rec = record(service, s.id);
    // testkit's sleep reports progress about every 10 ms: ~120 reports over 1.2 s.
    const t = await s.submit({ namespace: "custom", function: "sleep", params: { ms: 1200 } });
    await t.done;
    rec.stop();
    const progress = rec.events.filter((e) => e.event === "job.progress").map((e) => e.data);
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.length).toBeLessThanOrEqual(8);
    expect(progress.every((p) => p.job_id === t.job_id)).toBe(true);
    const fractions = progress.map((p) => p.fraction as number);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(fractions.at(-1)).toBe(1);
    const names = rec.events.map((e) => e.event);
    expect(names.indexOf("job.started")).toBeLessThan(names.indexOf("job.progress"));
    expect(names.lastIndexOf("job.progress")).toBeLessThan(names.indexOf("job.completed"));
  });
});

describe("tessera run's progress bar", () => {
  it("draws the fraction", () => {
    expect(progressBar(0)).toBe("[....................]   0%");
    expect(progressBar(0.35)).toBe("[#######.............]  35%");
    expect(progressBar(1)).toBe("[####################] 100%");
    expect(progressBar(Number.NaN)).toBe("[....................]   0%");
  });
});

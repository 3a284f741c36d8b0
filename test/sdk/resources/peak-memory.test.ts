/**
 * Admission by need: an operation's `@peakMemory` expression, evaluated on the active table's shape and the
 * job's params, and a job whose estimate does not fit below the admission threshold refused up front (503,
 * naming the estimate and the headroom) while saving still goes through.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePeakMemory, defaultPeakMemory } from "../../../src/sdk/resources/peak-memory.js";
import type { Service } from "../../../src/sdk/session/service.js";
import { demoDataDir, openDemo, startService } from "../session/helpers.js";

const shape = { n_obs: 1000, n_vars: 200, nnz: 30_000, x_bytes: 250_000, dense_bytes: 800_000 };

describe("compilePeakMemory", () => {
  it("evaluates numbers, + - * /, parentheses, min/max, shape names and params", () => {
    expect(compilePeakMemory("dense_bytes * 1.2 + n_vars * 32")(shape, {})).toBeCloseTo(966_400);
    expect(compilePeakMemory("(n_obs + n_vars) * max(n_comps, 50) * 16")(shape, { n_comps: 20 })).toBe(
      960_000,
    );
    expect(compilePeakMemory("(n_obs + n_vars) * max(n_comps, 50) * 16")(shape, { n_comps: 100 })).toBe(
      1_920_000,
    );
    expect(compilePeakMemory("min(x_bytes, 1e3) - -5")(shape, {})).toBe(1005);
    expect(compilePeakMemory("nnz / 0")(shape, {})).toBe(0);
    // A param that is null or absent counts as 0; an estimate is never negative.
    expect(compilePeakMemory("max(n_comps, 50)")(shape, { n_comps: null })).toBe(50);
    expect(compilePeakMemory("n_obs - 1e9")(shape, {})).toBe(0);
  });
  it("refuses bad expressions and, given the params, unknown names, quoting the expression", () => {
    expect(() => compilePeakMemory("n_obs *")).toThrow(/@peakMemory "n_obs \*": unexpected end/);
    expect(() => compilePeakMemory("sqrt(n_obs)")).toThrow(/unknown function sqrt\(\)/);
    expect(() => compilePeakMemory("n_obs ; 1")).toThrow(/unexpected ";"/);
    expect(() => compilePeakMemory("(n_obs")).toThrow(/expected "\)"/);
    expect(() => compilePeakMemory("n_comp * 8", ["n_comps"])).toThrow(/unknown name n_comp/);
    expect(() => compilePeakMemory("n_comps * 8", ["n_comps"])).not.toThrow();
  });
  it("defaults: a computation writes about one X, other kinds nothing counted", () => {
    expect(defaultPeakMemory("compute")(shape, {})).toBe(250_000);
    expect(defaultPeakMemory("plot")(shape, {})).toBe(0);
  });
});

describe("admission by need in a session", () => {
  let service: Service;
  let demo: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const d = await demoDataDir();
    ({ demo, cleanup } = d);
    service = await startService(d.dataDir, { plugins: ["scanpy", "tessera", "testkit"] });
  });
  afterAll(async () => {
    await service.close();
    await cleanup();
  });

  it("the registry derives each operation's estimate from its manifest", () => {
    const big = { n_obs: 50_000, n_vars: 3_000, nnz: 150e6, x_bytes: 600e6, dense_bytes: 600e6 };
    expect(service.registry.peakMemory("sc.pp.scale", big, {})).toBeCloseTo(1200e6 + 96_000);
    expect(service.registry.peakMemory("sc.pp.pca", big, { n_comps: 50 })).toBe(
      3000 * 3000 * 16 + 53_000 * 50 * 32,
    );
    // No tag: the default for a computation.
    expect(service.registry.peakMemory("custom.rename_obs_column", big, {})).toBe(600e6);
  });

  it("a job whose estimate does not fit is refused before it exists; a save still goes through", async () => {
    const s = await openDemo(service, demo);
    const config = service.config as { containerMemMb: number; admissionPct: number };
    const saved = { mem: config.containerMemMb, pct: config.admissionPct };
    const history = s.appState.compute_history.length;
    try {
      // The threshold far below what the process uses: no headroom at all.
      config.containerMemMb = 64;
      config.admissionPct = 0.5;
      const err = await s.submit({ namespace: "sc.pp", function: "scale", params: {} }).then(
        () => null,
        (e: unknown) => e as { status?: number; message: string },
      );
      expect(err?.status).toBe(503);
      expect(err?.message).toMatch(
        /^sc\.pp\.scale refused: it needs about [\d.]+ MB at its peak \(estimated for 300 × 40 with these params\), and 0 MB are free below the admission threshold \(50% of the 64 MB limit\)/,
      );
      expect(s.appState.compute_history.length).toBe(history);
      expect(s.queueView()).toEqual([]);
      const save = await (await s.save({ folder: "saves", prefix: "full" })).done;
      expect(save.status).toBe("completed");
    } finally {
      config.containerMemMb = saved.mem;
      config.admissionPct = saved.pct;
    }
    const ok = await (await s.submit({ namespace: "sc.pp", function: "scale", params: {} })).done;
    expect(ok.status).toBe("completed");
  });
});

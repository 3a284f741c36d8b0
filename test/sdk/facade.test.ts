/** The SDK facade: a script's few lines, and the shipped example run as a real process. */
import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobFailedError, splitKey, Tessera } from "../../src/sdk/tessera.js";
import { demoDataDir } from "./session/helpers.js";

const exec = promisify(execFile);
let dataDir: string;
let demo: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dataDir, demo, cleanup } = await demoDataDir());
});
afterAll(() => cleanup?.());

describe("Tessera facade", () => {
  it("opens, runs, reads a field, saves, reopens", async () => {
    const t = await Tessera.start({
      dataDir,
      plugins: ["tessera", "testkit"],
      config: { computePoolWorkers: 1 },
    });
    try {
      expect(t.dataDir).toBe(dataDir);
      expect(t.functions().functions.some((f) => f.key === "custom.rename_obs_column")).toBe(true);
      expect(t.recipes().map((r) => r.name)).toContain("annotate_demo");
      const s = await t.open(demo.slice(dataDir.length + 1));
      const out = await s.run("custom.rename_obs_column", { old_name: "cell_type", new_name: "label" });
      expect(out.result).toEqual({
        structural_diff: { obs: ["cell_type", "label"], uns: ["cell_type_colors", "label_colors"] },
      });
      const labels = await s.values("obs:label");
      expect(labels).toHaveLength(300);
      expect(new Set(labels).size).toBeLessThanOrEqual(8);
      const counts = await s.extract<{ values: { count: number }[] }>("custom.obs_values", {
        column: "label",
      });
      expect(counts.values.reduce((p, v) => p + v.count, 0)).toBe(300);
      await expect(s.run("custom.fail", { message: "boom" })).rejects.toBeInstanceOf(JobFailedError);
      await expect(s.run("custom.fail", { message: "boom" })).rejects.toThrow("custom.fail failed: boom");
      const pre = s.preflight(t.recipe("annotate_demo"), { source_column: "label", label_column: "zone" });
      expect(pre).toEqual({
        produced: ["obs:zone", "uns:zone_colors"],
        unresolved: [],
        unknown_functions: [],
      });
      const outcomes = await s.runRecipe(t.recipe("annotate_demo"), {
        source_column: "label",
        label_column: "zone",
      });
      expect(outcomes.map((o) => o.status)).toEqual(["completed", "completed", "completed"]);
      const zones = new Set(await s.values("obs:zone"));
      expect([...zones].every((z) => /^(Epithelium|Stroma|Immune): /.test(String(z)))).toBe(true);
      const path = await s.save({ prefix: "facade" });
      expect(path).toMatch(/facade-[0-9a-f]+\.sdata\.zarr\.zip$/);
      const back = await t.open(path);
      expect(back.appState.compute_history.map((e) => `${e.function}:${e.status}`)).toEqual([
        "rename_obs_column:completed",
        "fail:failed",
        "fail:failed",
        "rename_obs_column:completed",
        "rename_categories:completed",
        "set_category_colors:completed",
      ]);
      expect(back.exportRecipe().steps).toHaveLength(4);
      await expect(t.open("../outside.zip")).rejects.toThrow(/outside the data dir/);
      await expect(t.open("missing.sdata.zarr.zip")).rejects.toThrow(/no such file/);
      expect(t.service.sessions()).toHaveLength(2);
    } finally {
      await t.close();
    }
  });

  it("reports loading, a step's progress and each step as it ends (what tessera run prints)", async () => {
    const t = await Tessera.start({
      dataDir,
      plugins: ["tessera", "testkit"],
      config: { computePoolWorkers: 1 },
    });
    try {
      const loading: number[] = [];
      const s = await t.open(demo, { onLoading: (pct) => loading.push(pct) });
      expect(loading.length).toBeGreaterThan(0);
      const recipe = t.recipe({
        schema_version: 1,
        meta: { name: "listen", description: "sleep, fail, noop", provenance: null },
        steps: [
          { namespace: "custom", function: "sleep", params: { ms: 400 } },
          { namespace: "custom", function: "fail", params: { message: "on purpose" } },
          { namespace: "custom", function: "noop", params: {} },
        ],
      });
      const progress: { index: number; fraction: number }[] = [];
      const steps: { index: number; key: string; status: string; log: string }[] = [];
      const outcomes = await s.runRecipe(
        recipe,
        {},
        {
          onProgress: (p) => progress.push({ index: p.index, fraction: p.fraction }),
          onStep: (x) => steps.push({ index: x.index, key: x.key, status: x.outcome.status, log: x.log }),
        },
      );
      expect(outcomes.map((o) => o.status)).toEqual(["completed", "failed", "completed"]);
      expect(steps.map((x) => `${x.index}:${x.key}:${x.status}`)).toEqual([
        "0:custom.sleep:completed",
        "1:custom.fail:failed",
        "2:custom.noop:completed",
      ]);
      // The sleeping step reports its progress, attributed to its index.
      expect(progress.some((p) => p.index === 0 && p.fraction > 0 && p.fraction <= 1)).toBe(true);
      expect(steps[1]!.log).toContain("about to fail");
    } finally {
      await t.close();
    }
  });

  it("splits function keys at the last dot", () => {
    expect(splitKey("sc.pp.normalize_total")).toEqual({ namespace: "sc.pp", function: "normalize_total" });
    expect(splitKey("custom.noop")).toEqual({ namespace: "custom", function: "noop" });
    expect(() => splitKey("noop")).toThrow(/not a function key/);
  });

  it("examples/basic.ts runs", async () => {
    const example = fileURLToPath(new URL("../../examples/basic.ts", import.meta.url));
    const { stdout } = await exec(process.execPath, ["--import", "tsx", example, dataDir], {
      env: { ...process.env, TESSERA_COMPUTE_POOL_WORKERS: "1" },
    });
    expect(stdout).toContain("opened demo: 6 obs columns");
    expect(stdout).toMatch(/recipe: completed, completed, completed/);
    expect(stdout).toMatch(/saved .*demo-annotated-[0-9a-f]+\.sdata\.zarr\.zip/);
    expect((await readdir(dataDir)).some((n) => n.startsWith("demo-annotated-"))).toBe(true);
  });
});

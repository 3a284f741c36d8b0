/** `tessera run` end to end: a real input, real workers, a failing step, the checkpoint written. */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../../../src/adapters/cli/run.js";
import { openCheckpoint } from "../../../src/sdk/io/checkpoint/read.js";
import { demoDataDir } from "../../sdk/session/helpers.js";

const exec = promisify(execFile);
const MAIN = fileURLToPath(new URL("../../../src/adapters/cli/main.ts", import.meta.url));

let dataDir: string;
let demo: string;
let cleanup: () => Promise<void>;
let recipeFile: string;

const RECIPE = {
  schema_version: 1,
  meta: { name: "with_a_failure", description: "rename, fail, rename", provenance: null },
  params: [
    { name: "first", schema: { type: "string", default: "label" }, required: true },
    { name: "why", schema: { type: "string", default: "on purpose" } },
  ],
  steps: [
    {
      namespace: "custom",
      function: "rename_obs_column",
      params: { old_name: "cell_type", new_name: { $param: "first" } },
    },
    { namespace: "custom", function: "fail", params: { message: { $param: "why" } } },
    {
      namespace: "custom",
      function: "rename_obs_column",
      params: { old_name: "cell_area", new_name: "area" },
    },
  ],
};

beforeAll(async () => {
  ({ dataDir, demo, cleanup } = await demoDataDir());
  recipeFile = join(dataDir, "recipe.json");
  await writeFile(recipeFile, JSON.stringify(RECIPE));
});
afterAll(() => cleanup?.());

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe("tessera run", () => {
  it("runs every step despite a failure, saves the checkpoint, and exits 1", async () => {
    const output = join(dataDir, "out", "result.sdata.zarr.zip");
    const c = capture();
    const code = await runCommand(
      {
        recipe: recipeFile,
        input: demo,
        output,
        params: ["first=kind", "why=broken step"],
        plugins: ["tessera", "testkit"],
      },
      c.io,
    );
    expect(code).toBe(1);
    expect(c.out.join("\n")).toMatch(/\[1\/3\] custom\.rename_obs_column ok .* obs: cell_type, kind/);
    expect(c.err.join("\n")).toMatch(/\[2\/3\] custom\.fail failed: broken step/);
    expect(c.err).toContain("    about to fail");
    expect(c.out.join("\n")).toMatch(/\[3\/3\] custom\.rename_obs_column ok/);
    expect(c.out.at(-1)).toMatch(/^wrote .*result\.sdata\.zarr\.zip \(2\/3 step\(s\) completed/);
    expect(c.err.at(-1)).toBe("tessera run: 1 of 3 step(s) failed");
    // The checkpoint has the data of the steps that ran and the whole audit log.
    const cp = await openCheckpoint(output);
    const obs = cp.sdata.tables.table!.obs.columns;
    expect(obs.kind).toBeDefined();
    expect(obs.area).toBeDefined();
    expect(obs.cell_type).toBeUndefined();
    expect(cp.appState.compute_history.map((e) => [e.function, e.status])).toEqual([
      ["rename_obs_column", "completed"],
      ["fail", "failed"],
      ["rename_obs_column", "completed"],
    ]);
    expect(cp.appState.compute_history[1]!.error).toContain("broken step");
  });

  it("shows the running step's progress on a long step (the live stderr line), then clears it", async () => {
    const long = join(dataDir, "long.json");
    await writeFile(
      long,
      JSON.stringify({
        schema_version: 1,
        meta: { name: "long_step", description: "one step of 1.5 s that reports its progress" },
        steps: [{ namespace: "custom", function: "sleep", params: { ms: 1500 } }],
      }),
    );
    const c = capture();
    const lines: string[] = [];
    const code = await runCommand(
      {
        recipe: long,
        input: demo,
        output: join(dataDir, "out", "long.sdata.zarr.zip"),
        params: [],
        plugins: ["tessera", "testkit"],
      },
      { ...c.io, progress: (l: string) => lines.push(l) },
    );
    expect(code).toBe(0);
    const bars = lines.filter((l) => l.startsWith("[1/1] custom.sleep "));
    // testkit's sleep reports about every 10 ms; the stream is throttled, so a few lines, not one per report.
    expect(bars.length).toBeGreaterThan(1);
    const fractions = bars.map((l) => Number(/(\d+)%/.exec(l)?.[1]));
    expect(fractions.every((f) => f >= 0 && f <= 100)).toBe(true);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(lines.at(-1)).toBe("");
    expect(c.out.join("\n")).toMatch(/\[1\/1\] custom\.sleep ok/);
  });

  it("refuses unknown params and bad values before loading anything", async () => {
    const c = capture();
    const output = join(dataDir, "never.sdata.zarr.zip");
    await expect(
      runCommand(
        { recipe: recipeFile, input: demo, output, params: ["nope=1"], plugins: ["tessera", "testkit"] },
        c.io,
      ),
    ).rejects.toThrow("--param nope: recipe with_a_failure has no such param (params: first, why)");
    await expect(
      runCommand({ recipe: recipeFile, input: demo, output: join(dataDir, "x.zip"), params: [] }, c.io),
    ).rejects.toThrow(/\.sdata\.zarr\.zip/);
    expect(existsSync(output)).toBe(false);
  });

  it("runs a shipped recipe by name and exits 0 (as a real process)", async () => {
    const output = join(dataDir, "annotated.sdata.zarr.zip");
    const { stdout } = await exec(
      process.execPath,
      [
        "--import",
        "tsx",
        MAIN,
        "run",
        "annotate_demo",
        "--input",
        demo,
        "--output",
        output,
        "--param",
        "label_column=compartment",
      ],
      {
        env: { ...process.env, TESSERA_DATA_DIR: dataDir, TESSERA_COMPUTE_POOL_WORKERS: "1" },
      },
    );
    expect(stdout).toMatch(/\[3\/3\] custom\.set_category_colors ok/);
    const cp = await openCheckpoint(output);
    const col = cp.sdata.tables.table!.obs.columns.compartment!;
    expect(col.kind).toBe("categorical");
    expect(cp.appState.compute_history.map((e) => e.status)).toEqual(["completed", "completed", "completed"]);
  });

  it("exits non-zero as a process when a step fails, and 2 on a usage error", async () => {
    const output = join(dataDir, "failed.sdata.zarr.zip");
    const r = await exec(
      process.execPath,
      [
        "--import",
        "tsx",
        MAIN,
        "run",
        recipeFile,
        "--input",
        demo,
        "--output",
        output,
        "--plugins",
        "tessera,testkit",
      ],
      {
        env: { ...process.env, TESSERA_DATA_DIR: dataDir, TESSERA_COMPUTE_POOL_WORKERS: "1" },
      },
    ).then(
      () => ({ code: 0 }),
      (e: { code: number }) => ({ code: e.code }),
    );
    expect(r.code).toBe(1);
    expect(existsSync(output)).toBe(true);
    const usage = await exec(process.execPath, ["--import", "tsx", MAIN, "run", recipeFile]).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("run needs --input and --output");
  });
});

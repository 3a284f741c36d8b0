/**
 * Recipes are checked before anything is loaded: unknown values, required params without one,
 * unknown functions and step params against the operations' schemas, every problem listed; every
 * shipped recipe passes the check with its required params given; `tessera run` fails on a bad
 * recipe without opening its input; a session's `runRecipe` (the facade's, and HTTP's through it)
 * runs the same check itself and refuses before any step is queued or staged.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../../../src/adapters/cli/run.js";
import { Registry } from "../../../src/registry/registry.js";
import { BadRequestError } from "../../../src/sdk/errors.js";
import { recipeProblems } from "../../../src/sdk/recipes/check.js";
import { parseRecipe } from "../../../src/sdk/recipes/model.js";
import { Tessera } from "../../../src/sdk/tessera.js";
import { demoDataDir } from "../session/helpers.js";

const RECIPES = fileURLToPath(new URL("../../../recipes/", import.meta.url));
let registry: Registry;
let dir: string;

const BAD = {
  schema_version: 1,
  meta: { name: "bad", description: "A recipe with three mistakes." },
  params: [{ name: "comps", required: true, schema: { type: "integer" } }],
  steps: [
    { namespace: "sc.pp", function: "pca", params: { n_comps: { $param: "comps" } } },
    { namespace: "sc.pp", function: "no_such_step", params: {} },
    { namespace: "sc.pp", function: "neighbors", params: { n_neighbors: 0 } },
  ],
};

beforeAll(async () => {
  registry = await Registry.load();
  dir = await mkdtemp(join(tmpdir(), "tessera-check-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("recipeProblems", () => {
  it("lists every problem the recipe and the registry alone reveal", () => {
    const recipe = parseRecipe(BAD, "bad.json");
    expect(recipeProblems(recipe, registry, { comps: 10, typo: 1 })).toEqual([
      "no such param(s): typo (params: comps)",
      "step 2: unknown function sc.pp.no_such_step",
      expect.stringMatching(/^step 3: .*params\.n_neighbors: must be >= 2/),
    ]);
    expect(recipeProblems(recipe, registry, {})).toEqual([
      "required param(s) without a value: comps",
      "step 2: unknown function sc.pp.no_such_step",
    ]);
    expect(recipeProblems(recipe, registry, { comps: 0.5 })[0]).toMatch(
      /^step 1: .*params\.n_comps: must be integer/,
    );
  });

  it("passes every shipped recipe whose functions are registered, given its required params", () => {
    for (const file of readdirSync(RECIPES).filter((f) => f.endsWith(".json"))) {
      const recipe = parseRecipe(JSON.parse(readFileSync(join(RECIPES, file), "utf8")), file);
      const values = Object.fromEntries(
        (recipe.params ?? []).filter((p) => p.required).map((p) => [p.name, "cell_type"]),
      );
      const problems = recipeProblems(recipe, registry, values).filter(
        (p) => !p.includes("unknown function"),
      );
      expect(problems, file).toEqual([]);
    }
  });
});

it("tessera run refuses a bad recipe before it loads the input", async () => {
  const recipeFile = join(dir, "bad.json");
  await writeFile(recipeFile, JSON.stringify(BAD));
  const lines: string[] = [];
  const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
  await expect(
    runCommand(
      {
        recipe: recipeFile,
        input: join(dir, "huge.h5ad"),
        output: join(dir, "out.sdata.zarr.zip"),
        params: ["comps=10"],
        dataDir: dir,
      },
      io,
    ),
  ).rejects.toThrow(/recipe bad: step 2: unknown function sc\.pp\.no_such_step; step 3: .*n_neighbors/);
  expect(lines.some((l) => l.startsWith("loading"))).toBe(false);
});

it("a session's runRecipe checks the recipe itself: every problem in one 400, nothing queued or staged", async () => {
  const demoDir = await demoDataDir();
  const t = await Tessera.start({
    dataDir: demoDir.dataDir,
    plugins: ["tessera", "testkit"],
    config: { computePoolWorkers: 1 },
  });
  try {
    const s = await t.open(demoDir.demo.slice(demoDir.dataDir.length + 1));
    const events: string[] = [];
    const stop = t.on((e) => events.push(e.event));
    const recipe = parseRecipe(
      {
        schema_version: 1,
        meta: { name: "bad_run", description: "Two bad steps after a good one." },
        steps: [
          { namespace: "custom", function: "sleep", params: { ms: 1 } },
          { namespace: "custom", function: "no_such_step", params: {} },
          { namespace: "custom", function: "sleep", params: { ms: -1 } },
        ],
      },
      "bad_run.json",
    );
    // The same message as Tessera.checkRecipe, before loading.
    expect(() => t.checkRecipe(recipe, { typo: 1 })).toThrow(BadRequestError);
    const refused = s.runRecipe(recipe, { typo: 1 });
    await expect(refused).rejects.toBeInstanceOf(BadRequestError);
    await expect(refused).rejects.toThrow(
      /^recipe bad_run: no such param\(s\): typo \(params: none\); step 2: unknown function custom\.no_such_step; step 3: .*params\.ms/,
    );
    await expect(s.runRecipe(recipe)).rejects.toThrow(
      /step 2: unknown function custom\.no_such_step; step 3:/,
    );
    stop();
    expect(events.filter((e) => e.startsWith("job."))).toEqual([]);
    // Neither a queued nor a staged (pending) step was recorded.
    expect(s.appState.compute_history).toEqual([]);
  } finally {
    await t.close();
    await demoDir.cleanup();
  }
});

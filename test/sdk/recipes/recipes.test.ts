import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyAppState } from "../../../src/sdk/io/checkpoint/app-state.js";
import { discoverRecipes } from "../../../src/sdk/recipes/discover.js";
import { inheritParamSchemas } from "../../../src/sdk/recipes/enums.js";
import { exportRecipe } from "../../../src/sdk/recipes/export.js";
import type { FunctionInfo, FunctionLookup } from "../../../src/sdk/recipes/lookup.js";
import { parseRecipe, type Recipe } from "../../../src/sdk/recipes/model.js";
import { preflight } from "../../../src/sdk/recipes/preflight.js";
import { coerceParamValue, substituteSteps, unresolvedParams } from "../../../src/sdk/recipes/substitute.js";
import { addEntry, transition } from "../../../src/sdk/session/app-state-machine.js";

function fn(
  key: string,
  effect: FunctionInfo["effect_class"],
  properties: Record<string, object>,
): FunctionInfo {
  const [ns, ...rest] = key.split(".");
  const name = rest.pop()!;
  return {
    key,
    namespace: [ns, ...rest].join("."),
    function: name,
    effect_class: effect,
    json_schema: { type: "object", properties },
    ui_schema: Object.fromEntries(
      Object.keys(properties).map((p) => [
        p,
        { widget: p === "flavor" ? "select" : "text", bound_to: null, tooltip: `${p} of ${name}` },
      ]),
    ),
  };
}

const FUNCTIONS = [
  fn("sc.tl.leiden", "compute", {
    resolution: { type: "number", default: 1 },
    key_added: { type: "string", default: "leiden" },
    flavor: { type: "string", enum: ["leidenalg", "igraph"] },
  }),
  fn("sc.tl.louvain", "compute", {
    flavor: { anyOf: [{ type: "string", enum: ["vtraag", "igraph", "rapids"] }, { type: "null" }] },
  }),
  fn("sc.pp.neighbors", "compute", {
    n_neighbors: { type: "integer", default: 15 },
    key_added: { type: ["string", "null"] },
  }),
  fn("pl.umap", "plot", { color: { type: "string" } }),
  fn("custom.rename_obs_column", "compute", { old_name: { type: "string" }, new_name: { type: "string" } }),
];
const lookup: FunctionLookup = { get: (k) => FUNCTIONS.find((f) => f.key === k) };

const RECIPE: Recipe = parseRecipe({
  schema_version: 1,
  meta: { name: "cluster", description: "neighbors then leiden", provenance: { author: "test" } },
  readme: "Clusters cells.",
  params: [
    {
      name: "res",
      schema: { type: "number", default: 0.5 },
      widget: "number",
      bound_to: null,
      required: true,
      tooltip: "resolution",
    },
    { name: "key", schema: { type: "string", default: null }, required: false },
    { name: "flavor", schema: { type: "string", default: "igraph" } },
    { name: "needed", schema: { type: "string" }, required: true },
  ],
  steps: [
    { namespace: "sc.pp", function: "neighbors", params: { n_neighbors: 10, key_added: { $param: "key" } } },
    {
      namespace: "sc.tl",
      function: "leiden",
      params: { resolution: { $param: "res" }, key_added: { $param: "key" }, flavor: { $param: "flavor" } },
    },
    { namespace: "sc.tl", function: "louvain", params: { flavor: { $param: "flavor" } } },
    { namespace: "pl", function: "umap", params: { color: "leiden" } },
  ],
});

describe("parseRecipe", () => {
  it("reads a valid recipe", () => {
    expect(RECIPE.meta).toEqual({
      name: "cluster",
      description: "neighbors then leiden",
      provenance: { author: "test" },
    });
    expect(RECIPE.steps).toHaveLength(4);
    expect(RECIPE.params!.map((p) => p.name)).toEqual(["res", "key", "flavor", "needed"]);
  });

  it("says what is wrong, naming the file", () => {
    const base = { schema_version: 1, meta: { name: "x", description: "" }, steps: [] };
    expect(() => parseRecipe({ ...base, schema_version: 2 }, "r.json")).toThrow(
      "r.json: schema_version must be 1, got 2",
    );
    expect(() => parseRecipe({ ...base, meta: { name: " " } }, "r.json")).toThrow(
      "meta.name must be a non-empty string",
    );
    expect(() => parseRecipe({ ...base, steps: [{ namespace: "sc.tl" }] }, "r.json")).toThrow(
      "steps[0].function must be a non-empty string",
    );
    expect(() =>
      parseRecipe(
        { ...base, steps: [{ namespace: "a", function: "b", params: { x: { $param: "nope" } } }] },
        "r.json",
      ),
    ).toThrow('steps[0] (a.b) refers to undeclared param "nope"');
    expect(() => parseRecipe({ ...base, params: [{ name: "a" }, { name: "a" }] }, "r.json")).toThrow(
      'params[1]: duplicate param name "a"',
    );
    expect(() => parseRecipe([], "r.json")).toThrow("r.json: a recipe is a JSON object");
  });
});

describe("$param substitution", () => {
  it("replaces references, drops nulls, feeds several steps", () => {
    const steps = substituteSteps(RECIPE, { res: 1.5 });
    expect(steps[0]).toEqual({ namespace: "sc.pp", function: "neighbors", params: { n_neighbors: 10 } });
    expect(steps[1]!.params).toEqual({ resolution: 1.5, flavor: "igraph" });
    expect(steps[2]!.params).toEqual({ flavor: "igraph" });
    expect(steps[3]!.params).toEqual({ color: "leiden" });
    const keyed = substituteSteps(RECIPE, { key: "k" });
    expect(keyed[0]!.params.key_added).toBe("k");
    expect(keyed[1]!.params).toEqual({ resolution: 0.5, key_added: "k", flavor: "igraph" });
  });

  it("substitutes inside nested objects and arrays", () => {
    const r = parseRecipe({
      schema_version: 1,
      meta: { name: "n", description: "" },
      params: [
        { name: "c", schema: { default: "#ff0000" } },
        { name: "d", schema: { default: null } },
      ],
      steps: [
        {
          namespace: "custom",
          function: "f",
          params: {
            colors: { A: { $param: "c" }, B: { $param: "d" } },
            list: [{ $param: "c" }, { $param: "d" }],
          },
        },
      ],
    });
    expect(substituteSteps(r)[0]!.params).toEqual({ colors: { A: "#ff0000" }, list: ["#ff0000"] });
  });

  it("lists required params without a value", () => {
    expect(unresolvedParams(RECIPE)).toEqual(["needed"]);
    expect(unresolvedParams(RECIPE, { needed: "x" })).toEqual([]);
    expect(unresolvedParams(RECIPE, { needed: "x", res: null })).toEqual(["res"]);
  });

  it("coerces command-line values by the param's type", () => {
    const p = (type: string) => ({ name: "p", schema: { type } });
    expect(coerceParamValue(p("number"), "0.25")).toBe(0.25);
    expect(coerceParamValue(p("integer"), "12")).toBe(12);
    expect(() => coerceParamValue(p("integer"), "1.5")).toThrow('param p: "1.5" is not an integer');
    expect(coerceParamValue(p("boolean"), "false")).toBe(false);
    expect(coerceParamValue(p("array"), "a, b")).toEqual(["a", "b"]);
    expect(coerceParamValue(p("array"), "[1,2]")).toEqual([1, 2]);
    expect(coerceParamValue(p("object"), '{"a":1}')).toEqual({ a: 1 });
    expect(coerceParamValue(p("string"), "null")).toBeNull();
    expect(coerceParamValue({ name: "p", schema: {} }, "text")).toBe("text");
  });
});

describe("inherited enums", () => {
  it("takes the enum of the function param a recipe param feeds (intersection over several)", () => {
    const params = inheritParamSchemas(RECIPE, lookup);
    const flavor = params.find((p) => p.name === "flavor")!;
    expect(flavor.schema.enum).toEqual(["igraph"]);
    expect(flavor.widget).toBe("select");
    const res = params.find((p) => p.name === "res")!;
    expect(res.schema.enum).toBeUndefined();
    expect(res.tooltip).toBe("resolution");
    const only = parseRecipe({
      schema_version: 1,
      meta: { name: "l", description: "" },
      params: [{ name: "f", schema: {} }],
      steps: [{ namespace: "sc.tl", function: "louvain", params: { flavor: { $param: "f" } } }],
    });
    expect(inheritParamSchemas(only, lookup)[0]!.schema).toEqual({ enum: ["vtraag", "igraph", "rapids"] });
  });
});

describe("preflight", () => {
  it("lists produced fields, unresolved params and unknown functions", () => {
    expect(preflight(RECIPE, lookup, { key: "spatial" })).toEqual({
      produced: [
        "obsp:spatial_connectivities",
        "obsp:spatial_distances",
        "uns:spatial",
        "obs:spatial",
        "obs:louvain",
        "uns:louvain",
      ],
      unresolved: ["needed"],
      unknown_functions: [],
    });
    expect(preflight(RECIPE, lookup, { needed: "x" }).produced).toEqual([
      "obsp:connectivities",
      "obsp:distances",
      "uns:neighbors",
      "obs:leiden",
      "uns:leiden",
      "obs:louvain",
      "uns:louvain",
    ]);
    const r = parseRecipe({
      schema_version: 1,
      meta: { name: "u", description: "" },
      steps: [
        { namespace: "sc.tl", function: "nonesuch", params: {} },
        { namespace: "sc.tl", function: "nonesuch", params: {} },
        { namespace: "custom", function: "rename_obs_column", params: { old_name: "a", new_name: "b" } },
      ],
    });
    expect(preflight(r, lookup)).toEqual({
      produced: ["obs:b"],
      unresolved: [],
      unknown_functions: ["sc.tl.nonesuch"],
    });
  });
});

describe("discovery", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tessera-recipes-"));
    const ok = (name: string) =>
      JSON.stringify({
        schema_version: 1,
        meta: { name, description: `${name}!` },
        steps: [{ namespace: "sc.tl", function: "leiden", params: {} }],
      });
    await writeFile(join(dir, "01_first.json"), ok("first"));
    await writeFile(join(dir, "02_broken.json"), "{ not json");
    await writeFile(join(dir, "03_wrong.json"), JSON.stringify({ schema_version: 1, meta: {}, steps: [] }));
    await writeFile(join(dir, "04_dup.json"), ok("first"));
    await writeFile(
      join(dir, "05_unknown.json"),
      JSON.stringify({
        schema_version: 1,
        meta: { name: "u", description: "" },
        steps: [{ namespace: "x", function: "y", params: {} }],
      }),
    );
    await writeFile(join(dir, "10_second.json"), ok("second"));
    await writeFile(join(dir, "notes.json"), ok("ignored"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("reads NN_*.json in order and reports broken files without failing", async () => {
    const cat = await discoverRecipes(dir, lookup);
    expect(cat.list()).toEqual([
      {
        name: "first",
        description: "first!",
        steps: [{ namespace: "sc.tl", function: "leiden", params: {} }],
      },
      {
        name: "second",
        description: "second!",
        steps: [{ namespace: "sc.tl", function: "leiden", params: {} }],
      },
    ]);
    expect(cat.get("second")?.meta.name).toBe("second");
    const problems = cat.problems.map((p) => [p.file.split("/").pop(), p.message.replaceAll(`${dir}/`, "")]);
    expect(problems).toEqual([
      ["02_broken.json", expect.stringMatching(/^02_broken\.json: not valid JSON/)],
      ["03_wrong.json", "03_wrong.json: meta.name must be a non-empty string"],
      ["04_dup.json", '04_dup.json: recipe name "first" is already used by 01_first.json'],
      ["05_unknown.json", "05_unknown.json: steps name unregistered functions: x.y"],
    ]);
  });

  it("gives an empty catalog for a missing folder", async () => {
    const cat = await discoverRecipes(join(dir, "nope"));
    expect(cat.list()).toEqual([]);
  });

  it("the shipped recipes parse", async () => {
    const cat = await discoverRecipes(new URL("../../../recipes/", import.meta.url).pathname);
    expect(cat.problems).toEqual([]);
    expect(cat.get("annotate_demo")?.steps.map((s) => s.function)).toEqual([
      "rename_obs_column",
      "rename_categories",
      "set_category_colors",
    ]);
    const raw = JSON.parse(
      await readFile(new URL("../../../recipes/01_annotate_demo.json", import.meta.url), "utf8"),
    );
    expect(parseRecipe(raw).params!.map((p) => p.name)).toContain("label_column");
  });
});

describe("export", () => {
  it("exports completed compute steps in order, without readers", () => {
    let s = emptyAppState();
    s = addEntry(s, "r", { namespace: "read", function: "read_data", params: { path: "x" } }, "queued", {});
    s = addEntry(
      s,
      "a",
      { namespace: "sc.pp", function: "neighbors", params: { n_neighbors: 5 } },
      "queued",
      { scanpy: "1" },
    );
    s = addEntry(s, "b", { namespace: "sc.tl", function: "leiden", params: {} }, "queued", { scanpy: "1" });
    s = addEntry(s, "c", { namespace: "sc.tl", function: "umap", params: {} }, "pending", {});
    for (const id of ["r", "a", "b"])
      s = transition(transition(s, id, "running"), id, id === "b" ? "failed" : "completed");
    const r = exportRecipe(s, "demo", { source: "/data/demo.zip" });
    expect(r.steps).toEqual([{ namespace: "sc.pp", function: "neighbors", params: { n_neighbors: 5 } }]);
    expect(r.meta.name).toBe("demo analysis");
    expect(r.meta.provenance).toMatchObject({
      exported_from: "demo",
      source: "/data/demo.zip",
      library_versions: { scanpy: "1" },
    });
    expect(parseRecipe(JSON.parse(JSON.stringify(r)))).toEqual(r);
  });
});

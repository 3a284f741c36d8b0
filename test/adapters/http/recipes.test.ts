import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let annotate: Record<string, unknown>;
beforeAll(async () => {
  t = await startTestServer();
  annotate = JSON.parse(await readFile(join(process.cwd(), "recipes/01_annotate_demo.json"), "utf8"));
});
afterAll(async () => {
  await t?.close();
});

const post = (path: string, json?: unknown, who: { clientId?: string; clientName?: string } = {}) =>
  t.api(path, { method: "POST", ...(json !== undefined ? { json } : {}), ...who });
const history = (id: string) => t.server.service.session(id).appState.compute_history;
const sleepRecipe = (steps: unknown[], extra: object = {}) => ({
  schema_version: 1,
  meta: { name: "naps", description: "sleeps" },
  steps,
  ...extra,
});

describe("GET /api/recipes", () => {
  it("lists the discovered recipes as {name, description, steps} (plus provenance, params and readme)", async () => {
    const r = await t.api("/api/recipes");
    expect(r.status).toBe(200);
    const { recipes } = await r.json();
    const a = recipes.find((x: { name: string }) => x.name === "annotate_demo");
    expect(a.description).toMatch(/compartment/);
    expect(a.steps.map((s: { function: string }) => s.function)).toEqual([
      "rename_obs_column",
      "rename_categories",
      "set_category_colors",
    ]);
    expect(a.params.map((p: { name: string }) => p.name)).toContain("label_column");
    expect(typeof a.readme).toBe("string");
    // The recipe's meta.provenance, for the gallery (null when the file has none).
    expect(a.provenance).toMatchObject({ author: "Tessera" });
    for (const x of recipes)
      expect(Object.keys(x).sort()).toEqual([
        "description",
        "name",
        "params",
        "provenance",
        "readme",
        "steps",
      ]);
  });
});

describe("recipe preflight and run", () => {
  it("preflight says what a recipe produces, leaves unresolved, or cannot find; never gated", async () => {
    const id = await t.openDemo();
    expect(
      (await t.api(`/api/sessions/${id}/lock`, { method: "POST", clientId: "a-client", clientName: "A" }))
        .status,
    ).toBe(200);
    const r = await post(`/api/sessions/${id}/recipe/preflight`, annotate, { clientId: "b-client" });
    expect(r.status).toBe(200);
    const pf = await r.json();
    expect(pf.unresolved).toEqual([]);
    expect(pf.unknown_functions).toEqual([]);
    expect(pf.produced).toContain("obs:compartment");
    const withValues = await (
      await post(`/api/sessions/${id}/recipe/preflight`, { ...annotate, values: { label_column: "zone" } })
    ).json();
    expect(withValues.produced).toContain("obs:zone");
    const odd = {
      schema_version: 1,
      meta: { name: "odd", description: "" },
      params: [{ name: "col", schema: { type: "string" }, required: true }],
      steps: [
        { namespace: "custom", function: "nonesuch", params: {} },
        {
          namespace: "custom",
          function: "rename_obs_column",
          params: { old_name: "cell_type", new_name: { $param: "col" } },
        },
      ],
    };
    const o = await (await post(`/api/sessions/${id}/recipe/preflight`, odd)).json();
    expect(o.unresolved).toEqual(["col"]);
    expect(o.unknown_functions).toEqual(["custom.nonesuch"]);
    expect(history(id)).toEqual([]);
    expect((await t.api(`/api/sessions/${id}/lock`, { method: "DELETE", clientId: "a-client" })).status).toBe(
      200,
    );
  });

  it("runs a recipe: every step queued, with values substituted; GET /recipe gives the steps back", async () => {
    const id = await t.openDemo();
    const r = await post(`/api/sessions/${id}/recipe/run`, { ...annotate, values: { label_column: "zone" } });
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toEqual({ queued: 3, job_ids: expect.any(Array) });
    for (const j of body.job_ids) expect((await t.waitJob(id, j)).status).toBe("completed");
    expect(history(id).map((e) => [e.function, e.status])).toEqual([
      ["rename_obs_column", "completed"],
      ["rename_categories", "completed"],
      ["set_category_colors", "completed"],
    ]);
    expect(history(id)[0]!.params).toMatchObject({ old_name: "cell_type", new_name: "zone" });
    const rec = await t.api(`/api/sessions/${id}/recipe`);
    expect(rec.status).toBe(200);
    const exported = await rec.json();
    expect(exported.schema_version).toBe(1);
    expect(exported.steps.map((s: { function: string }) => s.function)).toEqual([
      "rename_obs_column",
      "rename_categories",
      "set_category_colors",
    ]);
    // The exported recipe runs as posted (on a fresh session).
    const id2 = await t.openDemo();
    const again = await (await post(`/api/sessions/${id2}/recipe/run`, exported)).json();
    expect(again.queued).toBe(3);
    for (const j of again.job_ids) expect((await t.waitJob(id2, j)).status).toBe("completed");
    expect((await t.api("/api/sessions/nope/recipe")).status).toBe(404);
  });

  it("stages a recipe with mode 'stage': pending steps, nothing runs", async () => {
    const id = await t.openDemo();
    const r = await post(`/api/sessions/${id}/recipe/run`, { ...annotate, mode: "stage" });
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toEqual({ staged: 3, step_ids: expect.any(Array) });
    expect(history(id).map((e) => e.status)).toEqual(["pending", "pending", "pending"]);
    expect(await (await post(`/api/sessions/${id}/pending/run-all`)).json()).toEqual({ queued: 3 });
    await t.server.service.session(id).idle();
    expect(history(id).map((e) => e.status)).toEqual(["completed", "completed", "completed"]);
  });

  it("accepts a catalog entry posted back as is (flat name/description, no schema_version)", async () => {
    const id = await t.openDemo();
    const { recipes } = await (await t.api("/api/recipes")).json();
    const entry = recipes.find((x: { name: string }) => x.name === "annotate_demo");
    const r = await post(`/api/sessions/${id}/recipe/run`, { ...entry, mode: "stage" });
    expect(r.status).toBe(200);
    expect((await r.json()).staged).toBe(3);
  });

  it("refuses an invalid recipe with 400 and queues nothing", async () => {
    const id = await t.openDemo();
    const sleep = { namespace: "custom", function: "sleep", params: { ms: 1 } };
    const cases: [unknown, RegExp][] = [
      [[], /recipe is a JSON object/],
      [{ meta: { name: "x" } }, /steps must be an array/],
      [{ ...sleepRecipe([sleep]), schema_version: 2 }, /schema_version must be 1/],
      [
        sleepRecipe([sleep, { namespace: "custom", function: "nonesuch", params: {} }]),
        /step 2: unknown function custom\.nonesuch/,
      ],
      [
        sleepRecipe([sleep, { namespace: "custom", function: "sleep", params: { ms: -1 } }]),
        /step 2: .*params\.ms/,
      ],
      // Every problem at once (the check Tessera.checkRecipe runs before loading).
      [
        sleepRecipe([
          { namespace: "custom", function: "nonesuch", params: {} },
          { namespace: "custom", function: "sleep", params: { ms: -1 } },
        ]),
        /step 1: unknown function custom\.nonesuch; step 2: .*params\.ms/,
      ],
      [sleepRecipe([{ namespace: "custom", params: {} }]), /steps\[0\]\.function/],
      [sleepRecipe([sleep], { values: { nope: 1 } }), /no such param\(s\): nope/],
      [sleepRecipe([sleep], { mode: "later" }), /mode must be "run" or "stage"/],
      [sleepRecipe([sleep], { values: [1] }), /values must be an object/],
      [sleepRecipe([sleep], { surprise: true }), /unknown field "surprise"/],
      [
        sleepRecipe([{ namespace: "custom", function: "sleep", params: { ms: { $param: "t" } } }], {
          params: [{ name: "t", schema: { type: "integer" }, required: true }],
        }),
        /required param\(s\) without a value: t/,
      ],
      [
        sleepRecipe([{ namespace: "custom", function: "sleep", params: { ms: { $param: "zz" } } }]),
        /undeclared param "zz"/,
      ],
    ];
    for (const [body, detail] of cases) {
      const r = await post(`/api/sessions/${id}/recipe/run`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((await r.json()).detail, JSON.stringify(body)).toMatch(detail);
    }
    const pf = await post(`/api/sessions/${id}/recipe/preflight`, { meta: { name: "x" } });
    expect(pf.status).toBe(400);
    expect(history(id)).toEqual([]);
    expect(t.server.service.session(id).queueView()).toEqual([]);
    const ok = await post(`/api/sessions/${id}/recipe/run`, sleepRecipe([sleep, sleep]));
    expect(await ok.json()).toMatchObject({ queued: 2 });
    expect((await post("/api/sessions/nope/recipe/run", sleepRecipe([sleep]))).status).toBe(404);
    expect((await post("/api/sessions/nope/recipe/preflight", sleepRecipe([sleep]))).status).toBe(404);
  });

  it("recipe run is lock-gated (423); preflight and export are not", async () => {
    const id = await t.openDemo();
    await t.api(`/api/sessions/${id}/lock`, {
      method: "POST",
      clientId: "alice-client",
      clientName: "Alice",
    });
    const r = await post(`/api/sessions/${id}/recipe/run`, annotate, { clientId: "bob-client" });
    expect(r.status).toBe(423);
    expect(await r.json()).toEqual({ detail: "session is locked by Alice" });
    expect((await post(`/api/sessions/${id}/recipe/run`, annotate)).status).toBe(423);
    expect(
      (await post(`/api/sessions/${id}/recipe/preflight`, annotate, { clientId: "bob-client" })).status,
    ).toBe(200);
    expect((await t.api(`/api/sessions/${id}/recipe`, { clientId: "bob-client" })).status).toBe(200);
    expect(history(id)).toEqual([]);
  });
});

describe("GET /api/functions", () => {
  it("returns the registry envelope: entries without code locations, library versions", async () => {
    const r = await t.api("/api/functions");
    expect(r.status).toBe(200);
    const env = await r.json();
    expect(Object.keys(env).sort()).toEqual(["functions", "library_versions"]);
    const keys = env.functions.map((f: { key: string }) => f.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const k of ["custom.sleep", "pl.test_scatter", "sc.pp.normalize_total", "read.read_data"])
      expect(keys).toContain(k);
    const sleep = env.functions.find((f: { key: string }) => f.key === "custom.sleep");
    expect(Object.keys(sleep).sort()).toEqual(
      [
        "effect_class",
        "function",
        "json_schema",
        "key",
        "namespace",
        "partially_supported",
        "summary",
        "ui_schema",
        "unsupported_params",
      ].sort(),
    );
    expect(sleep.json_schema.properties.ms.type).toBe("integer");
    for (const lib of ["tessera", "testkit", "scanpy"])
      expect(typeof env.library_versions[lib]).toBe("string");
  });

  it("returns the coverage report", async () => {
    const r = await t.api("/api/functions/coverage");
    expect(r.status).toBe(200);
    const { terms } = await r.json();
    expect(Array.isArray(terms)).toBe(true);
    for (let i = 1; i < terms.length; i++)
      expect(terms[i - 1].functions).toBeGreaterThanOrEqual(terms[i].functions);
  });
});

describe("GET /api/about/licenses", () => {
  it("lists the installed runtime npm packages with their licences, read from node_modules", async () => {
    const r = await t.api("/api/about/licenses");
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.python).toEqual([]);
    const byName = new Map(body.npm.map((p: { name: string }) => [p.name, p]));
    const fastify = JSON.parse(
      await readFile(join(process.cwd(), "node_modules/fastify/package.json"), "utf8"),
    );
    expect(byName.get("fastify")).toEqual({
      name: "fastify",
      version: fastify.version,
      license: fastify.license,
    });
    // Transitive dependencies are there (fastify's own), development tools are not.
    expect(byName.has("find-my-way")).toBe(true);
    expect(byName.has("vitest")).toBe(false);
    expect(byName.has("@biomejs/biome")).toBe(false);
    for (const p of body.npm) expect(p.license).not.toBe("UNKNOWN");
  });
});

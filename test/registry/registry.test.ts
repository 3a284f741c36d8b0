/**
 * The registry at run time: loading manifests of the configured plugins, listing, the API envelope,
 * params validation (defaults, errors naming fields, unknown fields), coverage, importing an
 * operation and running it on the demo data, and a cold startup under 2 s.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { SCANPY_PLUGIN_VERSION } from "../../src/plugins/scanpy/plugin.js";
import { SQUIDPY_PLUGIN_VERSION } from "../../src/plugins/squidpy/plugin.js";
import { ParamsError } from "../../src/registry/errors.js";
import { configuredPlugins, Registry } from "../../src/registry/registry.js";
import type { Categorical } from "../../src/sdk/data/arrays.js";
import { applyChange, type Change } from "../../src/sdk/data/change.js";
import type { SpatialData } from "../../src/sdk/data/spatialdata.js";
import { generateDemo } from "../../src/sdk/demo/generate.js";
import { TESSERA_VERSION } from "../../src/sdk/version.js";
import { testContext } from "../plugins/context.js";

let reg: Registry;
beforeAll(async () => {
  reg = await Registry.load({ plugins: ["tessera", "testkit"] });
});

const paramsError = (fn: () => unknown): ParamsError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ParamsError) return err;
    throw err;
  }
  throw new Error("no ParamsError");
};

describe("loading", () => {
  it("loads the built-in plugin by default and reports library versions", async () => {
    expect(configuredPlugins({})).toEqual([
      "tessera",
      "scanpy",
      "squidpy",
      "plots",
      "spatialdata-io",
      "spatial",
    ]);
    expect(configuredPlugins({ TESSERA_PLUGINS: " tessera, testkit ," })).toEqual(["tessera", "testkit"]);
    const prev = process.env.TESSERA_PLUGINS;
    delete process.env.TESSERA_PLUGINS;
    try {
      const r = await Registry.load();
      expect(r.libraryVersions).toEqual({
        tessera: TESSERA_VERSION,
        scanpy: SCANPY_PLUGIN_VERSION,
        squidpy: SQUIDPY_PLUGIN_VERSION,
        "tessera-plots": TESSERA_VERSION,
        "tessera-spatial": TESSERA_VERSION,
        "spatialdata-io": TESSERA_VERSION,
      });
      const keys = r.list().map((e) => e.key);
      expect(keys.filter((k) => !/^(sc|gr|tl|pl)\./.test(k))).toEqual([
        "custom.annotate_cells",
        "custom.cellular_neighborhoods",
        "custom.cellular_neighborhoods_plot",
        "custom.describe",
        "custom.identify_regions_leiden",
        "custom.identify_tmas",
        "custom.infiltration_profile",
        "custom.infiltration_profile_plot",
        "custom.obs_values",
        "custom.proximity_test",
        "custom.proximity_test_plot",
        "custom.region_boundary",
        "custom.region_composition",
        "custom.region_composition_plot",
        "custom.region_feature_kruskal",
        "custom.region_feature_kruskal_plot",
        "custom.rename_categories",
        "custom.rename_obs_column",
        "custom.set_category_colors",
        "im.calculate_image_features",
        "im.segment",
        "io.cosmx",
        "io.merscope",
        "io.read_10x_h5",
        "io.read_10x_mtx",
        "io.read_zarr",
        "io.visium",
        "io.visium_hd",
        "io.xenium",
        "read.nanostring",
        "read.open_data",
        "read.read_data",
        "read.visium",
        "read.vizgen",
      ]);
      expect(keys).toEqual(
        expect.arrayContaining([
          "sc.pp.normalize_total",
          "sc.tl.leiden",
          "sc.get.rank_genes_groups_df",
          "gr.spatial_neighbors",
          "sc.pl.dotplot",
        ]),
      );
      process.env.TESSERA_PLUGINS = "tessera,testkit";
      expect((await Registry.load()).get("custom.noop")).toBeDefined();
    } finally {
      if (prev === undefined) delete process.env.TESSERA_PLUGINS;
      else process.env.TESSERA_PLUGINS = prev;
    }
  });

  it("reports every plugin's version", () => {
    expect(reg.libraryVersions).toEqual({ tessera: TESSERA_VERSION, testkit: TESSERA_VERSION });
  });

  it("names unknown plugins, missing manifests and duplicate functions", async () => {
    await expect(Registry.load({ plugins: ["nope"] })).rejects.toThrow(
      /plugin "nope": not a built-in plugin \(.*tessera.*\), a folder, a plugin in TESSERA_PLUGIN_PATH \(.*test\/plugins\), nor an npm package installed in /,
    );
    await expect(Registry.load({ plugins: ["@scope/pkg"] })).rejects.toThrow(
      'plugin "@scope/pkg": not a built-in plugin',
    );
    await expect(Registry.load({ plugins: ["./nope"] })).rejects.toThrow(
      /plugin "\.\/nope": no manifest at .*nope[\\/]manifest\.json/,
    );
    const dir = await mkdtemp(join(tmpdir(), "tessera-reg-"));
    try {
      const manifest = readFileSync(
        fileURLToPath(new URL("../../src/plugins/tessera/manifest.json", import.meta.url)),
        "utf8",
      );
      await writeFile(join(dir, "manifest.json"), manifest.replace('"name": "tessera"', '"name": "copy"'));
      await expect(Registry.load({ plugins: ["tessera", dir] })).rejects.toThrow(
        /function custom.rename_obs_column is defined by both plugin "tessera" and plugin ".*tessera-reg-/,
      );
      await writeFile(join(dir, "manifest.json"), '{"library": {"name": "x"}}');
      await expect(Registry.load({ plugins: [dir] })).rejects.toThrow(
        "invalid manifest: library must be {name, version}",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("resolves each entry's module to an absolute file URL of the source", () => {
    const e = reg.require("custom.rename_obs_column");
    expect(e.module).toMatch(/^file:\/\/\/.*\/src\/plugins\/tessera\/custom\.ts$/);
    expect(e).toMatchObject({
      export: "rename_obs_column",
      library: "tessera",
      namespace: "custom",
      function: "rename_obs_column",
    });
    expect(reg.require("pl.test_scatter").module).toMatch(/\/test\/plugins\/testkit\/plots\.ts$/);
  });

  it("get, require", () => {
    expect(reg.get("custom.nope")).toBeUndefined();
    expect(() => reg.require("custom.nope")).toThrow("unknown function custom.nope");
  });
});

describe("envelope", () => {
  it("lists entries as GET /api/functions does", () => {
    const env = reg.envelope();
    expect(env.library_versions).toEqual({ tessera: TESSERA_VERSION, testkit: TESSERA_VERSION });
    expect(env.functions).toHaveLength(reg.list().length);
    const e = env.functions.find((f) => f.key === "custom.with_callback")!;
    expect(Object.keys(e).sort()).toEqual(
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
    expect(e).toMatchObject({
      partially_supported: true,
      unsupported_params: ["on_value", "rng"],
      effect_class: "extract",
    });
    expect(JSON.parse(JSON.stringify(env))).toEqual(env);
  });
});

describe("validation", () => {
  it("fills defaults and leaves the input alone", () => {
    const input = { cluster_key: "cell_type" };
    expect(reg.validate("custom.echo_params", input)).toEqual({
      cluster_key: "cell_type",
      n_neighbors: 15,
      method: "umap",
      resolution: 1,
    });
    expect(input).toEqual({ cluster_key: "cell_type" });
    expect(reg.validate("custom.sleep", undefined)).toEqual({ ms: 1000 });
    expect(reg.validate("custom.obs_values", { column: "x" })).toEqual({ column: "x", limit: 1000 });
    expect(reg.validate("custom.describe", {})).toEqual({});
  });

  it("names the field and the rule", () => {
    const e = paramsError(() => reg.validate("custom.echo_params", { cluster_key: "c", n_neighbors: 0 }));
    expect(e.message).toBe("custom.echo_params: params.n_neighbors: must be >= 1");
    expect(e.field).toBe("params.n_neighbors");
    expect(
      paramsError(() => reg.validate("custom.echo_params", { cluster_key: "c", n_neighbors: 2.5 })).message,
    ).toBe("custom.echo_params: params.n_neighbors: must be integer");
    expect(
      paramsError(() => reg.validate("custom.echo_params", { cluster_key: "c", method: "pca" })).message,
    ).toBe('custom.echo_params: params.method: must be one of "umap", "gauss"');
    const missing = paramsError(() => reg.validate("custom.rename_obs_column", { old_name: "a" }));
    expect(missing.field).toBe("params.new_name");
    expect(missing.message).toBe("custom.rename_obs_column: params.new_name: is required");
    const nested = paramsError(() =>
      reg.validate("custom.annotate_cells", { region_set: "r", category: "a", cell_indices: [1, -2, 0.5] }),
    );
    expect(nested.field).toBe("params.cell_indices[1]");
    expect(nested.problems).toEqual([
      "params.cell_indices[1]: must be >= 0",
      "params.cell_indices[2]: must be integer",
    ]);
    expect(
      paramsError(() => reg.validate("custom.set_category_colors", { key: "k", colors: { a: "red" } }))
        .message,
    ).toMatch(/params\.colors\.a: must match pattern/);
  });

  it("coerces nothing", () => {
    expect(paramsError(() => reg.validate("custom.sleep", { ms: "100" })).message).toBe(
      "custom.sleep: params.ms: must be integer",
    );
    expect(
      paramsError(() => reg.validate("custom.echo_params", { cluster_key: "c", copy: "true" })).field,
    ).toBe("params.copy");
  });

  it("rejects unknown fields and locked ones", () => {
    const e = paramsError(() => reg.validate("custom.noop", { foo: 1 }));
    expect(e.field).toBe("params.foo");
    expect(e.message).toBe(
      "custom.noop: params.foo: unknown parameter (must NOT have additional properties)",
    );
    expect(paramsError(() => reg.validate("custom.with_callback", { on_value: "x" })).message).toBe(
      "custom.with_callback: params.on_value: cannot be set (not expressible in JSON; locked to its default)",
    );
    expect(paramsError(() => reg.validate("custom.noop", [1])).message).toBe(
      "custom.noop: params: must be an object, got an array",
    );
    expect(() => reg.validate("custom.nope", {})).toThrow("unknown function custom.nope");
  });
});

describe("coverage", () => {
  it("ranks the param terms no rule matched by how many functions use them", () => {
    const { terms } = reg.coverage();
    expect(terms[0]).toEqual({ term: "message", functions: 2, examples: ["custom.fail", "custom.sleep"] });
    const names = terms.map((t) => t.term);
    expect(names).toEqual([
      "message",
      "category",
      "cell_indices",
      "copy",
      "delay_ms",
      "limit",
      "max_points",
      "method",
      "mode",
      "ms",
      "n_neighbors",
      "new_name",
      "options",
      "polygons",
      "resolution",
      "scale",
    ]);
    // matched by a rule or a tag: never listed
    for (const matched of [
      "cluster_key",
      "genes",
      "key",
      "mapping",
      "colors",
      "column",
      "path",
      "meta_file",
      "color",
      "old_name",
    ]) {
      expect(names).not.toContain(matched);
    }
    for (let i = 1; i < terms.length; i++)
      expect(terms[i - 1]!.functions).toBeGreaterThanOrEqual(terms[i]!.functions);
  });
});

describe("load(key)", () => {
  let sd: SpatialData;
  beforeAll(() => {
    sd = generateDemo({ nCells: 300 });
  });

  it("returns a callable that works on the demo data", async () => {
    const annotate = await reg.load("custom.annotate_cells");
    const params = reg.validate("custom.annotate_cells", {
      region_set: "roi",
      category: "a",
      cell_indices: [0, 1, 2],
    });
    const change = (await annotate(sd, params, testContext().ctx)) as Change;
    const { sdata } = applyChange(sd, change);
    expect(Array.from((sdata.tables.table!.obs.columns.roi as Categorical).codes.slice(0, 4))).toEqual([
      0, 0, 0, -1,
    ]);
    const values = await (await reg.load("custom.obs_values"))(
      sdata,
      reg.validate("custom.obs_values", { column: "roi" }),
      testContext().ctx,
    );
    expect(values).toEqual({
      column: "roi",
      values: [
        { value: "a", count: 3 },
        { value: null, count: 297 },
      ],
    });
    expect(await reg.load("custom.annotate_cells")).toBe(annotate);
  });

  it("fails naming the function when the export is missing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tessera-reg-"));
    try {
      await writeFile(join(dir, "ops.js"), "export const other = 1;\n");
      const manifest = {
        library: { name: "broken", version: "1" },
        functions: [
          {
            namespace: "custom",
            function: "gone",
            effect_class: "compute",
            summary: "Gone.",
            json_schema: { type: "object" },
            ui_schema: {},
            partially_supported: false,
            unsupported_params: [],
            module: "./ops.js",
            export: "gone",
          },
        ],
      };
      await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
      const r = await Registry.load({ plugins: [dir] });
      await expect(r.load("custom.gone")).rejects.toThrow(
        /custom\.gone: file:.*ops\.js has no exported function "gone"/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("startup", () => {
  it("the runtime registry never imports the TypeScript compiler", () => {
    const dir = fileURLToPath(new URL("../../src/registry/", import.meta.url));
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".ts"))) {
      expect(readFileSync(join(dir, f), "utf8"), f).not.toMatch(
        /from "(typescript|ts-json-schema-generator)"|\.\/build\//,
      );
    }
  });

  it("a cold start (import + read manifests) takes under 2 s", async () => {
    const probe = fileURLToPath(new URL("./startup-probe.ts", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", probe], {
      cwd: fileURLToPath(new URL("../../", import.meta.url)),
    });
    const { ms, functions, tsLoaded } = JSON.parse(stdout) as {
      ms: number;
      functions: number;
      tsLoaded: boolean;
    };
    expect(functions).toBe(16);
    expect(tsLoaded).toBe(false);
    expect(ms).toBeLessThan(2000);
  });
});

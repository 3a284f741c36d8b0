/**
 * The committed manifests: regenerating them from the sources gives the same bytes (they never
 * drift), and their content is what the sources say (schemas, defaults, enums, integers, required,
 * UI widgets by rule and by tag, path kinds, unsupported params).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildManifest, manifestText, pluginFolders } from "../../src/registry/build/build-manifest.js";
import { checkManifest, type Manifest, type ManifestFunction } from "../../src/registry/manifest.js";

const PLUGINS = fileURLToPath(new URL("../../src/plugins/", import.meta.url));
/** The test-only plugins (testkit), not shipped. */
const TEST_PLUGINS = fileURLToPath(new URL("../plugins/", import.meta.url));
const read = (name: string): Manifest =>
  checkManifest(
    JSON.parse(
      readFileSync(join(name === "testkit" ? TEST_PLUGINS : PLUGINS, name, "manifest.json"), "utf8"),
    ),
    name,
  );
const fn = (m: Manifest, name: string): ManifestFunction => {
  const f = m.functions.find((x) => x.function === name);
  if (!f) throw new Error(`no ${name}`);
  return f;
};

describe("manifests are generated, never edited", () => {
  it("finds every built-in plugin folder", () => {
    expect(pluginFolders(PLUGINS).map((d) => d.slice(PLUGINS.length))).toEqual([
      "plots",
      "scanpy",
      "spatial",
      "spatialdata-io",
      "squidpy",
      "tessera",
    ]);
  });

  it.each(["plots", "scanpy", "spatial", "tessera", "testkit"])(
    "regenerating %s gives byte-identical manifest.json",
    async (name) => {
      const dir = join(name === "testkit" ? TEST_PLUGINS : PLUGINS, name);
      const committed = readFileSync(join(dir, "manifest.json"), "utf8");
      const fresh = manifestText(await buildManifest(dir));
      expect(fresh).toBe(committed);
    },
  );
});

describe("tessera manifest", () => {
  const m = read("tessera");

  it("lists the service's functions in source order with their library", () => {
    expect(m.library.name).toBe("tessera");
    expect(m.functions.map((f) => `${f.namespace}.${f.function}:${f.effect_class}`)).toEqual([
      "custom.rename_obs_column:compute",
      "custom.rename_categories:compute",
      "custom.set_category_colors:compute",
      "custom.annotate_cells:compute",
      "custom.obs_values:extract",
      "custom.describe:extract",
      "read.read_data:read",
      "read.open_data:read",
    ]);
    expect(fn(m, "annotate_cells")).toMatchObject({ module: "./custom.js", export: "annotate_cells" });
    expect(fn(m, "read_data").module).toBe("./read.js");
    // One reader under two names: open_data is an alias of read_data, with the same params.
    expect(fn(m, "open_data").json_schema).toEqual(fn(m, "read_data").json_schema);
  });

  it("takes the summary from the first sentence of the TSDoc", () => {
    expect(fn(m, "rename_obs_column").summary).toBe("Rename an obs column of the active table.");
    expect(fn(m, "describe").summary).toBe(
      "List the object's elements: tables with their slots, images, labels, shapes, points and coordinate systems.",
    );
  });

  it("writes draft-07 schemas with required fields, integers through definitions, and no UI tags", () => {
    const a = fn(m, "annotate_cells").json_schema;
    expect(a).toMatchObject({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      required: ["region_set", "category"],
      additionalProperties: false,
      properties: {
        category: { type: "string", minLength: 1 },
        cell_indices: { type: "array", minItems: 1, items: { $ref: "#/definitions/CellIndex" } },
      },
      definitions: { CellIndex: { type: "integer", minimum: 0 } },
    });
    expect(JSON.stringify(m.functions.map((f) => f.json_schema))).not.toMatch(
      /"(widget|boundTo|pathKind|tooltip)":/,
    );
    expect(fn(m, "obs_values").json_schema).toMatchObject({
      required: ["column"],
      properties: { limit: { type: "integer", minimum: 1, default: 1000 } },
    });
    expect(fn(m, "set_category_colors").json_schema).toMatchObject({
      properties: { colors: { type: "object", additionalProperties: { $ref: "#/definitions/HexColor" } } },
      definitions: { HexColor: { type: "string", pattern: "^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$" } },
    });
  });

  it("gives UI widgets by tag and by rule", () => {
    expect(fn(m, "rename_categories").ui_schema).toEqual({
      key: {
        widget: "obs_categorical",
        bound_to: null,
        tooltip: "The categorical obs column whose categories to rename.",
        path_kind: null,
      },
      mapping: {
        widget: "obs_value_map",
        bound_to: "key",
        tooltip: "Old category → new category; categories not listed keep their name.",
        path_kind: null,
      },
    });
    expect(fn(m, "rename_obs_column").ui_schema.old_name!.widget).toBe("obs_key");
    expect(fn(m, "rename_obs_column").ui_schema.new_name!.widget).toBe("text");
    expect(fn(m, "annotate_cells").ui_schema.cell_indices!.widget).toBe("json");
    expect(fn(m, "open_data").ui_schema.path).toMatchObject({
      widget: "text",
      path_kind: "either",
      bound_to: null,
    });
  });
});

describe("testkit manifest", () => {
  const m = read("testkit");

  it("has one function per exported operation, namespaces per module", () => {
    expect(m.functions.map((f) => `${f.namespace}.${f.function}`)).toEqual([
      "custom.noop",
      "custom.sleep",
      "custom.fail",
      "custom.crash",
      "custom.with_callback",
      "custom.echo_params",
      "pl.test_scatter",
      "io.open_with_meta",
    ]);
    expect(fn(m, "test_scatter").effect_class).toBe("plot");
    expect(fn(m, "open_with_meta").effect_class).toBe("read");
  });

  it("reflects defaults, enums, integers, bounds and required fields", () => {
    const e = fn(m, "echo_params").json_schema as { properties: Record<string, object>; required: string[] };
    expect(e.required).toEqual(["cluster_key"]);
    expect(e.properties.n_neighbors).toEqual({
      type: "integer",
      description: "Number of neighbours.",
      minimum: 1,
      default: 15,
    });
    expect(e.properties.method).toEqual({
      type: "string",
      enum: ["umap", "gauss"],
      description: "Connectivity method.",
      default: "umap",
    });
    expect(e.properties.genes).toMatchObject({ type: "array", items: { type: "string" } });
    expect(e.properties.resolution).toMatchObject({ type: "number", minimum: 0, default: 1 });
    expect(fn(m, "sleep").json_schema).toMatchObject({
      properties: { ms: { type: "integer", minimum: 0, maximum: 3600000, default: 1000 } },
    });
    expect(fn(m, "noop").json_schema).toMatchObject({ type: "object" });
  });

  it("gives every field its widget", () => {
    const ui = fn(m, "echo_params").ui_schema;
    const widgets = Object.fromEntries(Object.entries(ui).map(([k, v]) => [k, v.widget]));
    expect(widgets).toEqual({
      n_neighbors: "number",
      method: "select",
      cluster_key: "obs_categorical",
      genes: "var_names",
      layer: "layer_key",
      use_rep: "obsm_key",
      connectivity_key: "obsp_key",
      library_id: "library_id",
      score_key: "obs_key",
      color: "obs_key",
      resolution: "number",
      copy: "checkbox",
      options: "json",
    });
    expect(ui.color!.tooltip).toBe("Pick any obs column.");
    expect(ui.genes!.tooltip).toBe("Genes to use.");
    expect(fn(m, "test_scatter").ui_schema.basis!.widget).toBe("obsm_key");
  });

  it("marks path params and binds relative files to the primary path", () => {
    expect(fn(m, "open_with_meta").ui_schema).toMatchObject({
      path: { widget: "text", path_kind: "either", bound_to: null },
      meta_file: { widget: "text", path_kind: "file", bound_to: "path" },
    });
  });

  it("locks params JSON cannot express", () => {
    const f = fn(m, "with_callback");
    expect(f.partially_supported).toBe(true);
    expect(f.unsupported_params).toEqual(["on_value", "rng"]);
    expect(Object.keys((f.json_schema as { properties: object }).properties)).toEqual(["scale"]);
    expect(f.json_schema).not.toHaveProperty("definitions");
    expect(Object.keys(f.ui_schema)).toEqual(["scale"]);
    expect(fn(m, "noop").partially_supported).toBe(false);
  });
});

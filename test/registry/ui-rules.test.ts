/** The ui_schema rules: tags win, then names (as scanpy/squidpy users expect), then types. */
import { describe, expect, it } from "vitest";
import {
  decideUi,
  deref,
  firstSentence,
  isGeneric,
  primaryPathParam,
  type SchemaNode,
  typeWidget,
} from "../../src/registry/ui-rules.js";

const S = { type: "string" } as const;
const decide = (name: string, schema: SchemaNode = S, tags = {}, names: string[] = [name]) =>
  decideUi(name, schema, tags, names.includes(name) ? names : [...names, name]);

describe("widget by name", () => {
  it.each([
    ["cluster_key", "obs_categorical"],
    ["groupby", "obs_categorical"],
    ["batch_key", "obs_categorical"],
    ["key", "obs_categorical"],
    ["library_key", "obs_categorical"],
    ["score_key", "obs_key"],
    ["size_key", "obs_key"],
    ["genes", "var_names"],
    ["var_names", "var_names"],
    ["gene_symbols", "var_names"],
    ["layer", "layer_key"],
    ["use_rep", "obsm_key"],
    ["basis", "obsm_key"],
    ["obsm_key", "obsm_key"],
    ["spatial_key", "obsm_key"],
    ["connectivity_key", "obsp_key"],
    ["neighbors_key", "obsp_key"],
    ["obsp", "obsp_key"],
    ["library_id", "library_id"],
  ])("%s → %s", (name, widget) => {
    const d = decide(name);
    expect(d.field.widget).toBe(widget);
    expect(d.source).toBe("rule");
    expect(d.field.path_kind).toBeNull();
  });

  it("does not take uns keys or key_added for obs keys", () => {
    expect(decide("uns_key").field.widget).toBe("text");
    expect(decide("key_added").source).toBe("type");
  });
});

describe("paths", () => {
  it("marks reader path params with their kind", () => {
    expect(decide("path").field).toMatchObject({ widget: "text", path_kind: "either", bound_to: null });
    expect(decide("input").field.path_kind).toBe("either");
    expect(decide("image_path").field.path_kind).toBe("file");
    expect(decide("alignment_file").field).toMatchObject({ path_kind: "file", bound_to: null });
    expect(decide("output_dir").field.path_kind).toBe("folder");
  });

  it("binds relative files to the primary path param", () => {
    const names = ["path", "counts_file", "meta_file"];
    expect(decide("counts_file", S, {}, names).field).toMatchObject({ path_kind: "file", bound_to: "path" });
    expect(decide("meta_file", S, {}, ["input", "meta_file"]).field.bound_to).toBe("input");
    expect(decide("meta_file", S, {}, ["meta_file"]).field.bound_to).toBeNull();
    expect(primaryPathParam(["image_path", "path"])).toBe("path");
  });

  it("keeps a list of paths a multitext", () => {
    expect(decide("path", { type: "array", items: S }).field).toMatchObject({
      widget: "multitext",
      path_kind: "either",
    });
  });
});

describe("widget by type", () => {
  it.each([
    [{ type: "boolean" }, "checkbox"],
    [{ type: "number" }, "number"],
    [{ type: "integer" }, "number"],
    [{ type: ["integer", "null"] }, "number"],
    [{ type: "string", enum: ["a", "b"] }, "select"],
    [{ anyOf: [{ type: "string", enum: ["a"] }, { type: "null" }] }, "select"],
    [{ type: "array", items: { type: "string" } }, "multitext"],
    [{ anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] }, "multitext"],
    [{ type: "string" }, "text"],
    [{ type: "object" }, "json"],
    [{ type: "array", items: { type: "number" } }, "json"],
  ])("%j → %s", (schema, widget) => {
    expect(typeWidget(schema)).toBe(widget);
    expect(decide("some_param", schema).source).toBe("type");
  });
});

describe("tags", () => {
  it("win over names and types", () => {
    const d = decide("genes", S, { widget: "obs_key", tooltip: "  Pick \n one. " });
    expect(d.field).toEqual({ widget: "obs_key", bound_to: null, tooltip: "Pick one.", path_kind: null });
    expect(d.source).toBe("tag");
    expect(decide("where", S, { pathKind: "folder" }).field.path_kind).toBe("folder");
    expect(
      decide("mapping", { type: "object" }, { widget: "obs_value_map", boundTo: "key" }, ["key", "mapping"])
        .field,
    ).toMatchObject({ widget: "obs_value_map", bound_to: "key" });
  });

  it("are checked", () => {
    expect(() => decide("x", S, { widget: "slider" })).toThrow("@widget slider is not one of");
    expect(() => decide("x", S, { pathKind: "dir" })).toThrow("@pathKind dir");
    expect(() => decide("x", S, { boundTo: "nope" })).toThrow("@boundTo nope names no param");
  });

  it("tooltip falls back to the description", () => {
    expect(decide("x", { type: "string", description: "A thing.\n More." }).field.tooltip).toBe(
      "A thing. More.",
    );
    expect(decide("x").field.tooltip).toBeNull();
  });
});

describe("helpers", () => {
  it("firstSentence", () => {
    expect(firstSentence("Cluster cells. With Leiden.")).toBe("Cluster cells.");
    expect(firstSentence("Compute a graph (k-NN, e.g. 15)\n neighbours.\n\nMore.")).toBe(
      "Compute a graph (k-NN, e.g. 15) neighbours.",
    );
    expect(firstSentence("Use v1.2 files. Then more.")).toBe("Use v1.2 files.");
    expect(firstSentence("No period")).toBe("No period");
  });

  it("deref resolves definitions inside items", () => {
    const root = { definitions: { CellIndex: { type: "integer", minimum: 0 } } };
    expect(deref({ type: "array", items: { $ref: "#/definitions/CellIndex" } }, root)).toEqual({
      type: "array",
      items: { type: "integer", minimum: 0 },
    });
  });

  it("isGeneric tells type-only params from rule and tag matches", () => {
    expect(
      isGeneric("resolution", { type: "number" }, { widget: "number", bound_to: null, path_kind: null }, []),
    ).toBe(true);
    expect(
      isGeneric("cluster_key", S, { widget: "obs_categorical", bound_to: null, path_kind: null }, []),
    ).toBe(false);
    expect(isGeneric("column", S, { widget: "obs_key", bound_to: null, path_kind: null }, [])).toBe(false);
  });
});

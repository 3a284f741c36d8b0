/**
 * The generated forms' model against the real scanpy manifest: widgets of the closed set, defaults,
 * the params sent, and the field a real server 400 message names.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  defaultsOf,
  docsOf,
  type FunctionEntry,
  fieldErrorsOf,
  paramsToSend,
  widgetOf,
} from "../../../src/ui/app/form-model.js";
import { groupFunctions } from "../../../src/ui/app/function-groups.js";

const manifest = JSON.parse(readFileSync("src/plugins/scanpy/manifest.json", "utf8")) as {
  functions: Omit<FunctionEntry, "key">[];
};
const entries: FunctionEntry[] = manifest.functions.map((f) => ({
  ...f,
  key: `${f.namespace}.${f.function}`,
}));
const byKey = (k: string) => entries.find((e) => e.key === k)!;

describe("form model", () => {
  it("maps normalize_total's params to widgets of the closed set", () => {
    const e = byKey("sc.pp.normalize_total");
    const props = e.json_schema.properties!;
    const w = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, widgetOf(s, e.ui_schema[k])]));
    expect(w).toEqual({
      target_sum: "number",
      exclude_highly_expressed: "checkbox",
      max_fraction: "number",
      key_added: "text",
      layer: "layer_key",
    });
  });

  it("gives select only to a closed set of literals and text to an unknown type", () => {
    expect(widgetOf({ type: "string", enum: ["a", "b"] }, { widget: "text" })).toBe("select");
    expect(widgetOf({ type: "string" }, { widget: "select" })).toBe("select");
    expect(widgetOf({}, undefined)).toBe("text");
    expect(widgetOf({ type: "string" }, { widget: "no_such_widget" })).toBe("text");
    expect(widgetOf({ type: "array", items: { type: "string" } }, undefined)).toBe("multitext");
  });

  it("starts from the schema defaults and leaves blank fields out", () => {
    const e = byKey("sc.pp.normalize_total");
    const d = defaultsOf(e);
    expect(d).toMatchObject({ target_sum: null, exclude_highly_expressed: false, max_fraction: 0.05 });
    expect(paramsToSend(e, { ...d, key_added: "", layer: undefined })).toEqual({
      target_sum: null,
      exclude_highly_expressed: false,
      max_fraction: 0.05,
    });
    // null is sent only where the schema admits it.
    expect(paramsToSend(e, { max_fraction: null })).toEqual({});
  });

  it("puts a server 400 on the field it names", () => {
    const e = byKey("sc.pp.normalize_total");
    const errs = fieldErrorsOf(
      e,
      "sc.pp.normalize_total: params.target_sum: must be > 0; params.max_fraction: must be <= 1",
    );
    expect(errs).toEqual({ target_sum: "must be > 0", max_fraction: "must be <= 1" });
    expect(fieldErrorsOf(e, "session is read-only")).toEqual({ "": "session is read-only" });
  });

  it("links scanpy docs and groups custom namespaces first", () => {
    expect(docsOf(byKey("sc.pp.log1p"))?.docs).toBe(
      "https://scanpy.readthedocs.io/en/stable/api/generated/scanpy.pp.log1p.html",
    );
    const custom: FunctionEntry = {
      ...byKey("sc.pp.log1p"),
      namespace: "custom",
      function: "x",
      key: "custom.x",
    };
    const groups = groupFunctions([...entries, custom], "", ["compute"]);
    expect(groups[0]![0]).toBe("custom");
    const found = groupFunctions(entries, "LOG1P", ["compute"]);
    expect(found.flatMap(([, fs]) => fs.map((f) => f.key))).toEqual(["sc.pp.log1p"]);
  });
});

import { describe, expect, it } from "vitest";
import { formatFieldPath, parseFieldPath } from "../../../src/sdk/data/fieldpath.js";

describe("FieldPath", () => {
  it.each([
    "obs:leiden",
    "X:CD3E",
    "X",
    "obsm:X_umap",
    "obsp:connectivities",
    "layers:counts",
    "uns:neighbors",
    "var:highly_variable",
    "tables:table:obs",
    "tables:table:obs:leiden",
    "tables:my_table",
    "images:blobs_image",
    "shapes:cells",
    "obs:odd:name:with:colons",
  ])("round-trips %s", (s) => {
    expect(formatFieldPath(parseFieldPath(s))).toBe(s);
  });

  it("parses keys with colons whole", () => {
    expect(parseFieldPath("X:HLA:DRA")).toEqual({ kind: "table", slot: "X", key: "HLA:DRA" });
    expect(parseFieldPath("tables:t1:obsm:spatial")).toEqual({
      kind: "table",
      table: "t1",
      slot: "obsm",
      key: "spatial",
    });
  });

  it.each(["", "foo:bar", "obs:", "images", "tables::obs", "tables:t:images:x"])(
    "rejects %j with a message",
    (s) => {
      expect(() => parseFieldPath(s)).toThrow(/invalid field path/);
    },
  );
});

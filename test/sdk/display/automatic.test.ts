import { describe, expect, it } from "vitest";
import { missingAutomaticDisplays } from "../../../src/sdk/display/automatic.js";

let counter = 0;
const newId = () => `d${++counter}`;

describe("missingAutomaticDisplays", () => {
  const fields = {
    obs: [
      { name: "region", kind: "categorical" },
      { name: "total_counts", kind: "numeric" },
      { name: "batch", kind: "categorical" },
      { name: "leiden", kind: "categorical" },
    ],
    obsm: [{ name: "X_pca" }, { name: "spatial" }, { name: "X_umap" }],
  };

  it("adds a spatial canvas and the preferred embedding, coloured by a familiar grouping", () => {
    const out = missingAutomaticDisplays([], fields, newId);
    expect(out.map((d) => [d.type, d.encoding])).toEqual([
      ["spatial_canvas", { coords: "obsm:spatial", color_by: "obs:leiden" }],
      ["embedding_canvas", { obsm_key: "X_umap", color_by: "obs:leiden" }],
    ]);
  });

  it("adds only what is missing, nothing without spatial coordinates or an embedding", () => {
    const spatial = missingAutomaticDisplays([], fields, newId)[0]!;
    expect(missingAutomaticDisplays([spatial], fields, newId).map((d) => d.type)).toEqual([
      "embedding_canvas",
    ]);
    expect(missingAutomaticDisplays([], { obs: [], obsm: [{ name: "X_umap_other" }] }, newId)).toEqual([]);
    // Region keys are never the colouring; without a grouping the colour is left unset.
    const bare = missingAutomaticDisplays(
      [],
      { obs: [{ name: "region", kind: "categorical" }], obsm: [{ name: "spatial" }] },
      newId,
    );
    expect(bare[0]!.encoding).toEqual({ coords: "obsm:spatial", color_by: null });
  });
});

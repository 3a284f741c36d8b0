import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { emptyAppState } from "../../../../src/sdk/io/checkpoint/app-state.js";
import { checkpointSchemas } from "../../../../src/sdk/io/checkpoint/schema-gen.js";
import { validateAppState, validateSidecar } from "../../../../src/sdk/io/checkpoint/validate.js";

describe("checkpoint schemas", () => {
  it("committed schema files equal what the TypeScript types generate", () => {
    for (const [file, schema] of Object.entries(checkpointSchemas())) {
      const committed = JSON.parse(
        readFileSync(new URL(`../../../../schemas/checkpoint/${file}`, import.meta.url), "utf8"),
      );
      expect(committed, `${file} is stale: run npm run schemas`).toEqual(schema);
    }
  });

  it("accepts a valid app state and rejects bad ones naming the field", () => {
    expect(() => validateAppState(emptyAppState())).not.toThrow();
    expect(() => validateAppState({ ...emptyAppState(), schema_version: 2 })).toThrow(/schema_version/);
    const bad = {
      ...emptyAppState(),
      compute_history: [{ id: "a", namespace: "sc.pp", function: "pca", params: {}, status: "done" }],
    };
    expect(() => validateAppState(bad)).toThrow(/invalid app state: .*compute_history\/0/);
  });

  it("rejects a sidecar with a non-integer level", () => {
    const sidecar = {
      version: 2,
      writer: { name: "tessera", version: "0" },
      name: "x",
      active_table: null,
      coordinate_system: "global",
      tables: [],
      images: [
        {
          name: "i",
          path: "images/i",
          levels: [{ level: 0.5, width: 1, height: 1, path: "s0" }],
          channels: [],
          dtype: "uint8",
          pixel_to_world: null,
        },
      ],
      labels: [],
      shapes: [],
      points: [],
      figures: [],
      app_state: "viewer/app_state",
    };
    expect(() => validateSidecar(sidecar)).toThrow(/level must be integer/);
    sidecar.images[0]!.levels[0]!.level = 0;
    expect(() => validateSidecar(sidecar)).not.toThrow();
  });
});

/**
 * Build-time generation of the checkpoint JSON Schemas from the TypeScript types in `app-state.ts` and
 * `sidecar.ts` (ts-json-schema-generator). Not imported at run time: the generated files in
 * `schemas/checkpoint/` are what validation loads.
 */
import { fileURLToPath } from "node:url";
import { createGenerator } from "ts-json-schema-generator";

/** Generate both schemas, keyed by output file name. */
export function checkpointSchemas(): Record<string, object> {
  const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
  const tsconfig = fileURLToPath(new URL("../../../../tsconfig.json", import.meta.url));
  const gen = (path: string, type: string, id: string) => {
    const schema = createGenerator({
      path,
      tsconfig,
      type,
      skipTypeCheck: true,
      topRef: true,
      jsDoc: "extended",
      additionalProperties: false,
      expose: "export",
    }).createSchema(type) as Record<string, unknown>;
    return { $id: id, ...schema };
  };
  return {
    "app-state.schema.json": gen(
      here("./app-state.ts"),
      "AppState",
      "https://tessera.dev/schemas/checkpoint/app-state.schema.json",
    ),
    "viewer-sidecar.schema.json": gen(
      here("./sidecar.ts"),
      "ViewerSidecar",
      "https://tessera.dev/schemas/checkpoint/viewer-sidecar.schema.json",
    ),
  };
}

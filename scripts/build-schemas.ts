/**
 * Generate the checkpoint JSON Schemas from their TypeScript types (never written by hand):
 * `schemas/checkpoint/app-state.schema.json` and `viewer-sidecar.schema.json`.
 * Run with `npm run schemas`; a test fails when the committed files drift from the types.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { checkpointSchemas } from "../src/sdk/io/checkpoint/schema-gen.js";

const out = fileURLToPath(new URL("../schemas/checkpoint/", import.meta.url));
for (const [file, schema] of Object.entries(checkpointSchemas())) {
  writeFileSync(out + file, `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote schemas/checkpoint/${file}`);
}

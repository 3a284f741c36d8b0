/**
 * Generate every built-in plugin's `manifest.json` from its TypeScript sources (`npm run manifests`,
 * or `npm run manifests -- <plugin folder> …` for some, e.g. the test-only `test/plugins/testkit`).
 * The manifests are committed; a test fails when one drifts from its sources.
 */
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { pluginFolders, writeManifest } from "../src/registry/build/build-manifest.js";

const root = fileURLToPath(new URL("../src/plugins/", import.meta.url));
const dirs = process.argv.slice(2).length ? process.argv.slice(2) : pluginFolders(root);
for (const dir of dirs) {
  const t0 = performance.now();
  const out = await writeManifest(dir);
  console.log(`wrote ${relative(process.cwd(), out)} (${Math.round(performance.now() - t0)} ms)`);
}

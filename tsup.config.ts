import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { defineConfig } from "tsup";
import { buildWebApp } from "./scripts/build-app.js";

/**
 * Plugin operation modules are loaded by path at run time (the registry imports the module a
 * manifest names, in a worker thread), so each one is its own entry, derived from the manifests.
 */
function pluginEntries(): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const plugin of readdirSync("src/plugins")) {
    const manifest = `src/plugins/${plugin}/manifest.json`;
    if (!existsSync(manifest)) continue;
    const { functions } = JSON.parse(readFileSync(manifest, "utf8")) as { functions: { module: string }[] };
    for (const { module } of functions) {
      const stem = module.replace(/^\.\//, "").replace(/\.js$/, "");
      entries[`plugins/${plugin}/${stem}`] = `src/plugins/${plugin}/${stem}.ts`;
    }
  }
  return entries;
}

/** Copy each plugin's manifest beside its built modules (an installed package has no src/). */
function copyManifests(): void {
  for (const plugin of readdirSync("src/plugins")) {
    const manifest = `src/plugins/${plugin}/manifest.json`;
    if (!existsSync(manifest)) continue;
    mkdirSync(`dist/plugins/${plugin}`, { recursive: true });
    copyFileSync(manifest, `dist/plugins/${plugin}/manifest.json`);
  }
}

// One ESM build: the SDK, the plugin authors' entry, the server entry, the CLI, the job worker (Node 20
// cannot start a worker thread from a .ts file) and the plugin modules. Type declarations for the three
// public entries (package.json `exports`): `.`, `./plugin`, `./server`.
export default defineConfig({
  entry: {
    "sdk/index": "src/sdk/index.ts",
    plugin: "src/plugin.ts",
    server: "src/server.ts",
    cli: "src/adapters/cli/main.ts",
    "jobs/worker": "src/sdk/jobs/worker.ts",
    "raster/build-worker": "src/sdk/raster/build-worker.ts",
    "figures/figure-worker": "src/sdk/figures/figure-worker.ts",
    ...pluginEntries(),
  },
  format: ["esm"],
  target: "node20",
  platform: "node",
  dts: { entry: { "sdk/index": "src/sdk/index.ts", plugin: "src/plugin.ts", server: "src/server.ts" } },
  sourcemap: true,
  clean: true,
  splitting: true,
  onSuccess: async () => {
    copyManifests();
    // The web app (dist/app): static files the server serves at `/`.
    const app = await buildWebApp({ outdir: "dist/app" });
    console.log(`web app: dist/app, initial load ${(app.initial.gzip / 1024).toFixed(0)} KiB gzip`);
  },
});

import { defineConfig } from "tsup";

// One ESM build for the SDK and the CLI. Workers (later) get their own entries here,
// since Node 20 cannot start a worker thread from a .ts file.
export default defineConfig({
  entry: {
    "sdk/index": "src/sdk/index.ts",
    "cli": "src/adapters/cli/main.ts",
    "jobs/worker": "src/sdk/jobs/worker.ts",
  },
  format: ["esm"],
  target: "node20",
  platform: "node",
  dts: false,
  sourcemap: true,
  clean: true,
  splitting: true,
});

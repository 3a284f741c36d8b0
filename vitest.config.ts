import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The test-only plugins (`testkit`) live in test/plugins/ and are enabled by name from there.
    env: { TESSERA_PLUGIN_PATH: fileURLToPath(new URL("./test/plugins", import.meta.url)) },
  },
});

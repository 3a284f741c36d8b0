/**
 * The `testkit` plugin: operations that exercise the engine (a no-op, a sleeper, a failure, a crash,
 * a small plot, a callback param, a reader with a relative file, a params echo). Enable it with
 * `TESSERA_PLUGINS=tessera,testkit`; never enabled by default.
 */
import { definePlugin } from "../../../src/registry/plugin.js";
import { TESSERA_VERSION } from "../../../src/sdk/version.js";

/** Descriptor of the `testkit` plugin. */
export const plugin = definePlugin({
  name: "testkit",
  version: TESSERA_VERSION,
  namespace: "custom",
  modules: ["./ops.js", { path: "./plots.js", namespace: "pl" }, { path: "./readers.js", namespace: "io" }],
});

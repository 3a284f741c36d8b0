/** The built-in `tessera` plugin: the service's own operations (namespace `custom`) and its generic reader (`read`). */
import { definePlugin } from "../../registry/plugin.js";
import { TESSERA_VERSION } from "../../sdk/version.js";

/** Descriptor of the `tessera` plugin. */
export const plugin = definePlugin({
  name: "tessera",
  version: TESSERA_VERSION,
  namespace: "custom",
  modules: ["./custom.js", { path: "./read.js", namespace: "read" }],
});

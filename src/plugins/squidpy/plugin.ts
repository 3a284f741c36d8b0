/**
 * The `squidpy` plugin: squidpy's spatial statistics (`sq.gr`, `sq.tl`) in TypeScript, with squidpy's
 * names, parameters, defaults and output keys, checked against squidpy 1.8.3's values
 * (test/plugins/squidpy). Kernels are in `src/sdk/math/spatial/`.
 */
import { definePlugin } from "../../registry/plugin.js";

/** Version of this implementation; the squidpy release whose behaviour it follows is after the `+`. */
export const SQUIDPY_PLUGIN_VERSION = "0.1.0+squidpy1.8.3";

/** Descriptor of the `squidpy` plugin. */
export const plugin = definePlugin({
  name: "squidpy",
  version: SQUIDPY_PLUGIN_VERSION,
  namespace: "gr",
  modules: [
    "./spatial-neighbors.js",
    "./autocorr.js",
    "./nhood.js",
    "./co-occurrence.js",
    "./ripley.js",
    "./ligrec.js",
    "./sepal.js",
    { path: "./var-by-distance.js", namespace: "tl" },
    { path: "./sliding-window.js", namespace: "tl" },
  ],
});

/**
 * The `scanpy` plugin: scanpy's `sc.pp`, `sc.tl` and `sc.get` in TypeScript, with scanpy's names,
 * parameters, defaults and output keys, checked against scanpy 1.12.3's values (test/plugins/scanpy).
 */
import { definePlugin } from "../../registry/plugin.js";

/** Version of this implementation; the scanpy release whose behaviour it follows is in the summary. */
export const SCANPY_PLUGIN_VERSION = "0.1.0+scanpy1.12.3";

/** Descriptor of the `scanpy` plugin. */
export const plugin = definePlugin({
  name: "scanpy",
  version: SCANPY_PLUGIN_VERSION,
  namespace: "sc.pp",
  modules: [
    "./pp.js",
    "./pca.js",
    "./neighbors.js",
    "./pp-extra.js",
    { path: "./cluster.js", namespace: "sc.tl" },
    { path: "./umap.js", namespace: "sc.tl" },
    { path: "./rank.js", namespace: "sc.tl" },
    { path: "./cell-cycle.js", namespace: "sc.tl" },
    { path: "./embed.js", namespace: "sc.tl" },
    { path: "./trajectory.js", namespace: "sc.tl" },
    { path: "./get.js", namespace: "sc.get" },
  ],
});

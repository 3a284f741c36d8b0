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
  // One module per operation family, laid out as scanpy's own packages: `pp/` (sc.pp, with pca and
  // neighbors), `tl/` (sc.tl), `get/` (sc.get); shared helpers in `helpers.ts` and each folder's own.
  modules: [
    "./pp/qc.js",
    "./pp/simple.js",
    "./pp/normalization.js",
    "./pp/highly-variable-genes.js",
    "./pp/scale.js",
    "./pp/pca.js",
    "./pp/neighbors.js",
    "./pp/sampling.js",
    "./pp/combat.js",
    "./pp/scrublet.js",
    { path: "./tl/cluster.js", namespace: "sc.tl" },
    { path: "./tl/umap.js", namespace: "sc.tl" },
    { path: "./tl/rank-genes-groups.js", namespace: "sc.tl" },
    { path: "./tl/filter-rank-genes-groups.js", namespace: "sc.tl" },
    { path: "./tl/score-genes.js", namespace: "sc.tl" },
    { path: "./tl/tsne.js", namespace: "sc.tl" },
    { path: "./tl/diffmap.js", namespace: "sc.tl" },
    { path: "./tl/draw-graph.js", namespace: "sc.tl" },
    { path: "./tl/embedding-density.js", namespace: "sc.tl" },
    { path: "./tl/dpt.js", namespace: "sc.tl" },
    { path: "./tl/paga.js", namespace: "sc.tl" },
    { path: "./tl/dendrogram.js", namespace: "sc.tl" },
    { path: "./get/get.js", namespace: "sc.get" },
    { path: "./get/aggregated.js", namespace: "sc.get" },
  ],
});

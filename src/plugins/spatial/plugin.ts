/**
 * The built-in `tessera-spatial` plugin: Tessera's own spatial analyses (namespace `custom`: spatial
 * regions, cellular neighbourhoods, region composition and differences, proximity, tissue-microarray
 * cores, region margins and infiltration) and squidpy's image features and segmentation (`im`).
 */
import { definePlugin } from "../../registry/plugin.js";
import { TESSERA_VERSION } from "../../sdk/version.js";

/** Descriptor of the `tessera-spatial` plugin. */
export const plugin = definePlugin({
  name: "tessera-spatial",
  version: TESSERA_VERSION,
  namespace: "custom",
  modules: [
    "./regions.js",
    "./composition.js",
    "./region-kruskal.js",
    "./proximity.js",
    "./boundary.js",
    "./tma.js",
    { path: "./im.js", namespace: "im" },
    { path: "./segment.js", namespace: "im" },
    "./plots.js",
  ],
});

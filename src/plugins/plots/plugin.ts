/**
 * The `tessera-plots` plugin: scanpy's `sc.pl` and squidpy's `pl` plots, drawn on the server as SVG
 * (with PNG and vector PDF) by `src/sdk/figures`, with scanpy's and squidpy's parameter names and
 * defaults. Every plot returns the field paths it read, so a later change to one invalidates it.
 */
import { definePlugin } from "../../registry/plugin.js";
import { TESSERA_VERSION } from "../../sdk/version.js";

/** Descriptor of the `tessera-plots` plugin. */
export const plugin = definePlugin({
  name: "tessera-plots",
  version: TESSERA_VERSION,
  namespace: "pl",
  modules: [
    { path: "./embedding.js", namespace: "sc.pl" },
    { path: "./grouped.js", namespace: "sc.pl" },
    { path: "./rank.js", namespace: "sc.pl" },
    { path: "./preprocessing.js", namespace: "sc.pl" },
    "./squidpy-graph.js",
    "./squidpy-spatial.js",
    "./squidpy-ligrec.js",
  ],
});

/**
 * The built-in `spatialdata-io` plugin: readers of instruments' output folders (namespace `io`, with
 * spatialdata-io's names and parameters: `visium`, `visium_hd`, `xenium`, `merscope`, `cosmx`,
 * `read_zarr`, and 10x matrices) and squidpy's reader names (namespace `read`: `visium`, `vizgen`,
 * `nanostring`). The parsing lives in the SDK (`src/sdk/io/vendors/`), where `openData` also uses it
 * to recognise a folder by what it holds.
 */
import { definePlugin } from "../../registry/plugin.js";
import { TESSERA_VERSION } from "../../sdk/version.js";

/** Descriptor of the `spatialdata-io` plugin. */
export const plugin = definePlugin({
  name: "spatialdata-io",
  version: TESSERA_VERSION,
  namespace: "io",
  modules: [
    "./visium.js",
    "./visium-hd.js",
    "./xenium.js",
    "./merscope.js",
    "./cosmx.js",
    "./tenx.js",
    "./zarr.js",
    { path: "./squidpy.js", namespace: "read" },
  ],
});

/**
 * The plugin descriptor: the library's name and version, its default namespace (`example`, its own,
 * declared by being named here) and the modules that hold its operations.
 */
import { definePlugin } from "tessera-omics/plugin";

export const plugin = definePlugin({
  name: "example",
  version: "0.1.0",
  namespace: "example",
  modules: ["./qc.js"],
});

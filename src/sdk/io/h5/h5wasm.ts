/**
 * Loading h5wasm once. The Node build (`h5wasm/node`) uses Emscripten's NODERAWFS, so it reads host files
 * directly; its heap is capped at 2 GiB, which is why readers slice big datasets. Loading also registers the
 * HDF5 filter plugins (LZF, blosc, zstd, …), so every reader gets them without asking.
 */
import type * as H5 from "h5wasm";
import { BUILTIN_ONLY, type FilterSupport } from "./filters.js";
import { registerFilterPlugins } from "./plugins.js";

/** The h5wasm module namespace (File, Group, Dataset, Reference, …). */
export type H5Wasm = typeof H5;

let loading: Promise<H5Wasm> | undefined;
let support: FilterSupport = BUILTIN_ONLY;

/** The ready h5wasm module (Node build), with the filter plugins registered. */
export function loadH5wasm(): Promise<H5Wasm> {
  if (!loading) {
    // The namespace, not the default export: only the namespace carries Reference and friends.
    loading = import("h5wasm/node").then(async (m) => {
      const mod = m as unknown as H5Wasm;
      support = registerFilterPlugins(await mod.ready);
      return mod;
    });
  }
  return loading;
}

/** The filters the loaded module can decode (the built-in ones until `loadH5wasm` has resolved). */
export function filterSupport(): FilterSupport {
  return support;
}

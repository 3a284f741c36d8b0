/**
 * Loading h5wasm once. The Node build (`h5wasm/node`) uses Emscripten's NODERAWFS, so it reads host files
 * directly; its heap is capped at 2 GiB, which is why readers slice big datasets.
 */
import type * as H5 from "h5wasm";

/** The h5wasm module namespace (File, Group, Dataset, Reference, …). */
export type H5Wasm = typeof H5;

let loading: Promise<H5Wasm> | undefined;

/** The ready h5wasm module (Node build). */
export function loadH5wasm(): Promise<H5Wasm> {
  if (!loading) {
    // The namespace, not the default export: only the namespace carries Reference and friends.
    loading = import("h5wasm/node").then(async (m) => {
      const mod = m as unknown as H5Wasm;
      await mod.ready;
      return mod;
    });
  }
  return loading;
}

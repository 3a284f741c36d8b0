/**
 * Loading h5wasm once. The Node build (`h5wasm/node`) uses Emscripten's NODERAWFS, so it reads host files
 * directly; its heap is capped at 2 GiB, which is why readers slice big datasets. Loading also registers the
 * HDF5 filter plugins (LZF, blosc, zstd, …), so every reader gets them without asking.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as H5 from "h5wasm";
import { BUILTIN_ONLY, type FilterSupport } from "./filters.js";
import { allowOpensUnder, installOpenGuard } from "./guard.js";
import { registerFilterPlugins } from "./plugins.js";

/** The h5wasm module namespace (File, Group, Dataset, Reference, …). */
export type H5Wasm = typeof H5;

let loading: Promise<H5Wasm> | undefined;
let support: FilterSupport = BUILTIN_ONLY;

/** Module instances that aborted (a WebAssembly trap leaves the instance unusable). */
const aborted = new WeakSet<object>();
let generation = 0;

/** Record that `mod` aborted: the next `loadH5wasm` starts a fresh instance. */
export function markAborted(mod: H5Wasm): void {
  aborted.add(mod);
}

/** The ready h5wasm module (Node build), with the filter plugins registered. */
export function loadH5wasm(): Promise<H5Wasm> {
  if (loading) {
    const current = loading;
    loading = current.then((m) => (aborted.has(m) ? freshInstance() : m));
    return loading;
  }
  loading = freshInstance();
  return loading;
}

/** The file `h5wasm/node` resolves to (its exports map has no `require` entry to ask). */
function h5wasmNodeFile(): string {
  for (const dir of createRequire(import.meta.url).resolve.paths("h5wasm") ?? []) {
    const file = join(dir, "h5wasm", "dist", "node", "hdf5_hl.js");
    if (existsSync(file)) return file;
  }
  throw new Error("h5wasm is not installed");
}

/** Import h5wasm; after an abort, a new copy of its module (its own WebAssembly instance). */
function freshInstance(): Promise<H5Wasm> {
  const n = generation++;
  const spec =
    n === 0
      ? import("h5wasm/node")
      : import(/* @vite-ignore */ `${pathToFileURL(h5wasmNodeFile()).href}?instance=${n}`);
  // The namespace, not the default export: only the namespace carries Reference and friends.
  return spec.then(async (m) => {
    const mod = m as unknown as H5Wasm;
    const module = await mod.ready;
    support = registerFilterPlugins(module);
    // libhdf5 opens only what a reader allows (external links, virtual sources: guard.ts).
    installOpenGuard(module as unknown as { FS?: unknown });
    if (support.pluginDir) allowOpensUnder(support.pluginDir);
    return mod;
  });
}

/** The filters the loaded module can decode (the built-in ones until `loadH5wasm` has resolved). */
export function filterSupport(): FilterSupport {
  return support;
}

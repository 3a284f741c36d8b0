/**
 * Run as a child process by registry.test.ts: time a cold registry startup (import the module, read
 * the manifests) and report it with the function count and whether the TypeScript compiler got loaded.
 */
import { createRequire } from "node:module";

const t0 = performance.now();
const { Registry } = await import("../../src/registry/registry.js");
const registry = await Registry.load({ plugins: ["tessera", "testkit"] });
const ms = performance.now() - t0;
const require = createRequire(import.meta.url);
const tsLoaded = Object.keys(require.cache).some((k) => /[\\/]node_modules[\\/]typescript[\\/]/.test(k));
process.stdout.write(JSON.stringify({ ms, functions: registry.list().length, tsLoaded }));

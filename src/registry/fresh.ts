/**
 * The stale-build check for plugins built by `tessera plugin build`. Such a build compiles the
 * plugin's TypeScript to JavaScript beside it and records a SHA-256 of every source it compiled in
 * the manifest (`library.sources`). Node 20 runs only the JavaScript, so a source edited after the
 * build would silently run old code with an old schema: the registry refuses it instead, naming the
 * file and the command that fixes it. A package installed without its sources is not checked.
 */
import { createHash } from "node:crypto";
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Manifest } from "./manifest.js";

/** Hex SHA-256 of a source file's bytes (what the build records and the registry compares). */
export function sourceDigest(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Throw when a source recorded in `manifest.library.sources` exists under `dir` with other bytes,
 * or when a module the manifest names has no built `.js` beside its source.
 */
export async function checkFreshBuild(dir: string, manifest: Manifest, spec: string): Promise<void> {
  const sources = manifest.library.sources;
  if (!sources) return;
  const stale: string[] = [];
  await Promise.all(
    Object.entries(sources).map(async ([rel, digest]) => {
      let bytes: Buffer;
      try {
        bytes = await readFile(join(dir, rel));
      } catch {
        return; // Not shipped (an installed package carries only the build): nothing to compare.
      }
      if (sourceDigest(bytes) !== digest) stale.push(rel);
    }),
  );
  if (stale.length) {
    throw new Error(
      `plugin "${spec}": the build is stale: ${stale.sort().join(", ")} changed since \`tessera plugin build\` ran (run it again in ${dir})`,
    );
  }
  const missing: string[] = [];
  await Promise.all(
    [...new Set(manifest.functions.map((f) => f.module))].map(async (rel) => {
      try {
        await access(join(dir, rel));
      } catch {
        missing.push(rel);
      }
    }),
  );
  if (missing.length) {
    throw new Error(
      `plugin "${spec}": ${missing.sort().join(", ")} not built (run \`tessera plugin build\` in ${dir})`,
    );
  }
}

/**
 * Test inputs without consolidated metadata, built from the shared fixtures in a temp dir: every key of a
 * store copied as is, except that `.zmetadata`/`zmetadata` are left out and `consolidated_metadata` is removed
 * from every `zarr.json` (what zarr-python writes when it never consolidates).
 */
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { FsStore } from "../../../../src/sdk/io/store/fs-store.js";
import { absoluteKey, splitKey } from "../../../../src/sdk/io/store/keys.js";
import { openStore } from "../../../../src/sdk/io/store/open-store.js";
import { writeZip } from "../../../../src/sdk/io/store/zip-writer.js";

const CONSOLIDATED = new Set([".zmetadata", "zmetadata"]);

/** Every key of the store at `src` (folder or zip) with consolidated metadata removed. */
export async function unconsolidatedEntries(src: string): Promise<Map<string, Uint8Array>> {
  const store = await openStore(src);
  if (!store.list) throw new Error(`${src}: cannot list`);
  const out = new Map<string, Uint8Array>();
  for (const { key } of await store.list()) {
    const base = splitKey(key)[1];
    if (CONSOLIDATED.has(base)) continue;
    let bytes = await store.get(absoluteKey(key));
    if (!bytes) throw new Error(`${src}: ${key} listed but unreadable`);
    if (base === "zarr.json") {
      const doc = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
      if ("consolidated_metadata" in doc) {
        delete doc.consolidated_metadata;
        bytes = new TextEncoder().encode(JSON.stringify(doc));
      }
    }
    out.set(key, bytes);
  }
  return out;
}

/** A `.zarr.zip` at `out` holding `src` without consolidated metadata. */
export async function unconsolidatedZip(src: string, out: string): Promise<string> {
  const entries = await unconsolidatedEntries(src);
  await writeZip(
    out,
    [...entries].map(([name, data]) => ({ name, data })),
  );
  return out;
}

/** A zarr folder at `out` holding `src` without consolidated metadata. */
export async function unconsolidatedFolder(src: string, out: string): Promise<string> {
  await fsp.mkdir(out, { recursive: true });
  const store = new FsStore(out);
  for (const [key, bytes] of await unconsolidatedEntries(src)) await store.set(absoluteKey(key), bytes);
  return join(out);
}

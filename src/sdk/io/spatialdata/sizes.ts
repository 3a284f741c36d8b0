/**
 * Real on-disk sizes of a store's elements and table slots, from one listing of the store
 * (compressed bytes: file sizes for a folder, stored sizes for a zip). Stores that cannot list
 * (plain HTTP folders) give no sizes, and callers fall back to estimates.
 */
import type { ReadableStore } from "../store/types.js";

/** Size look-ups over one store listing. */
export interface StoreSizes {
  /** Bytes of every key under `path/` (an element group), or null when nothing is there. */
  prefix(path: string): number | null;
  /** Bytes per slot of the AnnData group at `path` (`X`, `obs`, `obsm/<key>` …). */
  slots(path: string): Record<string, number>;
}

const KEYED = new Set(["obsm", "varm", "obsp", "varp", "layers"]);

/** List the store once and answer size questions from that listing; null if the store cannot list. */
export async function storeSizes(store: ReadableStore): Promise<StoreSizes | null> {
  if (!store.list) return null;
  const entries = await store.list("");
  return {
    prefix(path) {
      const p = `${path.replace(/^\/+|\/+$/g, "")}/`;
      let total = 0;
      let any = false;
      for (const e of entries) {
        if (e.key.startsWith(p)) {
          total += e.size;
          any = true;
        }
      }
      return any ? total : null;
    },
    slots(path) {
      const p = `${path.replace(/^\/+|\/+$/g, "")}/`;
      const out: Record<string, number> = {};
      for (const e of entries) {
        if (!e.key.startsWith(p)) continue;
        const parts = e.key.slice(p.length).split("/");
        if (parts.length < 2) continue; // the table group's own metadata
        if (KEYED.has(parts[0]!) && parts.length === 2) continue; // e.g. obsm/zarr.json: no slot of its own
        const slot = KEYED.has(parts[0]!) && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
        out[slot] = (out[slot] ?? 0) + e.size;
      }
      return out;
    },
  };
}

/**
 * The save dialog's model (client.md 13), pure so it is tested without a browser: the checklist
 * built from the element inventory with sizes (`GET …/elements?sizes=1`) and the drawn figures, the
 * running total, the file-name preview, and the `POST …/save` body — which names only what the user
 * trimmed, so an untouched checklist is the whole-object save (the incremental fast path that the
 * session adopts as its own checkpoint).
 */

import { parseFieldPath } from "../../../sdk/data/fieldpath.js";
import type { DisplaySpec } from "../../../sdk/io/checkpoint/app-state.js";

/** The inventory fields the dialog reads. */
export interface SizedInventory {
  tables: {
    name: string;
    active: boolean;
    size_mb?: number | null;
    slots?: { path: string; size_mb: number | null; required: boolean }[];
  }[];
  images: {
    name: string;
    size_mb?: number | null;
    levels: { level: number; width: number; height: number; size_mb?: number | null }[];
  }[];
  labels: { name: string; size_mb?: number | null }[];
  points: { name: string; size_mb?: number | null }[];
  shapes: { name: string; size_mb?: number | null }[];
}

/** The facets `include` selects by name. */
export const FACETS = ["tables", "images", "labels", "points", "shapes"] as const;
/** One facet. */
export type Facet = (typeof FACETS)[number];

/** What the user chose. */
export interface SaveSelection {
  /** Facet → names left out. */
  dropped: Record<Facet, Set<string>>;
  /** Image → index of the finest level written (0: all). */
  levels: Record<string, number>;
  /** Table → slot paths left out. */
  droppedSlots: Record<string, Set<string>>;
  /** Drawn plot ids whose figures are left out. */
  droppedFigures: Set<string>;
}

/** A selection that keeps everything. */
export function fullSelection(): SaveSelection {
  return {
    dropped: {
      tables: new Set(),
      images: new Set(),
      labels: new Set(),
      points: new Set(),
      shapes: new Set(),
    },
    levels: {},
    droppedSlots: {},
    droppedFigures: new Set(),
  };
}

/** MB as text (`12.3 MB`, `1.42 GB`, `< 0.1 MB`); unknown sizes read "at least" what is known. */
export function formatMb(mb: number | null | undefined, atLeast = false): string {
  if (mb === null || mb === undefined) return "size unknown";
  const pre = atLeast ? "at least " : "";
  if (mb >= 1024) return `${pre}${(mb / 1024).toFixed(2)} GB`;
  if (mb === 0) return "0 MB";
  if (mb > 0 && mb < 0.1) return `${pre}< 0.1 MB`;
  return `${pre}${mb.toFixed(1)} MB`;
}

/** The size an image costs when written from level `from` down (coarser levels are always kept). */
export function imageCost(img: SizedInventory["images"][number], from: number): number | null {
  let sum = 0;
  for (const l of img.levels) {
    if (l.level < from) continue;
    if (l.size_mb === null || l.size_mb === undefined) return null;
    sum += l.size_mb;
  }
  return sum;
}

/** The size a table costs with some slots left out. */
export function tableCost(
  t: SizedInventory["tables"][number],
  dropped: Set<string> | undefined,
): number | null {
  if (!t.slots) return t.size_mb ?? null;
  let sum = 0;
  for (const s of t.slots) {
    if (dropped?.has(s.path)) continue;
    if (s.size_mb === null) return null;
    sum += s.size_mb;
  }
  return sum;
}

/** The running total: items kept of all items, and the MB they cost (`unknown`: some size missing). */
export function runningTotal(
  inv: SizedInventory,
  figures: Record<string, number>,
  sel: SaveSelection,
): { kept: number; total: number; mb: number; unknown: boolean } {
  let kept = 0;
  let total = 0;
  let mb = 0;
  let unknown = false;
  const add = (size: number | null | undefined) => {
    if (size === null || size === undefined) unknown = true;
    else mb += size;
  };
  for (const f of FACETS) {
    for (const e of inv[f] as { name: string; size_mb?: number | null }[]) {
      total++;
      if (sel.dropped[f].has(e.name)) continue;
      kept++;
      if (f === "images") add(imageCost(e as SizedInventory["images"][number], sel.levels[e.name] ?? 0));
      else if (f === "tables")
        add(tableCost(e as SizedInventory["tables"][number], sel.droppedSlots[e.name]));
      else add(e.size_mb);
    }
  }
  for (const [id, bytes] of Object.entries(figures)) {
    total++;
    if (sel.droppedFigures.has(id)) continue;
    kept++;
    mb += bytes / 1048576;
  }
  return { kept, total, mb, unknown };
}

/** The preview of the written path: `folder/prefix-<content hash>.sdata.zarr.zip`. */
export function fileNamePreview(folder: string, prefix: string): string {
  const dir = folder.trim().replace(/\/+$/, "");
  const name = `${prefix.trim() || "…"}-<content hash>.sdata.zarr.zip`;
  return dir ? `${dir}/${name}` : name;
}

/** A problem with the prefix the server would refuse (blank, dot-prefixed, a path separator), or null. */
export function prefixProblem(prefix: string): string | null {
  const p = prefix.trim();
  if (!p) return "The prefix must not be blank.";
  if (p.startsWith(".")) return "The prefix must not start with a dot.";
  if (/[/\\]/.test(p)) return "The prefix must not contain a path separator.";
  return null;
}

/** The `POST …/save` body: name, folder, prefix, and only the trims the user made. */
export function saveBody(
  inv: SizedInventory,
  figures: readonly string[],
  sel: SaveSelection,
  dest: { name: string; folder: string; prefix: string },
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (dest.name.trim()) body.name = dest.name.trim();
  if (dest.folder.trim()) body.folder = dest.folder.trim();
  if (dest.prefix.trim()) body.prefix = dest.prefix.trim();
  const include: Record<string, string[]> = {};
  for (const f of FACETS) {
    if (!sel.dropped[f].size) continue;
    include[f] = (inv[f] as { name: string }[]).map((e) => e.name).filter((n) => !sel.dropped[f].has(n));
  }
  if (Object.keys(include).length) body.include = include;
  const levels = Object.fromEntries(
    Object.entries(sel.levels).filter(([name, l]) => l > 0 && !sel.dropped.images.has(name)),
  );
  if (Object.keys(levels).length) body.levels = levels;
  const slots: Record<string, string[]> = {};
  for (const t of inv.tables) {
    const drop = sel.droppedSlots[t.name];
    if (!drop?.size || sel.dropped.tables.has(t.name) || !t.slots) continue;
    slots[t.name] = t.slots.map((s) => s.path).filter((p) => !drop.has(p));
  }
  if (Object.keys(slots).length) body.slots = slots;
  if (sel.droppedFigures.size) body.figures = figures.filter((id) => !sel.droppedFigures.has(id));
  return body;
}

/**
 * The obsm slots of the active table that the session's displays draw their coordinates from
 * (`coords` of a spatial canvas, `obsm_key` of an embedding canvas): the server refuses a save that
 * drops one (400), so the checklist locks them like obs, var and uns (client.md 13.2).
 */
export function displayedObsmSlots(displays: readonly DisplaySpec[]): Set<string> {
  const out = new Set<string>();
  for (const d of displays) {
    if (d.type === "embedding_canvas") {
      if (d.encoding.obsm_key) out.add(`obsm/${d.encoding.obsm_key.replace(/^obsm:/, "")}`);
      continue;
    }
    try {
      const fp = parseFieldPath(d.encoding.coords);
      if (fp.kind === "table" && fp.slot === "obsm" && fp.key !== undefined && fp.table === undefined)
        out.add(`obsm/${fp.key}`);
    } catch {
      // Unreadable coords draw from nothing a save can drop.
    }
  }
  return out;
}

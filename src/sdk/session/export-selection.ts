/**
 * Filtered saves (spec "Save": `include`, `levels`, `slots`): checking a selection against a session
 * before the save is queued (every problem is a 400 naming it, never a failed job), and applying it at
 * write time to the data and the app state. A selection makes the save an export: the session's own
 * checkpoint and `saved` flag stay as they were.
 *
 * App state of an export: displays naming a dropped image or shapes element get that layer set to null;
 * displays whose `color_by` reads a dropped slot get `color_by` null; when the tables list puts another
 * table first (the export's active table changes) every `color_by` is null. A selection may not drop
 * `obs`, `var`, `uns`, the active table, nor an obsm entry a display draws its coordinates from.
 */
import { parseFieldPath } from "../data/fieldpath.js";
import { own } from "../data/own.js";
import {
  type DataSelection,
  type ElementInclude,
  REQUIRED_SLOTS,
  selectData,
  tableSlotPaths,
} from "../data/select.js";
import { ELEMENT_KINDS, type ElementKind, type SpatialData } from "../data/spatialdata.js";
import { BadRequestError } from "../errors.js";
import type { AppState, DisplaySpec } from "../io/checkpoint/app-state.js";

/** The selection fields of a save request, as received. */
export interface SelectionRequest {
  include?: unknown;
  levels?: unknown;
  slots?: unknown;
}

/** A checked selection: what to keep, and the table the export colours from. */
export interface ExportSelection extends DataSelection {
  /** Active table of the export: the first table listed in `include.tables`, else the session's. */
  readonly activeTable: string | null;
  /** The session's active table when the selection was made. */
  readonly sourceActiveTable: string | null;
}

/** What the checks need of a session. */
export interface SelectionContext {
  readonly data: SpatialData;
  readonly app: AppState;
  readonly activeTable: string | null;
}

/** Whether a save request is an export (any of `include`, `levels`, `slots` present). */
export function isExport(req: SelectionRequest): boolean {
  return req.include !== undefined || req.levels !== undefined || req.slots !== undefined;
}

const SLOT_RE = /^(X|obs|var|uns|raw|(layers|obsm|varm|obsp|varp)\/.+)$/;
const VOCABULARY = "X, obs, var, uns, raw, layers/<key>, obsm/<key>, varm/<key>, obsp/<key>, varp/<key>";

const bad = (msg: string): never => {
  throw new BadRequestError(`save: ${msg}`);
};

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function stringList(v: unknown, at: string): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
    bad(`${at} must be a list of strings, got ${JSON.stringify(v)}`);
  return [...new Set(v as string[])];
}

const have = (names: string[]) => (names.length ? ` (have: ${names.join(", ")})` : " (there are none)");

/** The obsm keys of the active table a display draws coordinates from (`coords`, `obsm_key`). */
export function drawnObsmKeys(d: DisplaySpec): string[] {
  if (d.type === "embedding_canvas") return d.encoding.obsm_key ? [d.encoding.obsm_key] : [];
  try {
    const fp = parseFieldPath(d.encoding.coords);
    if (fp.kind === "table" && fp.slot === "obsm" && fp.key !== undefined && fp.table === undefined)
      return [fp.key];
  } catch {
    // A display with an unreadable coords path draws from nothing the selection can drop.
  }
  return [];
}

function checkInclude(raw: unknown, ctx: SelectionContext): ElementInclude {
  if (!isRecord(raw)) return bad(`include must be an object of facet → element names`);
  const out: Record<string, string[]> = {};
  for (const [facet, list] of Object.entries(raw)) {
    if (!(ELEMENT_KINDS as readonly string[]).includes(facet))
      bad(`unknown facet "${facet}" in include (facets: ${ELEMENT_KINDS.join(", ")})`);
    const names = stringList(list, `include.${facet}`);
    const known = Object.keys(ctx.data[facet as ElementKind]);
    for (const n of names)
      if (!known.includes(n)) bad(`include.${facet} names unknown element "${n}"${have(known)}`);
    out[facet] = names;
  }
  const tables = out.tables;
  if (tables && ctx.activeTable !== null && !tables.includes(ctx.activeTable))
    bad(`include.tables omits the active table "${ctx.activeTable}"`);
  return out;
}

function checkLevels(raw: unknown, ctx: SelectionContext, include: ElementInclude): Record<string, number> {
  if (!isRecord(raw)) return bad(`levels must be an object of image name → finest level index`);
  const out: Record<string, number> = {};
  const images = Object.keys(ctx.data.images);
  for (const [name, v] of Object.entries(raw)) {
    const el = own(ctx.data.images, name);
    if (!el) bad(`levels names unknown image "${name}"${have(images)}`);
    if (include.images && !include.images.includes(name))
      bad(`levels names image "${name}", which include.images drops`);
    const n = el!.levels.length;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= n)
      bad(`levels.${name} is ${JSON.stringify(v)}; image "${name}" has levels 0..${n - 1}`);
    out[name] = v as number;
  }
  return out;
}

function checkSlots(raw: unknown, ctx: SelectionContext, include: ElementInclude): Record<string, string[]> {
  if (!isRecord(raw)) return bad(`slots must be an object of table name → slot paths`);
  const out: Record<string, string[]> = {};
  const tables = Object.keys(ctx.data.tables);
  for (const [name, list] of Object.entries(raw)) {
    const t = own(ctx.data.tables, name);
    if (!t) bad(`slots names unknown table "${name}"${have(tables)}`);
    if (include.tables && !include.tables.includes(name))
      bad(`slots names table "${name}", which include.tables drops`);
    const paths = stringList(list, `slots.${name}`);
    const present = tableSlotPaths(t!);
    for (const p of paths) {
      if (!SLOT_RE.test(p)) bad(`unknown slot path "${p}" in slots.${name} (vocabulary: ${VOCABULARY})`);
      if (!present.includes(p)) bad(`table "${name}" has no slot "${p}"${have(present)}`);
    }
    for (const r of REQUIRED_SLOTS)
      if (!paths.includes(r)) bad(`slots.${name} omits "${r}" (obs, var and uns are always written)`);
    out[name] = paths;
  }
  return out;
}

/**
 * Check the selection fields of a save request against a session; null when the request is not an
 * export. Throws `BadRequestError` (400) naming the first problem found.
 */
export function checkSelection(req: SelectionRequest, ctx: SelectionContext): ExportSelection | null {
  if (!isExport(req)) return null;
  const include = req.include === undefined ? {} : checkInclude(req.include, ctx);
  const levels = req.levels === undefined ? {} : checkLevels(req.levels, ctx, include);
  const slots = req.slots === undefined ? {} : checkSlots(req.slots, ctx, include);
  const activeTable = include.tables ? (include.tables[0] ?? null) : ctx.activeTable;
  if (activeTable !== null) {
    const t = ctx.data.tables[activeTable]!;
    const kept = slots[activeTable];
    for (const d of ctx.app.displays) {
      for (const key of drawnObsmKeys(d)) {
        if (activeTable !== ctx.activeTable && !Object.hasOwn(t.obsm, key))
          bad(
            `display ${d.id} draws from obsm/${key}, which the export's active table "${activeTable}" (first in include.tables) does not have`,
          );
        if (kept && !kept.includes(`obsm/${key}`))
          bad(`slots.${activeTable} omits obsm/${key}, which display ${d.id} draws from`);
      }
    }
  }
  return { include, levels, slots, activeTable, sourceActiveTable: ctx.activeTable };
}

/** Whether `colorBy` (a field path of the active table) reads something the export leaves out. */
function readsDropped(
  colorBy: string,
  sel: ExportSelection,
  before: SpatialData,
  after: SpatialData,
): boolean {
  let fp: ReturnType<typeof parseFieldPath>;
  try {
    fp = parseFieldPath(colorBy);
  } catch {
    return false;
  }
  if (fp.kind === "element") return !Object.hasOwn(after[fp.family], fp.name);
  const table = fp.table ?? sel.sourceActiveTable;
  if (table === null) return false;
  if (!own(after.tables, table)) return true;
  const kept = sel.slots?.[table];
  if (fp.kind !== "table" || !kept) return false;
  if (fp.slot === "X" || fp.slot === "raw") return !kept.includes(fp.slot);
  if (fp.slot === "obs" || fp.slot === "var" || fp.slot === "uns" || fp.key === undefined) return false;
  // The key may carry more after the entry name (`layers:counts:CD3E`): match entry names as prefixes.
  const entries = Object.keys(before.tables[table]![fp.slot]);
  const entry = entries.find((k) => fp.key === k || fp.key!.startsWith(`${k}:`));
  return entry !== undefined && !kept.includes(`${fp.slot}/${entry}`);
}

/** The displays of an export: dropped layers and unreadable colourings set to null. */
function exportDisplays(
  displays: readonly DisplaySpec[],
  sel: ExportSelection,
  before: SpatialData,
  after: SpatialData,
): DisplaySpec[] {
  const switched = sel.activeTable !== sel.sourceActiveTable;
  return displays.map((d): DisplaySpec => {
    const enc: Record<string, unknown> = { ...d.encoding };
    const cb = enc.color_by;
    if (typeof cb === "string" && (switched || readsDropped(cb, sel, before, after))) enc.color_by = null;
    if (d.type === "spatial_canvas") {
      if (typeof enc.image_layer === "string" && !(enc.image_layer in after.images)) enc.image_layer = null;
      if (typeof enc.shapes_layer === "string" && !(enc.shapes_layer in after.shapes))
        enc.shapes_layer = null;
    }
    return { ...d, encoding: enc } as unknown as DisplaySpec;
  });
}

/** What an export writes: the selected data, its app state, and its active table. */
export interface ExportContent {
  readonly data: SpatialData;
  readonly appState: AppState;
  readonly activeTable: string | null;
}

/** Apply a checked selection to the data and app state of a session (at write time). */
export function applySelection(data: SpatialData, app: AppState, sel: ExportSelection): ExportContent {
  const out = selectData(data, sel);
  return {
    data: out,
    appState: { ...app, displays: exportDisplays(app.displays, sel, data, out) },
    activeTable: sel.activeTable,
  };
}

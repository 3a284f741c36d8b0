/**
 * The Regions tab in the serverless viewer (client.md 9.2, 17.5): the same drawing and **Apply
 * label**, but the labels go into a categorical obs column local to this page (`LocalEdits` of the
 * checkpoint source) instead of `POST …/annotate`; the displays then colour by it with the chosen
 * colour, as the server does after an annotate. Cells can be hidden (those inside the drawn region)
 * and shown again. Nothing survives a reload.
 */
import type { DisplaySpec } from "../../../sdk/io/checkpoint/app-state.js";
import type { DataSource, FieldData } from "../../data-source.js";
import type { LocalEdits } from "../../local-edits.js";
import { type DrawController, PRESET_COLORS, type RegionSet } from "./draw-controller.js";

/** The local edits of a source that has them (the checkpoint source), else null. */
export function localEditsOf(src: DataSource | null | undefined): LocalEdits | null {
  return (src as { local?: LocalEdits } | null | undefined)?.local ?? null;
}

/** The local region sets with their categories' counts. */
export function localRegionSets(src: DataSource | null | undefined): RegionSet[] {
  const local = localEditsOf(src);
  return local ? local.columnNames.map((name) => ({ name, categories: local.counts(name) })) : [];
}

/**
 * A display coloured by `obs:<set>` with `color` as the category's override: what the server does to
 * every display after an annotate (`displayForRegionSet` in `sdk/session/annotate.ts`, which is not
 * bundled for the browser with the session code around it).
 */
function colouredBySet(d: DisplaySpec, set: string, category: string, color: string): DisplaySpec {
  const path = `obs:${set}`;
  const all = { ...(d.encoding.category_colors ?? {}) };
  all[path] = { ...(all[path] ?? {}), [category]: color };
  return {
    ...d,
    encoding: { ...d.encoding, color_by: path, isolated_category: null, category_colors: all },
  } as DisplaySpec;
}

/** Apply label, locally: label the cells inside the drawn region, colour every display by the set. */
export async function applyLocalLabel(c: DrawController): Promise<boolean> {
  const src = c.host.source;
  const local = localEditsOf(src);
  const mask = c.mask;
  const set = c.regionSet.trim();
  const category = c.category.trim();
  if (!local || !src || !mask || !set || !category) return false;
  const fields = await src.getFields();
  const existing = fields.obs.find((o) => o.name === set);
  if (existing && existing.kind !== "categorical") {
    c.host.toast(
      "error",
      `obs column "${set}" is ${existing.kind}, not categorical; choose another region set`,
    );
    return false;
  }
  let base: FieldData | null = null;
  if (existing && !local.columnNames.includes(set)) {
    try {
      base = await src.getFieldData(`obs:${set}`);
    } catch (e) {
      c.host.toast("error", `Could not read obs column "${set}": ${(e as Error).message}`);
      return false;
    }
  }
  try {
    local.label(set, category, mask, base);
  } catch (e) {
    c.host.toast("error", `Labelling failed: ${(e as Error).message}`);
    return false;
  }
  const color = c.color;
  c.host.localEdit?.(`obs:${set}`, (d) => colouredBySet(d, set, category, color));
  c.host.toast(
    "info",
    `Labelled ${c.count ?? 0} cells as ${set} / ${category} in this browser (not saved; lost on reload).`,
  );
  const i = PRESET_COLORS.indexOf(color as (typeof PRESET_COLORS)[number]);
  c.color = PRESET_COLORS[(i + 1) % PRESET_COLORS.length]!;
  const m = /^(.*?)(\d+)$/.exec(c.category);
  if (m) c.category = `${m[1]}${Number(m[2]) + 1}`;
  c.regionSets = localRegionSets(src);
  c.clearDrawing();
  return true;
}

/** Hide the cells inside the drawn region (local to this page). */
export function hideInRegion(c: DrawController): void {
  const local = localEditsOf(c.host.source);
  if (!local || !c.mask) return;
  local.hide(c.mask);
  c.host.localEdit?.(null);
  c.clearDrawing();
}

/** Show every hidden cell again. */
export function showAllCells(c: DrawController): void {
  const local = localEditsOf(c.host.source);
  if (!local) return;
  local.showAll();
  c.host.localEdit?.(null);
  c.changed();
}

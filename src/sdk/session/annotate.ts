/**
 * Annotate (`POST /api/sessions/{id}/annotate`): label the cells chosen by polygons or row indices
 * into a region set (a categorical obs column), then point every display at it.
 *
 * The labelling runs as the registered compute `custom.annotate_cells` (the tessera plugin), so it is
 * an ordinary queued job with a history entry that a recipe can replay; the selection is checked
 * when the request arrives, against the cells the user sees (an empty one is a 400), and recorded as
 * the polygons drawn (or the row indices given). When the job
 * completes, every display's `color_by` becomes `obs:<region_set>` and a given `color` becomes that
 * category's `category_colors` override on every display (one `display.updated` each).
 */

import { own } from "../data/own.js";
import { resolveRowSelection } from "../data/row-selection.js";
import { BadRequestError } from "../errors.js";
import type { DisplaySpec } from "../io/checkpoint/app-state.js";
import { requireReady } from "./readiness.js";
import type { Session } from "./session.js";
import type { JobTicket } from "./types.js";

/** The body of `POST /annotate`. */
export interface AnnotateRequest {
  polygons?: unknown;
  cell_indices?: unknown;
  /** The categorical obs column to write (created when absent). */
  region_set: string;
  /** The label the chosen cells get (a new category when the column lacks it). */
  category: string;
  /** `#rrggbb` colour of the category on every display. */
  color?: string;
}

/** The registered operation that writes the labels. */
export const ANNOTATE_FUNCTION = { namespace: "custom", function: "annotate_cells" } as const;

const HEX = /^#[0-9a-fA-F]{6}$/;

/** A display pointed at `obs:<regionSet>`, with `color` as the category's override when given. */
export function displayForRegionSet(
  d: DisplaySpec,
  regionSet: string,
  category: string,
  color?: string,
): DisplaySpec {
  const path = `obs:${regionSet}`;
  const enc = { ...d.encoding, color_by: path } as DisplaySpec["encoding"];
  if (color) {
    const all = { ...(enc.category_colors ?? {}) };
    all[path] = { ...(all[path] ?? {}), [category]: color };
    enc.category_colors = all;
  }
  return { ...d, encoding: enc } as DisplaySpec;
}

/**
 * Check and queue an annotate request. 400 for a bad selection (or one choosing no cell), a blank
 * region set or category, a colour that is not `#rrggbb`, a region set that is a non-categorical
 * column or the table's region/instance key; 409 while the session is not ready.
 */
export async function annotate(session: Session, req: AnnotateRequest): Promise<JobTicket> {
  requireReady(session, "an annotation");
  const regionSet = typeof req.region_set === "string" ? req.region_set.trim() : "";
  if (!regionSet) throw new BadRequestError("region_set must be a non-blank obs column name");
  if (typeof req.category !== "string" || !req.category.trim())
    throw new BadRequestError("category must be a non-blank label");
  if (req.color !== undefined && (typeof req.color !== "string" || !HEX.test(req.color)))
    throw new BadRequestError(`color must be #rrggbb, got ${JSON.stringify(req.color)}`);
  const table = session.activeTable;
  const t = table ? own(session.data.tables, table) : undefined;
  if (!t || !table) throw new BadRequestError("the session has no table to annotate");
  const existing = own(t.obs.columns, regionSet);
  if (existing && existing.kind !== "categorical")
    throw new BadRequestError(`obs column "${regionSet}" exists and is ${existing.kind}, not categorical`);
  if (t.annotation && [t.annotation.regionKey, t.annotation.instanceKey].includes(regionSet))
    throw new BadRequestError(
      `obs column "${regionSet}" is the region or instance key of table "${table}"; choose another region set`,
    );
  const sel = await resolveRowSelection(session.data, table, {
    polygons: req.polygons,
    cell_indices: req.cell_indices,
  });
  if (sel.count === 0) throw new BadRequestError("the selection holds no cell");
  // Polygons are recorded as drawn (a few numbers, replayable on other data); indices as given.
  let selection: Record<string, unknown>;
  if (sel.polygons) selection = { polygons: sel.polygons };
  else {
    const cellIndices: number[] = [];
    for (let i = 0; i < sel.mask.length; i++) if (sel.mask[i]) cellIndices.push(i);
    selection = { cell_indices: cellIndices };
  }
  const ticket = await session.submit({
    ...ANNOTATE_FUNCTION,
    params: { region_set: regionSet, category: req.category, ...selection },
  });
  void ticket.done.then((out) => {
    if (out.status !== "completed") return;
    try {
      for (const d of session.appState.displays)
        session.putDisplay(displayForRegionSet(d, regionSet, req.category, req.color));
    } catch {
      // The session closed meanwhile: nothing left to point at the labels.
    }
  });
  return ticket;
}

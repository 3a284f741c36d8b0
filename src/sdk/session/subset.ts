/**
 * The parts of a subset (`POST /api/sessions/{id}/subset`) that do not need the session store: the
 * request's checks (resolved against the parent's committed object, so a bad request is a 400
 * before anything is queued), the job's descriptor, and what the child session inherits.
 *
 * The child keeps the parent's displays and compute history (its data is the product of those steps
 * and the subset), and its plots as `invalidated` (they were drawn from the parent's cells; a redraw
 * draws them from the child's). The parent's pending steps stay pending in the child.
 */
import type { PolygonRing } from "../data/polygon-select.js";
import { type RowSelection, resolveRowSelection } from "../data/row-selection.js";
import { subsetCoordinateSystem } from "../data/subset.js";
import { BadRequestError } from "../errors.js";
import type { AppState } from "../io/checkpoint/app-state.js";
import type { Descriptor } from "./app-state-machine.js";
import { requireReady } from "./readiness.js";
import type { Session } from "./session.js";

/** The body of `POST /subset`: polygons (canvas world space) or explicit rows of the active table. */
export interface SubsetRequest {
  polygons?: PolygonRing[];
  cell_indices?: number[];
  /** Coordinate system the polygons are mapped through to place points (default: derived from the object). */
  coordinate_system?: string;
  /** Keep what the selection leaves out. */
  invert?: boolean;
}

/** A checked subset request. */
export interface PreparedSubset {
  readonly selection: RowSelection;
  /** The active table the rows belong to. */
  readonly table: string;
  /** The coordinate system the polygons go through (polygon selections only). */
  readonly coordinateSystem: string | null;
  /** The job's descriptor: the request without the (possibly huge) index list. */
  readonly descriptor: Descriptor;
}

/**
 * Check a subset request against the parent's committed object: 409 while the session is not ready,
 * 400 for a malformed selection, an unknown coordinate system, or a selection keeping no cell.
 */
export async function prepareSubset(parent: Session, req: SubsetRequest): Promise<PreparedSubset> {
  requireReady(parent, "a subset");
  const table = parent.activeTable;
  if (!table) throw new BadRequestError("the session has no table to subset");
  let coordinateSystem: string | null = null;
  if (req.polygons !== undefined || req.coordinate_system !== undefined) {
    try {
      coordinateSystem = subsetCoordinateSystem(parent.data, table, req.coordinate_system);
    } catch (err) {
      throw new BadRequestError(err instanceof Error ? err.message : String(err));
    }
  }
  // A subset keeps every cell whose geometry meets the polygons (spatialdata's polygon_query), where
  // inspecting and annotating a region take centroids: agent-mcp.md states the difference.
  const selection = await resolveRowSelection(parent.data, table, req, "intersection");
  if (selection.count === 0)
    throw new BadRequestError(
      `the selection keeps no cell of table "${table}"${req.invert ? " (invert left nothing outside)" : ""}`,
    );
  const params: Record<string, unknown> = {
    table,
    n_cells: selection.count,
    invert: req.invert ?? false,
    ...(selection.polygons ? { polygons: selection.polygons } : { by: "cell_indices" }),
    ...(coordinateSystem ? { coordinate_system: coordinateSystem } : {}),
  };
  return {
    selection,
    table,
    coordinateSystem,
    descriptor: { namespace: "session", function: "subset", params },
  };
}

/** What the child inherits of the parent's app state (see the module comment). */
export function childAppState(app: AppState): AppState {
  // The parent's recorded name would outrank the child's own at save time.
  const { name: _parentName, ...rest } = app;
  return {
    ...rest,
    plots: app.plots.map((p) => (p.status === "drawn" ? { ...p, status: "invalidated" as const } : p)),
  };
}

/** The child's name: the parent's with `-subset` appended (a valid save prefix when the parent's was). */
export function childName(parentName: string): string {
  return `${parentName}-subset`;
}

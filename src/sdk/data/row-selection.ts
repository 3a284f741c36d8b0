/**
 * Which rows of the active table a subset or annotate request chooses: cells whose obsm `spatial`
 * point lies inside any of the request's polygons (canvas world space), or explicit row indices;
 * `invert` takes the complement. Every problem with the request is a BadRequestError (400), so a
 * route can resolve a selection before it queues anything.
 */
import { BadRequestError } from "../errors.js";
import { markIntersecting } from "./geometry-select.js";
import { loadMatrix } from "./lazy.js";
import { own } from "./own.js";
import { type PolygonRing, selectInPolygons, validatePolygons } from "./polygon-select.js";
import type { SpatialData } from "./spatialdata.js";
import { nObs } from "./table.js";

/** A selection as a request gives it: exactly one of `polygons` and `cell_indices`. */
export interface RowSelectionRequest {
  polygons?: unknown;
  cell_indices?: unknown;
  invert?: boolean;
}

/** A resolved selection. */
export interface RowSelection {
  /** One byte per row of the table (1 = chosen). */
  readonly mask: Uint8Array;
  /** Number of rows chosen. */
  readonly count: number;
  /** The validated polygons, when the selection was made with polygons. */
  readonly polygons?: PolygonRing[];
}

/** The obsm key whose first two columns are the canvas world coordinates of the cells. */
export const SPATIAL_OBSM_KEY = "spatial";

/** How polygons choose cells: by centroid (inspect, annotate) or by geometry intersection (subset). */
export type PolygonRule = "centroid" | "intersection";

/**
 * Resolve a selection against table `tableName` of `sd`. Polygons test the table's obsm `spatial`
 * (400 when it has none); with `rule: "intersection"` a cell is also chosen when its outline or spot
 * in the shapes element the table annotates meets a polygon (`geometry-select.ts`; tables annotating
 * no shapes element fall back to centroids). `cell_indices` must be integers within the table's rows
 * (duplicates are harmless). The result may choose no row; callers decide whether that is an error.
 */
export async function resolveRowSelection(
  sd: SpatialData,
  tableName: string | null,
  req: RowSelectionRequest,
  rule: PolygonRule = "centroid",
): Promise<RowSelection> {
  const t = tableName ? own(sd.tables, tableName) : undefined;
  if (!t || !tableName) throw new BadRequestError("the session has no table to select cells from");
  const hasPolygons = req.polygons !== undefined;
  const hasIndices = req.cell_indices !== undefined;
  if (hasPolygons === hasIndices) throw new BadRequestError("give exactly one of polygons and cell_indices");
  const n = nObs(t);
  let mask: Uint8Array;
  let polygons: PolygonRing[] | undefined;
  if (hasPolygons) {
    polygons = validatePolygons(req.polygons);
    const slot = t.obsm[SPATIAL_OBSM_KEY];
    if (!slot || slot.kind === "dataframe")
      throw new BadRequestError(
        `table "${tableName}" has no obsm "${SPATIAL_OBSM_KEY}" coordinates to test polygons against; use cell_indices`,
      );
    const m = await loadMatrix(slot);
    if (m.kind !== "dense" || (m.shape[1] ?? 0) < 2 || typeof m.data[0] === "bigint")
      throw new BadRequestError(
        `obsm "${SPATIAL_OBSM_KEY}" of table "${tableName}" is not a dense n×2 array`,
      );
    mask = selectInPolygons(m.data as ArrayLike<number>, n, polygons, { stride: m.shape[1] });
    if (rule === "intersection") markIntersecting(sd, tableName, polygons, mask);
  } else {
    const idx = req.cell_indices;
    if (!Array.isArray(idx)) throw new BadRequestError("cell_indices must be an array of row indices");
    mask = new Uint8Array(n);
    for (let k = 0; k < idx.length; k++) {
      const i = idx[k];
      if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i >= n)
        throw new BadRequestError(
          `cell_indices[${k}] = ${JSON.stringify(i)} is not a row of table "${tableName}" (0..${n - 1})`,
        );
      mask[i] = 1;
    }
  }
  if (req.invert) for (let i = 0; i < n; i++) mask[i] = mask[i] ? 0 : 1;
  let count = 0;
  for (let i = 0; i < n; i++) count += mask[i]!;
  return { mask, count, ...(polygons ? { polygons } : {}) };
}

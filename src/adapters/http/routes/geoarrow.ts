/**
 * Routes: cell-boundary polygons, `GET /api/sessions/{id}/shapes/{element}/geoarrow?bbox=&limit=` →
 * a GeoArrow IPC stream (canvas world space, 2 decimals, `cell_index` per feature). See
 * docs/api/data.md.
 */

import { canvasShapes, parseBBox, queryShapes } from "../../../sdk/data/shape-index.js";
import { BadRequestError, StateError } from "../../../sdk/errors.js";
import { geoArrowTable } from "../../../sdk/io/arrow/geoarrow.js";
import { sendArrow } from "../arrow.js";
import type { RouteModule } from "../deps.js";
import { readSession } from "../request.js";

function parseLimit(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(Number(text)))
    throw new BadRequestError(`limit must be a non-negative integer (got "${text}")`);
  return Number(text);
}

/** Registers the geoarrow routes. */
export const geoarrowRoutes: RouteModule = (app, { service }) => {
  app.get<{ Params: { id: string; element: string }; Querystring: { bbox?: string; limit?: string } }>(
    "/api/sessions/:id/shapes/:element/geoarrow",
    async (req, reply) => {
      const s = readSession(service, req.params.id);
      if (s.status !== "ready")
        throw new StateError(`session ${s.id} is ${s.status}; its shapes are not readable`);
      const { bbox, limit } = req.query;
      const box = bbox === undefined ? null : parseBBox(String(bbox));
      const n = parseLimit(limit === undefined ? undefined : String(limit));
      const shapes = canvasShapes(s.data, s.activeTable, req.params.element);
      return sendArrow(reply, geoArrowTable(shapes, queryShapes(shapes, box, n)));
    },
  );
};

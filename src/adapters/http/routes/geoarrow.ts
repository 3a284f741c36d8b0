/**
 * Routes: cell-boundary polygons, `GET /api/sessions/{id}/shapes/{element}/geoarrow?bbox=&limit=` →
 * a GeoArrow IPC stream (canvas world space, 2 decimals, `cell_index` per feature). See
 * docs/api/data.md. Parsing `bbox` and `limit` and the query are the SDK's (`shapesArrow`).
 */
import { shapesArrow } from "../../../sdk/session/reads.js";
import { sendArrow } from "../arrow.js";
import type { RouteModule } from "../deps.js";
import { readSession } from "../request.js";

/** Registers the geoarrow routes. */
export const geoarrowRoutes: RouteModule = (app, { service }) => {
  app.get<{ Params: { id: string; element: string }; Querystring: { bbox?: string; limit?: string } }>(
    "/api/sessions/:id/shapes/:element/geoarrow",
    async (req, reply) =>
      sendArrow(reply, shapesArrow(readSession(service, req.params.id), req.params.element, req.query)),
  );
};

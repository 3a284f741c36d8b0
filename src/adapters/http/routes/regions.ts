/**
 * Routes: regions (`POST /api/sessions/{id}/subset`, `POST /api/sessions/{id}/annotate`). Both take a
 * selection (polygons in canvas world coordinates, or explicit rows of the active table), check it
 * against the committed object (400 before anything is queued), and answer `{job_id}`. The schemas
 * check shapes and types; "exactly one of polygons and cell_indices" is the SDK's check, which says so.
 */

import { MAX_NAME_LENGTH, MAX_POLYGON_VERTICES, MAX_POLYGONS } from "../../../sdk/input-limits.js";
import { annotate } from "../../../sdk/session/annotate.js";
import type { SubsetRequest } from "../../../sdk/session/subset.js";
import type { RouteModule } from "../deps.js";
import { mutableSession } from "../request.js";

const ring = {
  type: "array",
  minItems: 3,
  maxItems: MAX_POLYGON_VERTICES,
  items: { type: "array", minItems: 2, maxItems: 2, items: { type: "number" } },
} as const;
const selection = {
  polygons: { type: "array", minItems: 1, maxItems: MAX_POLYGONS, items: ring },
  cell_indices: { type: "array", items: { type: "integer", minimum: 0 } },
} as const;

const subsetBody = {
  type: "object",
  properties: {
    ...selection,
    coordinate_system: { type: "string", minLength: 1, maxLength: MAX_NAME_LENGTH },
    invert: { type: "boolean" },
  },
  additionalProperties: false,
} as const;

const annotateBody = {
  type: "object",
  required: ["region_set", "category"],
  properties: {
    ...selection,
    region_set: { type: "string", minLength: 1, maxLength: MAX_NAME_LENGTH },
    category: { type: "string", minLength: 1, maxLength: MAX_NAME_LENGTH },
    color: { type: "string", pattern: "^#[0-9a-fA-F]{6}$" },
  },
  additionalProperties: false,
} as const;

/** Registers the regions routes. */
export const regionsRoutes: RouteModule = (app, { service }) => {
  app.post<{ Params: { id: string }; Body: SubsetRequest }>(
    "/api/sessions/:id/subset",
    { schema: { body: subsetBody } },
    async (req) => {
      mutableSession(service, req, req.params.id);
      const ticket = await service.subset(req.params.id, req.body);
      return { job_id: ticket.job_id };
    },
  );
  app.post<{ Params: { id: string }; Body: Parameters<typeof annotate>[1] }>(
    "/api/sessions/:id/annotate",
    { schema: { body: annotateBody } },
    async (req) => {
      const s = mutableSession(service, req, req.params.id);
      const ticket = await annotate(s, req.body);
      return { job_id: ticket.job_id };
    },
  );
};

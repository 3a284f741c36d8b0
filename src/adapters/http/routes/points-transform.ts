/**
 * Routes: the points-to-global affine of the active table's region element.
 * `GET /api/sessions/{id}/points-transform` → `{affine, element, coordinate_system}`;
 * `POST` `{affine, path?}` → `{job_id, path}` (queued, lock-gated, persisted). See docs/api/data.md.
 */
import {
  type PointsTransformRequest,
  setPointsTransform,
} from "../../../sdk/session/points-transform-job.js";
import { pointsTransform } from "../../../sdk/session/reads.js";
import type { RouteModule } from "../deps.js";
import { mutableSession, readSession } from "../request.js";

const body = {
  type: "object",
  required: ["affine"],
  properties: {
    // No item or path types: ajv coerces ("1" → 1, 5 → "5"); the SDK checks both strictly.
    affine: { type: "array" },
    path: {},
  },
  additionalProperties: false,
} as const;

/** Registers the points-transform routes. */
export const pointsTransformRoutes: RouteModule = (app, { service }) => {
  app.get<{ Params: { id: string } }>("/api/sessions/:id/points-transform", async (req) =>
    pointsTransform(readSession(service, req.params.id)),
  );
  app.post<{ Params: { id: string }; Body: PointsTransformRequest }>(
    "/api/sessions/:id/points-transform",
    { schema: { body } },
    async (req) => {
      const s = mutableSession(service, req, req.params.id);
      return setPointsTransform(s, service.config.dataDir, req.body);
    },
  );
};

/**
 * Routes: displays (`PUT /api/sessions/{id}/displays/{displayId}`, `POST /api/sessions/{id}/displays`).
 * A display is validated against the app-state JSON Schema by the session; every change emits
 * `display.updated`. PUT creates a display it does not know (upsert), so a client may mint ids.
 */

import { BadRequestError } from "../../../sdk/errors.js";
import type { DisplaySpec } from "../../../sdk/io/checkpoint/app-state.js";
import type { RouteModule } from "../deps.js";
import { mutableSession } from "../request.js";

/** The top-level shape every DisplaySpec has; the encoding and viewport are checked by the session. */
const displayBody = {
  type: "object",
  required: ["type", "encoding", "viewport"],
  properties: {
    id: { type: "string", minLength: 1 },
    type: { type: "string", enum: ["spatial_canvas", "embedding_canvas"] },
    encoding: { type: "object" },
    viewport: { type: "object" },
  },
  additionalProperties: false,
} as const;

/** Ids a client may mint for PUT: uuids and other plain tokens, nothing that needs escaping. */
const displayParams = {
  type: "object",
  properties: { displayId: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" } },
} as const;

/** Registers the displays routes. */
export const displaysRoutes: RouteModule = (app, { service }) => {
  app.put<{ Params: { id: string; displayId: string }; Body: DisplaySpec }>(
    "/api/sessions/:id/displays/:displayId",
    { schema: { body: displayBody, params: displayParams } },
    async (req) => {
      const { id, displayId } = req.params;
      // A loading session's app state is replaced when its checkpoint arrives: displays wait for it (409).
      const s = mutableSession(service, req, id, { ready: "displays" });
      if (req.body.id !== undefined && req.body.id !== displayId)
        throw new BadRequestError(
          `body id "${req.body.id}" does not match the path's display id "${displayId}"`,
        );
      s.putDisplay({ ...req.body, id: displayId });
      return { ok: true };
    },
  );
  app.post<{ Params: { id: string }; Body: DisplaySpec }>(
    "/api/sessions/:id/displays",
    { schema: { body: displayBody } },
    async (req) => {
      const s = mutableSession(service, req, req.params.id, { ready: "displays" });
      if (req.body.id !== undefined)
        throw new BadRequestError(
          "POST mints the display id; leave id out (PUT /displays/{displayId} sets one)",
        );
      return s.addDisplay(req.body);
    },
  );
};

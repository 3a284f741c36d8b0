/**
 * Routes: presence and the edit lock (spec "Presence and lock", "Authentication" 3–5). The heartbeat
 * registers, renames and moves a viewer; the lock routes take and release a session's lock
 * explicitly. All rules live in the SDK's `Presence`.
 */
import type { Heartbeat } from "../../../sdk/session/presence.js";
import type { RouteModule } from "../deps.js";
import { clientId, clientName, readSession } from "../request.js";

const HEARTBEAT_BODY = {
  type: "object",
  required: ["client_id"],
  additionalProperties: false,
  properties: {
    client_id: { type: "string", minLength: 1, maxLength: 200 },
    name: { type: "string", maxLength: 200 },
    session_id: { type: ["string", "null"] },
  },
} as const;

/** Registers the presence routes. */
export const presenceRoutes: RouteModule = (app, { service }) => {
  app.post("/api/presence", { schema: { body: HEARTBEAT_BODY } }, async (req) => {
    const b = req.body as Partial<Heartbeat> & { client_id: string };
    return service.presence.heartbeat({
      client_id: b.client_id,
      name: b.name ?? "",
      session_id: b.session_id ?? null,
    });
  });

  app.post("/api/sessions/:id/lock", async (req) => {
    const { id } = req.params as { id: string };
    readSession(service, id);
    service.presence.takeLock(id, clientId(req), clientName(req));
    return { ok: true };
  });

  app.delete("/api/sessions/:id/lock", async (req) => {
    const { id } = req.params as { id: string };
    readSession(service, id);
    service.presence.releaseLock(id, clientId(req));
    return { ok: true };
  });
};

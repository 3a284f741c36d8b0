/**
 * Routes: presence and the edit lock (spec "Presence and lock", "Authentication" 3–5). The heartbeat
 * registers, renames and moves a viewer; the lock routes take and release a session's lock
 * explicitly. All rules live in the SDK's `Presence`; answers show a holder by its public id only.
 */
import { type Heartbeat, MAX_CLIENT_NAME } from "../../../sdk/session/presence.js";
import type { RouteModule } from "../deps.js";
import { clientId, clientName, readSession } from "../request.js";

const HEARTBEAT_BODY = {
  type: "object",
  required: ["client_id"],
  additionalProperties: false,
  properties: {
    // The SDK's Presence checks the same rules (charset, control characters) with its own messages.
    client_id: { type: "string", minLength: 8, maxLength: 128, pattern: "^[A-Za-z0-9_-]+$" },
    name: { type: "string", maxLength: MAX_CLIENT_NAME },
    session_id: { type: ["string", "null"], maxLength: 200 },
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

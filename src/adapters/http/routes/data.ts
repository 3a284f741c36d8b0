/**
 * Routes: bulk field data, `GET /api/sessions/{id}/data/{fieldPath}` → an Arrow IPC stream of one
 * RecordBatch (see docs/api/data.md for the column layout of each field kind). The field path is
 * everything after `/data/`, so keys holding `/` need no escaping beyond the usual percent-encoding.
 * Which reader serves a gene (the checkpoint's mirror or X) is the session's decision (`fieldArrow`).
 */
import { fieldArrow } from "../../../sdk/session/reads.js";
import { sendArrow } from "../arrow.js";
import type { RouteModule } from "../deps.js";
import { readSession } from "../request.js";

/** Registers the data routes. */
export const dataRoutes: RouteModule = (app, { service }) => {
  app.get<{ Params: { id: string; "*": string } }>("/api/sessions/:id/data/*", async (req, reply) =>
    sendArrow(reply, await fieldArrow(readSession(service, req.params.id), req.params["*"])),
  );
};

/**
 * Routes: bulk field data, `GET /api/sessions/{id}/data/{fieldPath}` → an Arrow IPC stream of one
 * RecordBatch (see docs/api/data.md for the column layout of each field kind). The field path is
 * everything after `/data/`, so keys holding `/` need no escaping beyond the usual percent-encoding.
 */

import { StateError } from "../../../sdk/errors.js";
import { fieldBatch } from "../../../sdk/io/arrow/field-batch.js";
import { sendArrow } from "../arrow.js";
import type { RouteModule } from "../deps.js";
import { readSession } from "../request.js";

/** Registers the data routes. */
export const dataRoutes: RouteModule = (app, { service }) => {
  app.get<{ Params: { id: string; "*": string } }>("/api/sessions/:id/data/*", async (req, reply) => {
    const s = readSession(service, req.params.id);
    if (s.status !== "ready")
      throw new StateError(`session ${s.id} is ${s.status}; its data is not readable`);
    const table = await fieldBatch(s.data, req.params["*"], {
      activeTable: s.activeTable,
      geneReader: (t, gene) => s.geneValues(t, gene),
    });
    return sendArrow(reply, table);
  });
};

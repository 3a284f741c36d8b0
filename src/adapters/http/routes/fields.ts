/**
 * Routes: browsing a session's tables and fields (`/obs/{column}/values`, `/var-names`, `/elements`,
 * `/table`). All read the last committed object and are never lock-gated; a session that is still
 * loading, or failed to load, answers 409 (it has no object to read yet).
 */
import { elementInventory } from "../../../sdk/data/element-inventory.js";
import { obsValueCounts } from "../../../sdk/data/obs-values.js";
import { TABLE_PAGE_DEFAULT_LIMIT, tablePage } from "../../../sdk/data/table-page.js";
import {
  searchVarNames,
  VAR_SEARCH_DEFAULT_LIMIT,
  VAR_SEARCH_MAX_LIMIT,
} from "../../../sdk/data/var-search.js";
import { NotFoundError } from "../../../sdk/errors.js";
import { requireReady } from "../../../sdk/session/readiness.js";
import type { Service } from "../../../sdk/session/service.js";
import type { RouteModule } from "../deps.js";
import { readSession } from "../request.js";

/** A ready session (404 unknown, 409 loading or errored). */
function readySession(service: Service, id: string, what: string) {
  const s = readSession(service, id);
  requireReady(s, what);
  return s;
}

/** The active table of a ready session, or a 404 when the object has none. */
function activeTable(service: Service, id: string, what: string) {
  const s = readySession(service, id, what);
  const t = s.activeTable ? s.data.tables[s.activeTable] : undefined;
  if (!t) throw new NotFoundError(`session ${id} has no table`);
  return t;
}

const query = (properties: Record<string, object>) =>
  ({ querystring: { type: "object", additionalProperties: false, properties } }) as const;

/** Registers the fields routes. */
export const fieldsRoutes: RouteModule = (app, { service }) => {
  const base = "/api/sessions/:id";

  app.get<{ Params: { id: string; column: string } }>(`${base}/obs/:column/values`, async (req) => {
    const { id, column } = req.params;
    return { column, values: obsValueCounts(activeTable(service, id, "obs values"), column) };
  });

  app.get<{ Params: { id: string }; Querystring: { q: string; limit: number } }>(
    `${base}/var-names`,
    {
      schema: query({
        q: { type: "string", default: "" },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: VAR_SEARCH_MAX_LIMIT,
          default: VAR_SEARCH_DEFAULT_LIMIT,
        },
      }),
    },
    async (req) => {
      const t = activeTable(service, req.params.id, "var names");
      return { names: searchVarNames(t.var.index, req.query.q, req.query.limit) };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { sizes?: string } }>(
    `${base}/elements`,
    { schema: query({ sizes: { type: "string", enum: ["true", "false", "1", "0"] } }) },
    async (req) => {
      const s = readySession(service, req.params.id, "elements");
      return elementInventory(s.data, s.activeTable, {
        sizes: req.query.sizes === "1" || req.query.sizes === "true",
      });
    },
  );

  app.get<{ Params: { id: string }; Querystring: { path: string; offset: number; limit: number } }>(
    `${base}/table`,
    {
      schema: {
        querystring: {
          type: "object",
          additionalProperties: false,
          required: ["path"],
          properties: {
            path: { type: "string", minLength: 1 },
            offset: { type: "integer", minimum: 0, default: 0 },
            limit: { type: "integer", minimum: 0, default: TABLE_PAGE_DEFAULT_LIMIT },
          },
        },
      },
    },
    async (req) => {
      const s = readySession(service, req.params.id, "tables");
      const { path, offset, limit } = req.query;
      return tablePage(s.data, s.activeTable, path, offset, limit);
    },
  );
};

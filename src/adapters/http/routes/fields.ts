/**
 * Routes: browsing a session's tables and fields (`/obs/{column}/values`, `/var-names`, `/elements`,
 * `/table`). All read the last committed object and are never lock-gated; a session that is still
 * loading, or failed to load, answers 409 (it has no object to read yet).
 */
import {
  elements,
  obsValues,
  TABLE_PAGE_DEFAULT_LIMIT,
  tableRows,
  VAR_SEARCH_DEFAULT_LIMIT,
  VAR_SEARCH_MAX_LIMIT,
  varNames,
} from "../../../sdk/session/reads.js";
import type { RouteModule } from "../deps.js";
import { readSession } from "../request.js";

const query = (properties: Record<string, object>) =>
  ({ querystring: { type: "object", additionalProperties: false, properties } }) as const;

/** Registers the fields routes. */
export const fieldsRoutes: RouteModule = (app, { service }) => {
  const base = "/api/sessions/:id";

  app.get<{ Params: { id: string; column: string } }>(`${base}/obs/:column/values`, async (req) => {
    const { id, column } = req.params;
    return { column, values: obsValues(readSession(service, id), column) };
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
      return { names: varNames(readSession(service, req.params.id), req.query.q, req.query.limit) };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { sizes?: string } }>(
    `${base}/elements`,
    { schema: query({ sizes: { type: "string", enum: ["true", "false", "1", "0"] } }) },
    async (req) => {
      const sizes = req.query.sizes === "1" || req.query.sizes === "true";
      return elements(readSession(service, req.params.id), { sizes });
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
      const { path, offset, limit } = req.query;
      return tableRows(readSession(service, req.params.id), path, offset, limit);
    },
  );
};

/**
 * Route: save (`POST /api/sessions/{id}/save`, spec "Save"). The session checks the whole request
 * before queuing (every bad field is a 400 and no job starts); the answer names the job and where it
 * writes. Content-addressed names are known only once written: `path` is then null, `pattern` shows
 * the name with `<hash>`, and the final path arrives on `job.completed`.
 */
import { Ajv } from "ajv";
import type { SaveOptions } from "../../../sdk/session/types.js";
import type { RouteModule } from "../deps.js";
import { mutableSession } from "../request.js";

/** JSON bodies are checked without type coercion (the app's shared ajv turns `5` into `"5"`). */
const strictAjv = new Ajv({ coerceTypes: false, useDefaults: false, allErrors: false, strict: false });

/** The body (absent, null or an object): every field optional; selections are checked by the session against the data. */
const SAVE_BODY = {
  type: ["object", "null"],
  additionalProperties: false,
  properties: {
    folder: { type: "string" },
    prefix: { type: "string" },
    name: { type: "string" },
    path: { type: "string" },
    include: { type: "object" },
    levels: { type: "object" },
    slots: { type: "object" },
    figures: { type: "array", items: { type: "string" } },
  },
} as const;

/** Registers the save route. */
export const saveRoutes: RouteModule = (app, { service }) => {
  app.post<{ Params: { id: string }; Body: SaveOptions | null }>(
    "/api/sessions/:id/save",
    { schema: { body: SAVE_BODY }, validatorCompiler: ({ schema }) => strictAjv.compile(schema) },
    async (req) => {
      // Never refused for memory: a save streams (a few chunks beside the data) and is how work is kept.
      const session = mutableSession(service, req, req.params.id, { admit: false });
      const t = await session.save(req.body ?? {});
      return { job_id: t.job_id, path: t.path, pattern: t.pattern, export: t.export };
    },
  );
};

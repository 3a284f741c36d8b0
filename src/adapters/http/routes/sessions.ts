/**
 * Routes: sessions (`GET/POST /api/sessions`, `GET/DELETE /api/sessions/{id}`). The create body is
 * checked strictly by the SDK (unknown fields, wrong types, missing source: 400; paths outside the data
 * dir, a bad namespace, an unknown reader or a missing load path: 400; too many sessions: 503) and
 * answers 201 with the new session's summary (status `loading`). DELETE is a mutating route (edit-lock
 * gated); with `save:true` the session is saved first and stays open if that fails.
 */
import { Ajv, type ValidateFunction } from "ajv";
import type { RouteModule } from "../deps.js";
import { mutableSession, readSession } from "../request.js";

/**
 * A validator without type coercion: the app's shared ajv coerces (`"yes"` is not a boolean, and `1`
 * must not silently become `true`), which suits query strings but not JSON bodies.
 */
const strictAjv = new Ajv({ coerceTypes: false, useDefaults: false, allErrors: false, strict: false });

/** The optional DELETE body. */
const DELETE_BODY = {
  type: "object",
  additionalProperties: false,
  properties: { save: { type: "boolean" } },
} as const;

type Id = { id: string };

/** A body validator that lets an absent body through (the DELETE body is optional). */
function optionalBody(validate: ValidateFunction) {
  const check = (data: unknown): boolean => {
    // fastify hands an absent body over as null.
    if (data === undefined || data === null) return true;
    const ok = validate(data);
    check.errors = validate.errors;
    return ok;
  };
  check.errors = null as ValidateFunction["errors"];
  return check;
}

/** Registers the sessions routes. */
export const sessionsRoutes: RouteModule = (app, { service }) => {
  app.get("/api/sessions", async () => ({ sessions: service.list() }));

  app.post("/api/sessions", async (req, reply) => {
    const session = await service.createSessionFromBody(req.body);
    void reply.code(201).header("location", `/api/sessions/${session.id}`);
    return session.summary();
  });

  app.get<{ Params: Id }>("/api/sessions/:id", async (req) => readSession(service, req.params.id).state());

  app.delete<{ Params: Id; Body: { save?: boolean } | undefined }>(
    "/api/sessions/:id",
    {
      schema: { body: DELETE_BODY },
      validatorCompiler: ({ schema }) => optionalBody(strictAjv.compile(schema)),
    },
    async (req) => {
      mutableSession(service, req, req.params.id);
      await service.deleteSession(req.params.id, { save: req.body?.save === true });
      return { ok: true };
    },
  );
};

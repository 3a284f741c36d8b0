/**
 * Turning anything a route throws into the spec's error answer: the status of the Errors table and a
 * JSON body `{detail}` that says what was wrong. SDK errors carry their status (`TesseraError`);
 * fastify's own errors (bad JSON, schema violations, oversized bodies, wrong content type) keep their
 * 4xx; anything else is a 500 whose detail names the failure without a stack.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { TesseraError } from "../../sdk/session/errors.js";

/** The JSON body of every error answer. */
export interface ErrorBody {
  detail: string;
}

/** A fastify schema-validation failure as one readable sentence (`body/params must be object`). */
function validationDetail(err: FastifyError): string {
  const ctx = err.validationContext ?? "request";
  const parts = (err.validation ?? []).map((v) => {
    const where = v.instancePath ? `${ctx}${v.instancePath.replace(/\//g, ".")}` : ctx;
    if (v.keyword === "additionalProperties")
      return `${where}: unknown field "${(v.params as { additionalProperty?: string }).additionalProperty}"`;
    return `${where} ${v.message ?? "is invalid"}`;
  });
  return parts.length ? parts.join("; ") : err.message;
}

/** Status and body for an error thrown while handling a request. */
export function errorAnswer(err: unknown): { status: number; body: ErrorBody } {
  if (err instanceof TesseraError) return { status: err.status, body: { detail: err.message } };
  const fe = err as FastifyError;
  if (fe && Array.isArray(fe.validation)) return { status: 400, body: { detail: validationDetail(fe) } };
  const status = typeof fe?.statusCode === "number" ? fe.statusCode : 500;
  if (status >= 400 && status < 500) return { status, body: { detail: fe.message } };
  const msg = err instanceof Error ? err.message : String(err);
  return { status: 500, body: { detail: `internal error: ${msg}` } };
}

/** The fastify error handler: logs 5xx, answers `{detail}` with the mapped status. */
export function handleError(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = errorAnswer(err);
  if (status >= 500) request.log.error({ err }, "request failed");
  void reply.code(status).type("application/json; charset=utf-8").send(body);
}

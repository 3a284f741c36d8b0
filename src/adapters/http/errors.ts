/**
 * Turning anything a route throws into the spec's error answer: the status of the Errors table and a
 * JSON body `{detail}` that says what was wrong. SDK errors carry their status (`TesseraError`);
 * fastify's own errors (bad JSON, schema violations, oversized bodies, wrong content type) keep their
 * 4xx; anything else is a 500 whose detail names the failure without a stack.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { TesseraError } from "../../sdk/errors.js";
import { DataError } from "../../sdk/io/data-error.js";
import { fsErrorSentence } from "../../sdk/session/paths.js";

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

/**
 * A file-system failure caused by the path a client named (a component over 255 bytes, a file where a
 * folder was expected, a link loop, no permission) as a 400 sentence, not a raw errno string or a
 * 500; null for any other error.
 */
export function clientFsDetail(err: unknown): string | null {
  const why = fsErrorSentence(err);
  if (!why) return null;
  const path = (err as NodeJS.ErrnoException).path;
  return typeof path === "string" ? `${JSON.stringify(path)}: ${why}` : why;
}

/** Clearer sentences for fastify's own 4xx errors (the rest keep fastify's message). */
function fastifyDetail(fe: FastifyError): string {
  switch (fe.code) {
    case "FST_ERR_BAD_URL":
      return `malformed URL: ${fe.message.replace(/ is not a valid url component$/, "")} is not valid percent-encoding`;
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return "the body is not valid JSON";
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return "the body is empty but Content-Type says JSON; send a JSON value (or no Content-Type)";
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return "the request body is larger than the 64 MiB limit";
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return `unsupported content type: send JSON (${fe.message})`;
    default:
      return fe.message;
  }
}

/** Status and body for an error thrown while handling a request. */
export function errorAnswer(err: unknown): { status: number; body: ErrorBody } {
  if (err instanceof TesseraError) return { status: err.status, body: { detail: err.message } };
  // A dataset that is not what it claims (a link leading out, broken sparse indices, a short chunk).
  if (err instanceof DataError) return { status: err.status, body: { detail: err.message } };
  const fe = err as FastifyError;
  if (fe && Array.isArray(fe.validation)) return { status: 400, body: { detail: validationDetail(fe) } };
  const fsDetail = clientFsDetail(err);
  if (fsDetail) return { status: 400, body: { detail: fsDetail } };
  const status = typeof fe?.statusCode === "number" ? fe.statusCode : 500;
  if (status >= 400 && status < 500) return { status, body: { detail: fastifyDetail(fe) } };
  const msg = err instanceof Error ? err.message : String(err);
  return { status: 500, body: { detail: `internal error: ${msg}` } };
}

/** The fastify error handler: logs 5xx, answers `{detail}` with the mapped status. */
export function handleError(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = errorAnswer(err);
  if (status >= 500) request.log.error({ err }, "request failed");
  void reply.code(status).type("application/json; charset=utf-8").send(body);
}

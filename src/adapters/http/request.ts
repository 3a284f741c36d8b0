/**
 * What routes read off a request: the caller's client id and display name (headers
 * `X-Tessera-Client-Id`, `X-Tessera-Client-Name`), and the session a path names, checked against the
 * edit lock when the route mutates. The client id is the caller's secret (it holds the lock); both
 * headers are checked (charset, length) and a malformed one is a 400 naming the header.
 */
import type { FastifyRequest } from "fastify";
import { BadRequestError } from "../../sdk/errors.js";
import type { Caller } from "../../sdk/session/gate.js";
import { clientIdProblem, clientNameProblem } from "../../sdk/session/presence.js";
import type { Service } from "../../sdk/session/service.js";
import type { Session } from "../../sdk/session/session.js";

/** Header carrying the client-minted secret id (a uuid) that identifies a lock holder. */
export const CLIENT_ID_HEADER = "x-tessera-client-id";
/** Optional header carrying the caller's display name (shown to other viewers as the lock holder). */
export const CLIENT_NAME_HEADER = "x-tessera-client-name";

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s?.trim() ? s.trim() : undefined;
}

/** The caller's client id, or undefined (CLI, scripts, test harnesses); 400 when malformed. */
export function clientId(req: FastifyRequest): string | undefined {
  const id = header(req, CLIENT_ID_HEADER);
  const problem = id === undefined ? null : clientIdProblem(id, "the X-Tessera-Client-Id header");
  if (problem) throw new BadRequestError(problem);
  return id;
}

/** The caller's display name, or undefined; 400 when malformed. */
export function clientName(req: FastifyRequest): string | undefined {
  const name = header(req, CLIENT_NAME_HEADER);
  const problem = name === undefined ? null : clientNameProblem(name, "the X-Tessera-Client-Name header");
  if (problem) throw new BadRequestError(problem);
  return name;
}

/** The session named by the route (404 when unknown). Read routes are never gated. */
export function readSession(service: Service, id: string): Session {
  return service.session(id);
}

/** The caller as the SDK's mutation gate sees it: the client id and name headers. */
export function callerOf(req: FastifyRequest): Caller {
  return { clientId: clientId(req), clientName: clientName(req) };
}

/**
 * The session named by a mutating route, after the SDK's mutation gate (`Service.mutableSession`):
 * 404 unknown, 423 locked by another viewer, 409 when `ready` names a call that needs loaded data. A
 * POST starts new work, so it is also checked against memory admission (503) unless `admit` is false:
 * saving is how a user gets out of a full server, so it is never refused.
 */
export function mutableSession(
  service: Service,
  req: FastifyRequest,
  id: string,
  opts: { admit?: boolean; ready?: string } = {},
): Session {
  const work =
    req.method === "POST" && opts.admit !== false
      ? `${req.method} ${req.routeOptions.url ?? req.url}`
      : undefined;
  return service.mutableSession(id, callerOf(req), {
    ...(work !== undefined ? { work } : {}),
    ...(opts.ready !== undefined ? { ready: opts.ready } : {}),
  });
}

/**
 * The guard: only the server's own pages, the hosts it is configured for and, on a non-loopback bind,
 * holders of its token may drive it. Tessera reads and writes the user's files and runs computation,
 * like a Jupyter server, so it answers the browser threat the way Jupyter does (a Host check against
 * DNS rebinding, an Origin check, no simple cross-site request can mutate, a token off loopback) and
 * the way the MCP transport rules ask (validate Origin, bind to localhost).
 *
 * Every request, on every route (REST, the event stream, `/api/mcp`, the static app, unknown routes),
 * passes these checks in order, before its body is read:
 *
 * 1. `Host` names a loopback address (127.0.0.0/8, `localhost`, `[::1]`; any port), an address the
 *    server listens on, or a name of `TESSERA_ALLOWED_HOSTS`: else **403** (DNS rebinding).
 * 2. `Origin`, when sent, is the server's own (`http://` + the `Host` the request was sent to) or one
 *    of `TESSERA_ALLOWED_ORIGINS`: else **403**. A listed origin gets CORS headers, and its preflight
 *    (`OPTIONS` with `Access-Control-Request-Method`) is answered 204 here.
 * 3. When the server has a token: `Authorization: Bearer <token>`, `?token=<token>` (which also sets
 *    an HttpOnly SameSite=Strict cookie, so a browser opened on the logged URL stays signed in) or that
 *    cookie: else **401**. The liveness and readiness probes need no token.
 * 4. A mutating method (POST, PUT, PATCH, DELETE) carries `Content-Type: application/json` (else
 *    **415**) or, without a body, one of the headers no cross-site simple request can send
 *    (`X-Tessera-Client`, `X-Tessera-Client-Id`, `Authorization`, `Mcp-Session-Id`): else **403**.
 * 5. `X-Tessera-Client-Id` / `X-Tessera-Client-Name`, when sent, are well formed: else **400**.
 *
 * The decisions are small pure functions (exported, unit-tested); the plugin only wires them.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { networkInterfaces } from "node:os";
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { TesseraError } from "../../sdk/errors.js";
import { CLIENT_ID_HEADER, CLIENT_NAME_HEADER, clientId, clientName } from "./request.js";

/** What the guard enforces. */
export interface GuardOptions {
  /** The token every request must carry, or null for none (the default on a loopback bind). */
  token: string | null;
  /**
   * Host names or IP addresses accepted in `Host` besides loopback ones (a port, if given, is
   * ignored); `*` accepts any host (only sensible behind a token).
   */
  allowedHosts: readonly string[];
  /** Origins (`https://app.example:8443`) allowed besides the server's own: pages embedding the viewer. */
  allowedOrigins: readonly string[];
}

/** Header a script without a client id sends on a body-less mutating request (any value). */
export const SCRIPT_HEADER = "x-tessera-client";

/** The guard's options compiled for fast checks. */
export interface GuardPolicy {
  readonly token: string | null;
  /** Normalized host names accepted besides loopback ones, or `any`. */
  readonly hosts: ReadonlySet<string> | "any";
  /** Normalized origins accepted besides the server's own. */
  readonly origins: ReadonlySet<string>;
}

/** A refusal of the guard: the status and a `{detail}` message. */
export class GuardError extends TesseraError {}

// ---------------------------------------------------------------------------------------------------
// Pure decisions

/** A `Host` header (or host list entry) as its normalized host name and port, or null when malformed. */
export function parseHost(value: string | undefined): { hostname: string; port: string } | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$/.test(v)) return null;
  try {
    // The URL parser normalizes as a browser does: case, IPv4 forms (0x7f.1 → 127.0.0.1), IPv6
    // zero runs, a default port (80 → "").
    const u = new URL(`http://${v}`);
    return { hostname: u.hostname, port: u.port };
  } catch {
    return null;
  }
}

/** Whether a normalized host name is a loopback one: 127.0.0.0/8, `localhost`, `[::1]` (or `[::ffff:127.…]`). */
export function isLoopbackHostname(hostname: string): boolean {
  return (
    hostname === "localhost" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) ||
    hostname === "[::1]" ||
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(hostname)
  );
}

/** Whether a bind address listens on loopback only (no token needed by default). */
export function isLoopbackBind(address: string): boolean {
  const a = address.trim();
  const parsed = parseHost(a.includes(":") && !a.startsWith("[") ? `[${a}]` : a);
  return parsed !== null && isLoopbackHostname(parsed.hostname);
}

/** Whether a bind address is a wildcard (every interface). */
export function isWildcardBind(address: string): boolean {
  return ["0.0.0.0", "::", "[::]", ""].includes(address.trim());
}

/**
 * The host names a server bound to `address` answers to besides loopback: the address itself, or for
 * a wildcard bind every address of the machine's interfaces (an IP literal cannot be a rebinding name).
 */
export function bindHosts(
  address: string,
  interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces(),
): string[] {
  if (!isWildcardBind(address)) return [address.trim()];
  const out: string[] = [];
  for (const list of Object.values(interfaces))
    for (const i of list ?? []) {
      const h = i.family === "IPv6" ? `[${i.address}]` : i.address;
      if (parseHost(h)) out.push(h);
    }
  return out;
}

/** The origin of a URL (`scheme://host[:port]`, normalized), or null unless it is http(s). */
export function normalizeOrigin(value: string): string | null {
  try {
    const u = new URL(value.trim());
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return u.origin;
  } catch {
    return null;
  }
}

/** Compile options into a policy; a malformed entry throws an error naming its setting. */
export function compilePolicy(opts: GuardOptions): GuardPolicy {
  let hosts: Set<string> | "any" = new Set();
  for (const h of opts.allowedHosts) {
    if (h.trim() === "*") {
      hosts = "any";
      break;
    }
    const p = parseHost(h.includes(":") && !h.startsWith("[") && h.split(":").length > 2 ? `[${h}]` : h);
    if (!p) throw new Error(`TESSERA_ALLOWED_HOSTS: ${JSON.stringify(h)} is not a host name or address`);
    hosts.add(p.hostname);
  }
  const origins = new Set<string>();
  for (const o of opts.allowedOrigins) {
    const n = normalizeOrigin(o);
    if (!n) throw new Error(`TESSERA_ALLOWED_ORIGINS: ${JSON.stringify(o)} is not an http(s) origin`);
    origins.add(n);
  }
  if (opts.token !== null && opts.token.length < 8)
    throw new Error("TESSERA_TOKEN: a token must be at least 8 characters long");
  return { token: opts.token, hosts, origins };
}

/** Whether the `Host` header names this server: loopback, or an allowed host. */
export function hostAllowed(host: string | undefined, policy: GuardPolicy): boolean {
  const p = parseHost(host);
  if (!p) return false;
  if (isLoopbackHostname(p.hostname)) return true;
  return policy.hosts === "any" || policy.hosts.has(p.hostname);
}

/** The server's own origin for a request sent to `host`: `http://` + that Host. */
export function ownOrigin(host: string | undefined): string | null {
  return host === undefined ? null : normalizeOrigin(`http://${host.trim()}`);
}

/**
 * How the `Origin` header stands: `own` (the server's own page), `listed` (an allowed embedding
 * origin), or `foreign` (anything else, `null` included).
 */
export function classifyOrigin(
  origin: string,
  host: string | undefined,
  policy: GuardPolicy,
): "own" | "listed" | "foreign" {
  const n = normalizeOrigin(origin);
  if (n === null) return "foreign";
  if (n === ownOrigin(host)) return "own";
  return policy.origins.has(n) ? "listed" : "foreign";
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Headers a cross-site simple request (form post, no-preflight fetch) can never carry. */
const PREFLIGHTED_HEADERS = [SCRIPT_HEADER, CLIENT_ID_HEADER, "authorization", "mcp-session-id"];

/** Whether a Content-Type is JSON (`application/json`, any parameters). */
export function isJsonType(contentType: string): boolean {
  return contentType.split(";")[0]!.trim().toLowerCase() === "application/json";
}

type Headers = Readonly<Record<string, string | string[] | undefined>>;

function headerOf(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Why a request may not mutate (status and message), or null when it may: mutating methods carry a
 * JSON body or, without a body, a header only a script or the app's own code can set.
 */
export function mutationProblem(method: string, headers: Headers): { status: number; detail: string } | null {
  if (!MUTATING.has(method.toUpperCase())) return null;
  const type = headerOf(headers, "content-type")?.trim();
  if (type) {
    if (isJsonType(type)) return null;
    return {
      status: 415,
      detail: `a ${method} request's body must be JSON (Content-Type: application/json), got Content-Type ${JSON.stringify(type)}`,
    };
  }
  const length = headerOf(headers, "content-length");
  if (headerOf(headers, "transfer-encoding") || (length !== undefined && length.trim() !== "0"))
    return {
      status: 415,
      detail: `a ${method} request's body must be JSON: send Content-Type: application/json`,
    };
  if (PREFLIGHTED_HEADERS.some((h) => headerOf(headers, h)?.trim())) return null;
  return {
    status: 403,
    detail: `a ${method} request without a JSON body must carry an X-Tessera-Client header (any value) or X-Tessera-Client-Id, so no other site can send it`,
  };
}

/** Whether a presented token equals the expected one (constant time). */
export function tokenMatches(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** A fresh random token (32 bytes, URL-safe base64). */
export function mintToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Name of the cookie holding the token: per port, so servers on one host keep their own. */
export function tokenCookieName(host: string | undefined): string {
  return `tessera-token-${parseHost(host)?.port || "80"}`;
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The token a request presents and how: the Authorization header, the `token` query, or the cookie. */
export function presentedToken(
  headers: Headers,
  query: string,
): { token: string; via: "header" | "query" | "cookie" } | null {
  const auth = headerOf(headers, "authorization");
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  if (m) return { token: m[1]!, via: "header" };
  const q = new URLSearchParams(query).get("token");
  if (q) return { token: q, via: "query" };
  const c = cookieValue(headerOf(headers, "cookie"), tokenCookieName(headerOf(headers, "host")));
  if (c) {
    try {
      return { token: decodeURIComponent(c), via: "cookie" };
    } catch {
      return { token: c, via: "cookie" };
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------
// The plugin

/** Routes a probe calls: no token needed (they reveal nothing and change nothing). */
const PROBES = new Set(["/api/healthz", "/api/readyz"]);

const CORS_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";
const CORS_HEADERS = [
  "authorization",
  "content-type",
  SCRIPT_HEADER,
  CLIENT_ID_HEADER,
  CLIENT_NAME_HEADER,
  "last-event-id",
  "range",
  "if-range",
  "mcp-session-id",
].join(", ");

function appendVary(reply: FastifyReply, value: string): void {
  const vary = String(reply.getHeader("vary") ?? "");
  if (
    !vary
      .toLowerCase()
      .split(/\s*,\s*/)
      .includes(value.toLowerCase())
  )
    reply.header("vary", vary ? `${vary}, ${value}` : value);
}

function check(req: FastifyRequest, reply: FastifyReply, policy: GuardPolicy): FastifyReply | undefined {
  const host = req.headers.host;
  if (!hostAllowed(host, policy))
    throw new GuardError(
      `Host ${JSON.stringify(host ?? "")} is not allowed: this server answers to loopback addresses, ` +
        "the addresses it listens on and the names in TESSERA_ALLOWED_HOSTS",
      403,
    );
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const kind = classifyOrigin(origin, host, policy);
    if (kind === "foreign")
      throw new GuardError(
        `Origin ${JSON.stringify(origin)} is not allowed: only this server's own pages and the origins in TESSERA_ALLOWED_ORIGINS may call it`,
        403,
      );
    if (kind === "listed") {
      reply.header("access-control-allow-origin", normalizeOrigin(origin));
      appendVary(reply, "Origin");
      if (req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined)
        return reply
          .code(204)
          .header("access-control-allow-methods", CORS_METHODS)
          .header("access-control-allow-headers", CORS_HEADERS)
          .header("access-control-max-age", "600")
          .send();
    }
  }
  const q = req.url.indexOf("?");
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const query = q < 0 ? "" : req.url.slice(q + 1);
  if (policy.token !== null && !((req.method === "GET" || req.method === "HEAD") && PROBES.has(path))) {
    const given = presentedToken(req.headers, query);
    if (!given || !tokenMatches(given.token, policy.token)) {
      reply.header("www-authenticate", 'Bearer realm="tessera"');
      throw new GuardError(
        given
          ? "the token is wrong: use the one printed when the server started (or TESSERA_TOKEN)"
          : "this server needs its token: open the URL printed when it started (…/?token=…), or send Authorization: Bearer <token>",
        401,
      );
    }
    if (given.via === "query")
      reply.header(
        "set-cookie",
        `${tokenCookieName(host)}=${encodeURIComponent(given.token)}; Path=/; HttpOnly; SameSite=Strict`,
      );
  }
  const problem = mutationProblem(req.method, req.headers);
  if (problem) throw new GuardError(problem.detail, problem.status);
  clientId(req);
  clientName(req);
  // The token is the guard's, not a route parameter (query schemas refuse unknown fields).
  const parsed = req.query as Record<string, unknown> | undefined;
  if (parsed && typeof parsed === "object" && "token" in parsed) delete parsed.token;
  return undefined;
}

/**
 * The guard as a fastify plugin (see the module comment). Its hook is added to the instance it is
 * registered on, not an encapsulated child, so it covers every route and the 404 answer; register it
 * first.
 */
export const guardPlugin: FastifyPluginCallback<GuardOptions> = (app, opts, done) => {
  const policy = compilePolicy(opts);
  app.addHook("onRequest", (req, reply, next) => {
    try {
      if (check(req, reply, policy) === undefined) next();
    } catch (err) {
      next(err as Error);
    }
  });
  done();
};
// Not encapsulated: the hook applies to the whole app (what fastify-plugin does).
(guardPlugin as unknown as Record<symbol, unknown>)[Symbol.for("skip-override")] = true;
(guardPlugin as unknown as Record<symbol, unknown>)[Symbol.for("fastify.display-name")] = "tessera-guard";

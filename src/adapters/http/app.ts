/**
 * The fastify app factory: a thin HTTP layer over a `Service`. Every route parses its input, calls
 * the SDK and serialises the answer; this file only sets what all routes share: the error answer
 * (`{detail}` with the spec's status), the guard (Host, Origin, token, no simple cross-site mutation:
 * `guard.ts`), gzip for JSON and Arrow (off the event loop, refusals honoured) with
 * `Vary: Accept-Encoding` on every such response, body limits, and the 404 answer.
 */
import type { Socket } from "node:net";
import compress from "@fastify/compress";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { BadRequestError } from "../../sdk/errors.js";
import { jsonTextDepthOver, MAX_JSON_DEPTH, tooDeepMessage } from "../../sdk/input-limits.js";
import type { Service } from "../../sdk/session/service.js";
import { ARROW_STREAM } from "./arrow.js";
import { errorAnswer, handleError } from "./errors.js";
import { type GuardOptions, guardPlugin } from "./guard.js";
import { ROUTES } from "./routes/index.js";

/** Options of `buildApp`. */
export interface HttpAppOptions {
  /** The service the routes drive. */
  service: Service;
  /** fastify's logger (default off; `tessera serve` turns it on). */
  logger?: boolean;
  /** Largest accepted request body in bytes (default 64 MiB: cell index lists of a million cells). */
  bodyLimit?: number;
  /** Interval of the event stream's `: keepalive` comment on an idle stream, ms (default 15 000). */
  sseKeepaliveMs?: number;
  /** Who may drive the server (default: loopback Hosts and the server's own origin, no token). */
  guard?: GuardOptions;
}

/** One route as registered: what the fuzz test (and any client generator) drives from. */
export interface RouteEntry {
  readonly method: string | string[];
  readonly url: string;
  /** The route's JSON Schemas (body, querystring, params), when it declares them. */
  readonly schema?: Readonly<Record<string, unknown>>;
}

const ROUTE_TABLE = new WeakMap<FastifyInstance, RouteEntry[]>();

/** Every route of an app built by `buildApp`, with its schemas, in registration order. */
export function routeTable(app: FastifyInstance): readonly RouteEntry[] {
  return ROUTE_TABLE.get(app) ?? [];
}

/** Response types that are gzip-encoded when the client allows it and always carry `Vary`. */
const COMPRESSIBLE = /^(application\/json|application\/vnd\.apache\.arrow\.stream)/;

/**
 * Connection-level errors (a request node's HTTP parser refuses: a malformed header, a body on a
 * request that cannot have one, a timeout): answered with the usual `{detail}` body before the socket
 * closes, instead of fastify's own shape.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const [status, text, detail] =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? [408, "Request Timeout", "the request was not received in time"]
      : err.code === "HPE_HEADER_OVERFLOW"
        ? [431, "Request Header Fields Too Large", "the request headers are too large"]
        : [400, "Bad Request", `malformed HTTP request (${err.code ?? "parse error"}: ${err.message})`];
  const body = JSON.stringify({ detail });
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(err);
}

/** How long a closing server lets requests in flight finish before it closes their connections. */
const CLOSE_GRACE_MS = 10_000;

/** Build the app (routes registered, not listening). */
export async function buildApp(opts: HttpAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: opts.bodyLimit ?? 64 * 1024 * 1024,
    // Path segments carry field paths such as `X:CD3E` and element names; allow long ones.
    routerOptions: { maxParamLength: 1000 },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, allErrors: false } },
    clientErrorHandler,
    // A URL the router cannot decode (bad percent-encoding) or a path parameter over the length limit.
    frameworkErrors: (err, _req, reply) => {
      const { status, body } = errorAnswer(err);
      void (reply as FastifyReply).code(status).type("application/json; charset=utf-8").send(body);
    },
  });
  app.setErrorHandler(handleError);
  // Closing waits for every open connection to end, and fastify only cuts the idle ones: a keep-alive
  // socket it does not count as idle held a shutdown for the whole keep-alive timeout (~72 s, seen with
  // the MCP client's connections on a loaded machine). Requests still get CLOSE_GRACE_MS to finish.
  app.addHook("preClose", (done) => {
    const cut = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
    cut.unref();
    app.server.once("close", () => clearTimeout(cut));
    done();
  });
  // JSON bodies: refused when nested deeper than MAX_JSON_DEPTH before anything parses them, so no
  // recursive code (validation, cloning, printing) can run out of stack on a hostile body. Otherwise
  // fastify's own parser (prototype-poisoning keys refused).
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) => {
    const text = body as string;
    if (jsonTextDepthOver(text, MAX_JSON_DEPTH) !== null)
      return done(new BadRequestError(tooDeepMessage("the JSON body")), undefined);
    parseJson(req, text, done);
  });
  // First, so its hook runs before any other on every route, the 404 answer included.
  await app.register(guardPlugin, opts.guard ?? { token: null, allowedHosts: [], allowedOrigins: [] });
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ detail: `no route ${request.method} ${request.url.split("?")[0]}` });
  });
  await app.register(compress, {
    global: true,
    encodings: ["gzip"],
    threshold: 0,
    // 0 keeps every compression on zlib's thread pool (the spec: compression runs off the event loop).
    syncThreshold: 0,
    customTypes: COMPRESSIBLE,
  });
  app.addHook("onSend", async (_request, reply, payload) => {
    const type = String(reply.getHeader("content-type") ?? "");
    if (COMPRESSIBLE.test(type) || type.startsWith(ARROW_STREAM)) {
      const vary = String(reply.getHeader("vary") ?? "");
      if (!/accept-encoding/i.test(vary))
        reply.header("vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
    }
    return payload;
  });
  // Shutdown: Node closes idle keep-alive connections once, when close starts. A response still being
  // gzip-streamed at that moment turns idle later and would hold close() for the keep-alive timeout
  // (72 s), so keep sweeping idle connections until the server has closed.
  app.addHook("preClose", (done) => {
    const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
    sweep.unref();
    app.server.once("close", () => clearInterval(sweep));
    done();
  });
  const routes: RouteEntry[] = [];
  ROUTE_TABLE.set(app, routes);
  app.addHook("onRoute", (r) => {
    routes.push({
      method: r.method,
      url: r.url,
      ...(r.schema ? { schema: r.schema as Record<string, unknown> } : {}),
    });
  });
  const deps = { service: opts.service, sseKeepaliveMs: opts.sseKeepaliveMs ?? 15_000 };
  for (const register of ROUTES) register(app, deps);
  return app;
}

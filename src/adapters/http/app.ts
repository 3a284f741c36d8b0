/**
 * The fastify app factory: a thin HTTP layer over a `Service`. Every route parses its input, calls
 * the SDK and serialises the answer; this file only sets what all routes share: the error answer
 * (`{detail}` with the spec's status), the guard (Host, Origin, token, no simple cross-site mutation:
 * `guard.ts`), gzip for JSON and Arrow (off the event loop, refusals honoured) with
 * `Vary: Accept-Encoding` on every such response, body limits, and the 404 answer.
 */
import compress from "@fastify/compress";
import Fastify, { type FastifyInstance } from "fastify";
import type { Service } from "../../sdk/session/service.js";
import { ARROW_STREAM } from "./arrow.js";
import { handleError } from "./errors.js";
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

/** Response types that are gzip-encoded when the client allows it and always carry `Vary`. */
const COMPRESSIBLE = /^(application\/json|application\/vnd\.apache\.arrow\.stream)/;

/** Build the app (routes registered, not listening). */
export async function buildApp(opts: HttpAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: opts.bodyLimit ?? 64 * 1024 * 1024,
    // Path segments carry field paths such as `X:CD3E` and element names; allow long ones.
    routerOptions: { maxParamLength: 1000 },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, allErrors: false } },
  });
  app.setErrorHandler(handleError);
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
  const deps = { service: opts.service, sseKeepaliveMs: opts.sseKeepaliveMs ?? 15_000 };
  for (const register of ROUTES) register(app, deps);
  return app;
}

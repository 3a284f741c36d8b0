/**
 * Running the HTTP service: start a `Service` (or use the one given), build the app, listen on the
 * configured host and port, and shut down cleanly (in-flight saves get up to 120 s to flush). A bind
 * off loopback gets a token (`TESSERA_TOKEN`, else a random one minted here), shown in `openUrl`.
 */
import type { FastifyInstance } from "fastify";
import type { ServiceConfig } from "../../sdk/session/config.js";
import { Service, type ServiceOptions } from "../../sdk/session/service.js";
import { buildApp } from "./app.js";
import { bindHosts, type GuardOptions, isLoopbackBind, isWildcardBind, mintToken } from "./guard.js";

/** Options of `startServer`. */
export interface StartServerOptions extends ServiceOptions {
  /** Use this service (it is then not closed by `close`). */
  service?: Service;
  /** Port (default the configuration's `TESSERA_PORT`; 0 picks a free one). */
  port?: number;
  /** Bind address (default the configuration's `TESSERA_HOST`). */
  host?: string;
  /** fastify request logging. */
  logger?: boolean;
  /** Overrides of the guard derived from the bind address and the configuration (tests). */
  guard?: Partial<GuardOptions>;
}

/** A running server. */
export interface RunningServer {
  readonly app: FastifyInstance;
  readonly service: Service;
  /** Base URL, e.g. `http://127.0.0.1:8000` (the API is under `/api`); loopback for a wildcard bind. */
  readonly url: string;
  /** The token every request must carry, or null. */
  readonly token: string | null;
  /** The URL to open in a browser: `url` + `/?token=…` when there is a token, else `url` + `/`. */
  readonly openUrl: string;
  /** What the guard enforces. */
  readonly guard: GuardOptions;
  /** Stop listening, wait for queued saves, close the service when this server started it. */
  close(): Promise<void>;
}

/** How long a shutdown waits for in-flight saves (spec "Limits": up to 120 s). */
const SHUTDOWN_GRACE_MS = 120_000;

/** Start the service (unless given) and listen. */
export async function startServer(opts: StartServerOptions = {}): Promise<RunningServer> {
  const service = opts.service ?? (await Service.start(opts));
  const port = opts.port ?? service.config.port;
  const host = opts.host ?? service.config.host;
  const guard = guardFor(host, service.config, opts.guard);
  const app = await buildApp({ service, logger: opts.logger ?? false, guard });
  await app.listen({ port, host });
  service.resources.start();
  const addr = app.server.address();
  const actualPort = typeof addr === "object" && addr ? addr.port : port;
  const reachable = isWildcardBind(host) ? (host.includes(":") ? "::1" : "127.0.0.1") : host;
  const shownHost = reachable.includes(":") && !reachable.startsWith("[") ? `[${reachable}]` : reachable;
  const url = `http://${shownHost}:${actualPort}`;
  let closing: Promise<void> | null = null;
  return {
    app,
    service,
    url,
    token: guard.token,
    openUrl: guard.token ? `${url}/?token=${encodeURIComponent(guard.token)}` : `${url}/`,
    guard,
    close() {
      closing ??= (async () => {
        service.resources.stop();
        await app.close();
        if (!opts.service) {
          const idle = Promise.all(service.sessions().map((s) => s.idle()));
          await Promise.race([idle, new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS).unref())]);
          await service.close();
        }
      })();
      return closing;
    },
  };
}

/**
 * The guard of a server bound to `host`: the configured token, else a fresh one unless the bind is
 * loopback; the configured hosts plus the addresses the server listens on; the configured origins.
 */
export function guardFor(
  host: string,
  config: ServiceConfig,
  over: Partial<GuardOptions> = {},
): GuardOptions {
  return {
    token:
      over.token !== undefined ? over.token : (config.token ?? (isLoopbackBind(host) ? null : mintToken())),
    allowedHosts: over.allowedHosts ?? [...(config.allowedHosts ?? []), ...bindHosts(host)],
    allowedOrigins: over.allowedOrigins ?? config.allowedOrigins ?? [],
  };
}

/**
 * Running the HTTP service: start a `Service` (or use the one given), build the app, listen on the
 * configured host and port, and shut down cleanly (in-flight saves get up to 120 s to flush).
 */
import type { FastifyInstance } from "fastify";
import { Service, type ServiceOptions } from "../../sdk/session/service.js";
import { buildApp } from "./app.js";

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
}

/** A running server. */
export interface RunningServer {
  readonly app: FastifyInstance;
  readonly service: Service;
  /** Base URL, e.g. `http://127.0.0.1:8000` (the API is under `/api`). */
  readonly url: string;
  /** Stop listening, wait for queued saves, close the service when this server started it. */
  close(): Promise<void>;
}

/** How long a shutdown waits for in-flight saves (spec "Limits": up to 120 s). */
const SHUTDOWN_GRACE_MS = 120_000;

/** Start the service (unless given) and listen. */
export async function startServer(opts: StartServerOptions = {}): Promise<RunningServer> {
  const service = opts.service ?? (await Service.start(opts));
  const app = await buildApp({ service, logger: opts.logger ?? false });
  const port = opts.port ?? service.config.port;
  const host = opts.host ?? service.config.host;
  await app.listen({ port, host });
  service.resources.start();
  const addr = app.server.address();
  const actualPort = typeof addr === "object" && addr ? addr.port : port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | null = null;
  return {
    app,
    service,
    url: `http://${shownHost}:${actualPort}`,
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

/**
 * The HTTP service as a library (`tessera-omics/server`): build the fastify app over a `Service`
 * (routes registered, not listening) or start a listening server the way `tessera start` does. The
 * `Service` they serve comes from the main entry (`import { Service } from "tessera-omics"`).
 * @packageDocumentation
 */
export { buildApp, type HttpAppOptions } from "./adapters/http/app.js";
export type { GuardOptions } from "./adapters/http/guard.js";
export { type RunningServer, type StartServerOptions, startServer } from "./adapters/http/server.js";

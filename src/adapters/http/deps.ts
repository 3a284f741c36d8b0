/** What every route module is given. */
import type { FastifyInstance } from "fastify";
import type { Service } from "../../sdk/session/service.js";

/** The dependencies of the route modules: the service they drive. */
export interface RouteDeps {
  readonly service: Service;
  /** Interval of the event stream's `: keepalive` comment, ms (spec: 15 s). */
  readonly sseKeepaliveMs?: number;
}

/** A route module: registers its routes (paths include `/api`) on the app. */
export type RouteModule = (app: FastifyInstance, deps: RouteDeps) => void;

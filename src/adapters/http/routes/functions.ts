/** Routes: the function registry (`GET /api/functions`) and its UI coverage report. */
import { functionsEnvelope } from "../../../sdk/session/functions-envelope.js";
import type { RouteModule } from "../deps.js";

/** Registers the functions routes. */
export const functionsRoutes: RouteModule = (app, { service }) => {
  app.get("/api/functions", async () => functionsEnvelope(service.registry, service.functions));
  app.get("/api/functions/coverage", async () => service.registry.coverage());
};

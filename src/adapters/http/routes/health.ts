/** Routes: liveness and readiness (`/api/healthz`, `/api/readyz`). */
import type { RouteModule } from "../deps.js";

/** Registers the health routes. */
export const healthRoutes: RouteModule = (app, { service }) => {
  // Answering at all shows the event loop is responsive.
  app.get("/api/healthz", async () => ({ status: "ok" }));
  app.get("/api/readyz", async () => ({ status: "ready", functions: service.registry.list().length }));
};

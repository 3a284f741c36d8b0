/** Routes: about (`GET /api/about/licenses`: the licences of the installed packages). */
import { licenseReport } from "../../../sdk/about/licenses.js";
import type { RouteModule } from "../deps.js";

/** Registers the about routes. */
export const aboutRoutes: RouteModule = (app) => {
  app.get("/api/about/licenses", async () => licenseReport());
};

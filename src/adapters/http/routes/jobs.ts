/** Routes: jobs (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the jobs routes. */
export const jobsRoutes: RouteModule = (_app, _deps) => {};

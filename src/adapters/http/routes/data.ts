/** Routes: data (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the data routes. */
export const dataRoutes: RouteModule = (_app, _deps) => {};

/** Routes: regions (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the regions routes. */
export const regionsRoutes: RouteModule = (_app, _deps) => {};

/** Routes: functions (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the functions routes. */
export const functionsRoutes: RouteModule = (_app, _deps) => {};

/** Routes: sessions (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the sessions routes. */
export const sessionsRoutes: RouteModule = (_app, _deps) => {};

/** Routes: fs (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the fs routes. */
export const fsRoutes: RouteModule = (_app, _deps) => {};

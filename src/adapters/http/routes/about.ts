/** Routes: about (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the about routes. */
export const aboutRoutes: RouteModule = (_app, _deps) => {};

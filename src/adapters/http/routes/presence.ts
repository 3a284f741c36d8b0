/** Routes: presence (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the presence routes. */
export const presenceRoutes: RouteModule = (_app, _deps) => {};

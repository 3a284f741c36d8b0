/** Routes: events (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the events routes. */
export const eventsRoutes: RouteModule = (_app, _deps) => {};

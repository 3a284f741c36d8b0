/** Routes: displays (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the displays routes. */
export const displaysRoutes: RouteModule = (_app, _deps) => {};

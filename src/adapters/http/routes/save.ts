/** Routes: save (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the save routes. */
export const saveRoutes: RouteModule = (_app, _deps) => {};

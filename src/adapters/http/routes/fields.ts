/** Routes: fields (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the fields routes. */
export const fieldsRoutes: RouteModule = (_app, _deps) => {};

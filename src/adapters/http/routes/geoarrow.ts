/** Routes: geoarrow (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the geoarrow routes. */
export const geoarrowRoutes: RouteModule = (_app, _deps) => {};

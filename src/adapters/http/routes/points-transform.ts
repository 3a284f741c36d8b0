/** Routes: points-transform (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the points-transform routes. */
export const pointsTransformRoutes: RouteModule = (_app, _deps) => {};

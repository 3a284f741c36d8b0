/** Routes: checkpoints (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the checkpoints routes. */
export const checkpointsRoutes: RouteModule = (_app, _deps) => {};

/** Routes: recipes (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the recipes routes. */
export const recipesRoutes: RouteModule = (_app, _deps) => {};

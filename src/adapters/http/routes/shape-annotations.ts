/** Routes: shape-annotations (not built yet). */
import type { RouteModule } from "../deps.js";

/** Registers the shape-annotations routes. */
export const shapeAnnotationsRoutes: RouteModule = (_app, _deps) => {};

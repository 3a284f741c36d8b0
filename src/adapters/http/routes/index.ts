/** Every route module of the API, in registration order. */
import { mcpRoutes } from "../../mcp/route.js";
import type { RouteModule } from "../deps.js";
import { aboutRoutes } from "./about.js";
import { appStaticRoutes } from "./app-static.js";
import { checkpointsRoutes } from "./checkpoints.js";
import { dataRoutes } from "./data.js";
import { displaysRoutes } from "./displays.js";
import { eventsRoutes } from "./events.js";
import { fieldsRoutes } from "./fields.js";
import { fsRoutes } from "./fs.js";
import { functionsRoutes } from "./functions.js";
import { geoarrowRoutes } from "./geoarrow.js";
import { healthRoutes } from "./health.js";
import { imagesRoutes } from "./images.js";
import { jobsRoutes } from "./jobs.js";
import { pointsTransformRoutes } from "./points-transform.js";
import { presenceRoutes } from "./presence.js";
import { recipesRoutes } from "./recipes.js";
import { regionsRoutes } from "./regions.js";
import { saveRoutes } from "./save.js";
import { sessionsRoutes } from "./sessions.js";
import { shapeAnnotationsRoutes } from "./shape-annotations.js";
import { snapshotsRoutes } from "./snapshots.js";

/** The route modules. */
export const ROUTES: readonly RouteModule[] = [
  healthRoutes,
  aboutRoutes,
  eventsRoutes,
  presenceRoutes,
  functionsRoutes,
  recipesRoutes,
  fsRoutes,
  sessionsRoutes,
  fieldsRoutes,
  dataRoutes,
  geoarrowRoutes,
  jobsRoutes,
  displaysRoutes,
  regionsRoutes,
  shapeAnnotationsRoutes,
  pointsTransformRoutes,
  saveRoutes,
  checkpointsRoutes,
  imagesRoutes,
  snapshotsRoutes,
  mcpRoutes,
  appStaticRoutes,
];

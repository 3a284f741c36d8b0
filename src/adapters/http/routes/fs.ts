/**
 * Routes: filesystem (`GET /api/fs/datasets`, `GET /api/fs/browse`). Both look only inside the data dir
 * (containment with `..`, absolute paths and symlinks resolved: a path outside is a 400); the working
 * dir and hidden entries are never listed.
 */
import { browseFolder, findDatasets } from "../../../sdk/session/datasets.js";
import type { RouteModule } from "../deps.js";

/** Flag values that mean "on" (`true` or `1`; `false`, `0` and absent mean off). */
const FLAG_ON = new Set(["true", "1"]);

/** Query of the browse route. */
const BROWSE_QUERY = {
  type: "object",
  additionalProperties: false,
  properties: {
    path: { type: "string" },
    include_files: { type: "string", enum: ["true", "false", "1", "0"] },
  },
} as const;

/** Registers the fs routes. */
export const fsRoutes: RouteModule = (app, { service }) => {
  const { dataDir, workDir } = service.config;

  app.get(
    "/api/fs/datasets",
    { schema: { querystring: { type: "object", additionalProperties: false, properties: {} } } },
    async () => ({ datasets: await findDatasets(dataDir, { workDir }) }),
  );

  app.get<{ Querystring: { path?: string; include_files?: string } }>(
    "/api/fs/browse",
    { schema: { querystring: BROWSE_QUERY } },
    async (req) =>
      browseFolder(dataDir, req.query.path, {
        includeFiles: FLAG_ON.has(req.query.include_files ?? ""),
        workDir,
      }),
  );
};

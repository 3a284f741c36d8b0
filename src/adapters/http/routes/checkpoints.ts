/**
 * Route: checkpoint files (`GET, HEAD /api/checkpoints/{name}`): the bytes of a `*.zarr.zip` in the
 * data dir, with HTTP Range (206, 416), so the serverless viewer can read a checkpoint straight from
 * the service. Which names are served is the SDK's rule (`checkpoint-files.ts`); the bytes are never
 * compressed (a zip of STORED entries read by byte offsets).
 */
import { createReadStream } from "node:fs";
import { checkpointFile } from "../../../sdk/session/checkpoint-files.js";
import type { RouteModule } from "../deps.js";
import { sendRange } from "../range.js";

/** Registers the checkpoints route. */
export const checkpointsRoutes: RouteModule = (app, { service }) => {
  app.route<{ Params: { name: string } }>({
    method: ["GET", "HEAD"],
    url: "/api/checkpoints/:name",
    compress: false,
    handler: async (req, reply) => {
      const file = await checkpointFile(service.config.dataDir, req.params.name);
      return sendRange(req, reply, {
        size: file.size,
        contentType: "application/zip",
        etag: `"${file.size.toString(16)}-${Math.floor(file.mtimeMs).toString(16)}"`,
        lastModified: new Date(file.mtimeMs),
        body: ({ start, end }) => createReadStream(file.path, { start, end }),
      });
    },
  });
};

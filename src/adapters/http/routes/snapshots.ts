/**
 * Routes: snapshots (service-spec "Snapshots and checkpoints"). Render a display to PDF/PNG files
 * with provenance, preview it, list, fetch, delete. All behaviour is the SDK's
 * (`src/sdk/figures/snapshots.ts`); renders pass memory admission (503 past the threshold).
 */
import {
  createSnapshot,
  deleteSnapshot,
  listSnapshots,
  previewSnapshot,
  type SnapshotRequest,
  snapshotFile,
} from "../../../sdk/figures/snapshots.js";
import type { RouteModule } from "../deps.js";

/** Registers the snapshot routes. */
export const snapshotsRoutes: RouteModule = (app, { service }) => {
  const dataDir = () => service.config.dataDir;

  app.post<{ Params: { id: string }; Body: SnapshotRequest }>("/api/sessions/:id/snapshot", async (req) => {
    const s = service.readySession(req.params.id, "a snapshot");
    service.resources.admit("rendering a snapshot");
    return createSnapshot(s, dataDir(), req.body);
  });

  app.route<{ Params: { id: string }; Body: SnapshotRequest }>({
    method: "POST",
    url: "/api/sessions/:id/snapshot/preview",
    compress: false,
    handler: async (req, reply) => {
      const s = service.readySession(req.params.id, "a snapshot preview");
      service.resources.admit("rendering a snapshot preview");
      const png = await previewSnapshot(s, req.body);
      return reply.type("image/png").header("cache-control", "no-store").send(Buffer.from(png));
    },
  });

  app.get("/api/snapshots", async () => ({ snapshots: await listSnapshots(dataDir()) }));

  app.route<{ Params: { name: string }; Querystring: { fmt?: string } }>({
    method: "GET",
    url: "/api/snapshots/:name/file",
    compress: false,
    handler: async (req, reply) => {
      const { bytes, type } = await snapshotFile(dataDir(), req.params.name, req.query.fmt);
      const ext = type === "application/pdf" ? "pdf" : "png";
      return reply
        .type(type)
        .header("content-disposition", `attachment; filename="${req.params.name}.figure.${ext}"`)
        .send(bytes);
    },
  });

  app.route<{ Params: { name: string } }>({
    method: "GET",
    url: "/api/snapshots/:name/thumbnail",
    compress: false,
    handler: async (req, reply) => {
      const { bytes } = await snapshotFile(dataDir(), req.params.name, "thumb");
      return reply.type("image/png").send(bytes);
    },
  });

  app.delete<{ Params: { name: string } }>("/api/snapshots/:name", async (req) => {
    await deleteSnapshot(dataDir(), req.params.name);
    return { status: "deleted" };
  });
};

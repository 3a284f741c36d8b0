/**
 * Routes: shape annotations (`/api/sessions/{id}/shape-annotations[/{shapeId}]`). GET lists the
 * committed shapes; POST, PUT and DELETE are checked now (400 bad shape, 404 unknown id) and queued as
 * jobs that edit the `annotations` shapes element; they answer `{job_id, shape_id}`.
 */
import { listShapeAnnotations, queueShapeEdit } from "../../../sdk/session/shape-annotation-jobs.js";
import type { RouteModule } from "../deps.js";
import { mutableSession, readSession } from "../request.js";

type Params = { id: string; shapeId: string };

/** Registers the shape-annotations routes. */
export const shapeAnnotationsRoutes: RouteModule = (app, { service }) => {
  const base = "/api/sessions/:id/shape-annotations";
  // The body is checked field by field in the SDK (`parseShapeAnnotation`), with messages per field.
  const objectBody = { schema: { body: { type: "object" } } };
  const answer = (t: { job_id: string; shape_id: string }) => ({ job_id: t.job_id, shape_id: t.shape_id });

  app.get<{ Params: { id: string } }>(base, async (req) => ({
    shapes: listShapeAnnotations(readSession(service, req.params.id)),
  }));
  app.post<{ Params: { id: string } }>(base, objectBody, async (req) =>
    answer(queueShapeEdit(mutableSession(service, req, req.params.id), { op: "create", body: req.body })),
  );
  app.put<{ Params: Params }>(`${base}/:shapeId`, objectBody, async (req) =>
    answer(
      queueShapeEdit(mutableSession(service, req, req.params.id), {
        op: "replace",
        id: req.params.shapeId,
        body: req.body,
      }),
    ),
  );
  app.delete<{ Params: Params }>(`${base}/:shapeId`, async (req) =>
    answer(
      queueShapeEdit(mutableSession(service, req, req.params.id), { op: "delete", id: req.params.shapeId }),
    ),
  );
};

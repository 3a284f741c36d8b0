/**
 * Shape annotation edits as session jobs: each create, replace or delete is checked when it is asked
 * for (400 for a bad shape, 404 for an unknown id), then queued behind the session's other work and
 * applied to the annotations committed when its turn comes, as a Change to the `annotations` shapes
 * element (so data versions, `saved` and checkpoints follow like any other edit). They are drawing,
 * not analysis, so they make no history entry.
 */
import { randomUUID } from "node:crypto";
import {
  ANNOTATIONS_ELEMENT,
  editShapeAnnotations,
  parseShapeAnnotation,
  readShapeAnnotations,
  type ShapeAnnotation,
  shapeAnnotationsElement,
} from "../data/shape-annotations.js";
import { BadRequestError } from "../errors.js";
import type { Session } from "./session.js";
import type { JobTicket } from "./types.js";

/** The session's shape annotations, as committed. */
export function listShapeAnnotations(session: Session): ShapeAnnotation[] {
  return readShapeAnnotations(session.data);
}

/** A queued shape edit: its job, and the id of the shape it concerns (minted for a create). */
export interface ShapeEditTicket extends JobTicket {
  shape_id: string;
}

/**
 * Queue a shape annotation edit: `create` (body without id, or with none; a new id is minted),
 * `replace` (the shape `id`, which must exist) or `delete`.
 */
export function queueShapeEdit(
  session: Session,
  edit:
    | { op: "create"; body: unknown }
    | { op: "replace"; id: string; body: unknown }
    | { op: "delete"; id: string },
): ShapeEditTicket {
  const current = readShapeAnnotations(session.data);
  let apply: { op: "add" | "put"; shape: ShapeAnnotation } | { op: "delete"; id: string };
  if (edit.op === "delete") apply = { op: "delete", id: edit.id };
  else {
    const id = edit.op === "create" ? randomUUID() : edit.id;
    if (edit.op === "create" && edit.body && typeof edit.body === "object" && "id" in edit.body)
      throw new BadRequestError(`a new shape annotation gets its id from the server; leave "id" out`);
    apply = { op: edit.op === "create" ? "add" : "put", shape: parseShapeAnnotation(edit.body, id) };
  }
  // Checked now (404 for an unknown id), and again on the list committed when the job runs.
  editShapeAnnotations(current, apply);
  const shapeId = apply.op === "delete" ? apply.id : apply.shape.id;
  const ticket = session.queueOwnJob(
    "shape_annotation",
    {
      namespace: "session",
      function: `shape_annotation.${edit.op}`,
      params: apply.op === "delete" ? { id: shapeId } : { ...apply.shape },
    },
    async ({ data, activeTable }) => {
      const next = editShapeAnnotations(readShapeAnnotations(data), apply);
      return {
        change: { shapes: { [ANNOTATIONS_ELEMENT]: shapeAnnotationsElement(data, activeTable, next) } },
        result: { shape_id: shapeId },
      };
    },
  );
  return { ...ticket, shape_id: shapeId };
}

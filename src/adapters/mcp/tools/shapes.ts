/** Tools 27–29: a session's shape annotations (markup drawn over the tissue): list, add, delete. */
import {
  listShapeAnnotations,
  queueShapeEdit,
  type ShapeEditTicket,
} from "../../../sdk/session/shape-annotation-jobs.js";
import { S, type ToolContext, tool } from "../tool.js";
import { awaitJob } from "../wait.js";

/** How long a shape edit (a small job) is awaited. */
const SHAPE_WAIT_S = 60;

/** Await a queued shape edit; its answer. */
async function edited(t: ShapeEditTicket, ctx: ToolContext) {
  const out = await awaitJob(t, SHAPE_WAIT_S, ctx);
  return {
    structured: {
      job_id: t.job_id,
      shape_id: t.shape_id,
      status: out?.status ?? "running",
      ...(out?.error ? { error: out.error } : {}),
    },
  };
}

/** `list_shape_annotations`: the session's committed shape annotations. */
export const listShapes = tool<{ session_id?: string }>({
  name: "list_shape_annotations",
  description:
    "Returns the session's shape annotations (arrows, lines, boxes, polygons, ellipses, text) in world coordinates.",
  inputSchema: { type: "object", additionalProperties: false, properties: { session_id: S.session } },
  async run(a, { service, agent }) {
    return { structured: { shapes: listShapeAnnotations(service.session(agent.sessionId(a.session_id))) } };
  },
});

/** The arguments of `add_shape_annotation`. */
interface AddArgs {
  session_id?: string;
  label?: string;
  geometry: { kind: string; points: [number, number][] };
  stroke?: { color?: string; width?: number };
  fill?: string | null;
}

/** `add_shape_annotation`: one markup shape (default stroke yellow #ffcc00, width 2). */
export const addShape = tool<AddArgs>({
  name: "add_shape_annotation",
  description:
    "Adds one markup shape in world coordinates: geometry {kind: arrow|line|box|polygon|ellipse|text, points: [[x,y],…]}, an optional label, stroke {color, width} (default #ffcc00, 2) and fill. Needs the edit lock.",
  inputSchema: {
    type: "object",
    required: ["geometry"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      label: S.str("Text shown with the shape.", { maxLength: 500 }),
      geometry: {
        type: "object",
        required: ["kind", "points"],
        additionalProperties: false,
        properties: {
          kind: { type: "string", enum: ["arrow", "line", "box", "polygon", "ellipse", "text"] },
          points: {
            type: "array",
            minItems: 1,
            maxItems: 10_000,
            items: { type: "array", minItems: 2, maxItems: 2, items: { type: "number" } },
          },
        },
      },
      stroke: {
        type: "object",
        additionalProperties: false,
        properties: { color: { type: "string", maxLength: 32 }, width: { type: "number" } },
      },
      fill: { type: ["string", "null"], maxLength: 32 },
    },
  },
  async run(a, ctx) {
    const session = ctx.agent.mutable(a.session_id, { work: "add_shape_annotation" });
    const body = {
      kind: a.geometry.kind,
      points: a.geometry.points,
      text: a.label ?? null,
      color: a.stroke?.color ?? "#ffcc00",
      stroke_width: a.stroke?.width ?? 2,
      fill: a.fill ?? null,
    };
    return edited(queueShapeEdit(session, { op: "create", body }), ctx);
  },
});

/** `delete_shape_annotation`: remove one shape annotation. */
export const deleteShape = tool<{ session_id?: string; shape_id: string }>({
  name: "delete_shape_annotation",
  description: "Deletes one shape annotation by id (list_shape_annotations). Needs the edit lock.",
  inputSchema: {
    type: "object",
    required: ["shape_id"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      shape_id: S.str("The shape's id.", { minLength: 1, maxLength: 200 }),
    },
  },
  async run(a, ctx) {
    const session = ctx.agent.mutable(a.session_id);
    return edited(queueShapeEdit(session, { op: "delete", id: a.shape_id }), ctx);
  },
});

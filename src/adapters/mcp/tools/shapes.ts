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

/** The stroke of client.md 10.3, as the tool takes it. */
interface StrokeArg {
  color?: string;
  width?: number;
  dash?: string;
  arrowStart?: boolean;
  arrowEnd?: boolean;
  arrowSize?: number;
  z?: number;
}

/** The fill of client.md 10.3 (or a bare colour, or null for none). */
type FillArg = string | null | { enabled?: boolean; color?: string; alpha?: number; z?: number };

/** The arguments of `add_shape_annotation`. */
interface AddArgs {
  session_id?: string;
  label?: string;
  geometry: { kind: string; points: [number, number][] };
  stroke?: StrokeArg;
  fill?: FillArg;
}

/** client.md's nested stroke and fill as the API's flat fields (absent ones left to the API's defaults). */
function styleFields(stroke: StrokeArg | undefined, fill: FillArg | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {
    color: stroke?.color ?? "#ffcc00",
    stroke_width: stroke?.width ?? 2,
  };
  const put = (k: string, v: unknown) => {
    if (v !== undefined) out[k] = v;
  };
  put("dash", stroke?.dash);
  put("arrow_start", stroke?.arrowStart);
  put("arrow_end", stroke?.arrowEnd);
  put("arrow_size", stroke?.arrowSize);
  put("stroke_z", stroke?.z);
  if (fill === undefined || fill === null || typeof fill === "string") out.fill = fill ?? null;
  else {
    out.fill = fill.enabled === false ? null : (fill.color ?? out.color);
    put("fill_alpha", fill.alpha);
    put("fill_z", fill.z);
  }
  return out;
}

/** `add_shape_annotation`: one markup shape (default stroke yellow #ffcc00, width 2). */
export const addShape = tool<AddArgs>({
  name: "add_shape_annotation",
  description:
    "Adds one markup shape in world coordinates: geometry {kind: arrow|line|box|polygon|ellipse|text, points: [[x,y],…]}, an optional label, stroke {color, width, dash, arrowStart, arrowEnd, arrowSize, z} (default #ffcc00, 2) and fill (a colour or {enabled, color, alpha, z}). Needs the edit lock.",
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
        properties: {
          color: { type: "string", maxLength: 32 },
          width: { type: "number" },
          dash: { type: "string", enum: ["solid", "dashed", "dotted"] },
          arrowStart: { type: "boolean" },
          arrowEnd: { type: "boolean" },
          arrowSize: { type: "number", description: "Arrow head length, screen pixels." },
          z: { type: "integer", description: "Paint order; below 0 beneath the cells." },
        },
      },
      fill: {
        description:
          "A colour #rrggbb, null for none, or {enabled, color, alpha, z} (alpha 0–1, default 0.25).",
        anyOf: [
          { type: "string", maxLength: 32 },
          { type: "null" },
          {
            type: "object",
            additionalProperties: false,
            properties: {
              enabled: { type: "boolean" },
              color: { type: "string", maxLength: 32 },
              alpha: { type: "number" },
              z: { type: "integer" },
            },
          },
        ],
      },
    },
  },
  async run(a, ctx) {
    const session = ctx.agent.mutable(a.session_id, { work: "add_shape_annotation" });
    const body = {
      kind: a.geometry.kind,
      points: a.geometry.points,
      text: a.label ?? null,
      ...styleFields(a.stroke, a.fill),
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

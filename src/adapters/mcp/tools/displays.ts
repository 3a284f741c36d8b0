/** Tools 21–23: look at a display (`view_display`), change one (`update_display`), add one (`add_display`). */
import { BadRequestError } from "../../../sdk/errors.js";
import { sessionRenderSource } from "../../../sdk/figures/render-source.js";
import { snapshotDisplay } from "../../../sdk/figures/snapshots.js";
import { fitViewport, MAX_MARKS, renderVision, VISION_MAX_PX } from "../../../sdk/figures/vision.js";
import type { DisplaySpec } from "../../../sdk/io/checkpoint/app-state.js";
import type { Session } from "../../../sdk/session/session.js";
import { S, tool } from "../tool.js";

const point = { type: "array", minItems: 2, maxItems: 2, items: { type: "number" } } as const;
/** A saved viewport: the world point at the centre and the zoom (one world unit = 2^zoom px). */
const viewportObject = {
  type: "object",
  required: ["target", "zoom"],
  additionalProperties: false,
  properties: {
    target: { ...point, description: "World [x, y] at the image centre." },
    zoom: { type: "number", minimum: -40, maximum: 40, description: "log2 of pixels per world unit." },
  },
} as const;
const displayId = S.str("The display's id (get_session lists displays).", { minLength: 1, maxLength: 128 });

/** The arguments of `view_display`. */
interface ViewArgs {
  session_id?: string;
  display_id?: string;
  viewport?: { target: [number, number]; zoom: number } | "fit";
  width_px: number;
  height_px: number;
  include_grid: boolean;
  mark_points?: [number, number][];
  mark_polygons?: [number, number][][];
}

/** `view_display`: the display as a PNG plus the pixel ↔ world metadata of the vision contract. */
export const viewDisplay = tool<ViewArgs>({
  name: "view_display",
  description:
    "Renders a display (the snapshot core: what a human's snapshot shows) to a PNG and returns it with a JSON metadata block: pixel_to_world (affine [a,b,c,d,e,f], x = a·px + b·py + c, y = d·px + e·py + f, pixel centres, rows top-down), world_to_pixel, the image corners, world_window, the labelled grid lines, cells_in_view. viewport: {target, zoom}, 'fit' (all cells, 5% margin) or omitted (the display's saved viewport). mark_points / mark_polygons (world coordinates) are drawn in cyan to check a draft selection. Read-only.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      session_id: S.session,
      display_id: { ...displayId, description: "The display (default: the first spatial display)." },
      viewport: { oneOf: [viewportObject, { type: "string", enum: ["fit"] }] },
      width_px: S.int(`Image width in pixels (longest side capped at ${VISION_MAX_PX}).`, 1024, 16, 8192),
      height_px: S.int("Image height in pixels.", 768, 16, 8192),
      include_grid: S.bool("Draw gridlines labelled in world units.", true),
      mark_points: { type: "array", maxItems: MAX_MARKS, items: point, description: "World points to mark." },
      mark_polygons: {
        type: "array",
        maxItems: MAX_MARKS,
        items: { type: "array", minItems: 2, maxItems: 10_000, items: point },
        description: "World polygons (rings of [x, y]) to outline.",
      },
    },
  },
  async run(a, { service, agent }) {
    const s = service.readySession(agent.sessionId(a.session_id), "view_display");
    service.resources.admit("rendering a display for the agent");
    const { png, metadata } = await renderVision(s, {
      displayId: a.display_id,
      viewport: a.viewport,
      widthPx: a.width_px,
      heightPx: a.height_px,
      includeGrid: a.include_grid,
      markPoints: a.mark_points,
      markPolygons: a.mark_polygons,
    });
    return { structured: { ...metadata }, images: [png] };
  },
});

/** Encoding keys naming a field, checked to be readable before a display points at them. */
const FIELD_KEYS = ["coords", "color_by", "obsm_key"] as const;

/** 400 naming `encoding.<key>` when a field the encoding names cannot be read. */
async function checkFields(s: Session, enc: Record<string, unknown>): Promise<void> {
  const src = sessionRenderSource(s);
  for (const k of FIELD_KEYS) {
    const v = enc[k];
    if (typeof v !== "string" || v === "") continue;
    const path = k === "obsm_key" && !v.startsWith("obsm:") ? `obsm:${v}` : v;
    try {
      await src.field(path);
    } catch (err) {
      throw new BadRequestError(`encoding.${k}: cannot read "${v}": ${(err as Error).message}`);
    }
  }
}

/** The arguments of `update_display`. */
interface UpdateArgs {
  session_id?: string;
  display_id: string;
  encoding?: Record<string, unknown>;
  viewport?: { target: [number, number]; zoom: number };
}

/** `update_display`: merge encoding keys (null clears one) and/or set the saved viewport. */
export const updateDisplay = tool<UpdateArgs>({
  name: "update_display",
  description:
    "Changes a display every viewer sees: the given encoding keys are merged into its encoding (a null value clears a key, e.g. {color_by: 'obs:leiden'} or {color_by: 'X:CD3E', colormap: 'viridis'}), and/or its saved viewport {target, zoom} is set. Viewers get display.updated. Needs the edit lock.",
  inputSchema: {
    type: "object",
    required: ["display_id"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      display_id: displayId,
      encoding: { type: "object", maxProperties: 100, description: "Encoding keys to merge (null clears)." },
      viewport: viewportObject,
    },
  },
  async run(a, { agent }) {
    if (a.encoding === undefined && a.viewport === undefined)
      throw new BadRequestError("update_display: give encoding and/or viewport");
    const s = agent.mutable(a.session_id, { ready: "displays" });
    const d = snapshotDisplay(s, a.display_id);
    const enc: Record<string, unknown> = { ...(d.encoding as unknown as Record<string, unknown>) };
    for (const [k, v] of Object.entries(a.encoding ?? {})) {
      if (v === null) delete enc[k];
      else enc[k] = v;
    }
    await checkFields(s, a.encoding ?? {});
    const next = {
      ...d,
      encoding: enc,
      ...(a.viewport ? { viewport: a.viewport } : {}),
    } as unknown as DisplaySpec;
    return { structured: { display: s.putDisplay(next) } };
  },
});

/** The arguments of `add_display`. */
interface AddArgs {
  session_id?: string;
  type: DisplaySpec["type"];
  encoding: Record<string, unknown>;
  viewport?: { target: [number, number]; zoom: number };
}

/** `add_display`: a new spatial or embedding canvas, framed on its cells unless a viewport is given. */
export const addDisplay = tool<AddArgs>({
  name: "add_display",
  description:
    "Adds a display: type spatial_canvas (encoding needs coords, e.g. {coords: 'obsm:spatial', color_by: 'obs:cell_type'}) or embedding_canvas (encoding needs obsm_key, e.g. {obsm_key: 'X_umap', color_by: 'obs:leiden'}). Without a viewport it is framed on all cells. Returns the display with its new id. Needs the edit lock.",
  inputSchema: {
    type: "object",
    required: ["type", "encoding"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      type: { type: "string", enum: ["spatial_canvas", "embedding_canvas"] },
      encoding: { type: "object", maxProperties: 100, description: "The display's encoding." },
      viewport: viewportObject,
    },
  },
  async run(a, { agent }) {
    const s = agent.mutable(a.session_id, { ready: "displays" });
    const needed = a.type === "spatial_canvas" ? "coords" : "obsm_key";
    if (typeof a.encoding[needed] !== "string" || a.encoding[needed] === "")
      throw new BadRequestError(`encoding.${needed}: required for a ${a.type}`);
    await checkFields(s, a.encoding);
    const draft = { id: "new", type: a.type, encoding: a.encoding, viewport: { target: [0, 0], zoom: 0 } };
    // The app-state schema checks the encoding (400 naming the key) when the display is put.
    const viewport =
      a.viewport ??
      (await fitViewport(s, draft as unknown as DisplaySpec, 1024, 768).catch((err: Error) => {
        throw new BadRequestError(`encoding: ${err.message}`);
      }));
    const { id: _draftId, ...spec } = { ...draft, viewport };
    return { structured: { display: s.addDisplay(spec as unknown as Omit<DisplaySpec, "id">) } };
  },
});

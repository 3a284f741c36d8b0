/**
 * The render core: a display (its persisted encoding) + a viewport + a canvas size + a dpi → one SVG
 * document, drawn from the same encoding defaults (`withSpatialDefaults`), colour rules
 * (`cellColors`), boundary zoom gate and view transform as the web canvases. Layers bottom-up:
 * background, image (raster, `image-layer.ts`), cells (vector markers up to `POINT_VECTOR_CAP` in
 * view, else one raster at the output resolution) or boundaries (vector polygons past the zoom
 * gate, a raster of them above the same cap), grid, scale bar (spatial), legend, minimap.
 *
 * This module gathers what the display shows from the render source on the calling thread (the
 * fields, the image region's raw planes, the boundary polygons in view: reads that await the session) and
 * hands it to `draw.ts` on the figure thread, the cell arrays on shared memory: the per-cell work
 * never holds the server's event loop.
 *
 * Exports: `renderDisplay(source, request)` → `{ svg, widthPt, heightPt, frame, render, legend }`;
 * `frame` carries the pixel ↔ world affines (for MCP `view_display`).
 */

import { toShared } from "../data/arrays.js";
import { queryShapes } from "../data/shape-index.js";
import type { Legend } from "../display/cell-colors.js";
import { withEmbeddingDefaults, withSpatialDefaults } from "../display/encoding.js";
import type { FieldData } from "../display/field-data.js";
import { BadRequestError } from "../errors.js";
import type { DisplaySpec } from "../io/checkpoint/app-state.js";
import { type DrawInputs, drawDisplay, type ShapesGeometry } from "./draw.js";
import { onFigureThread } from "./figure-thread.js";
import { type FigureFrame, figureFrame } from "./frame.js";
import { imageRegion } from "./image-layer.js";
import type { RenderSource } from "./render-source.js";

/** Canvas sizes accepted, in CSS px. */
export const CANVAS_PX_RANGE = { min: 16, max: 8192 } as const;
/** Dpi accepted for snapshots (client.md 14.1: 36–600). */
export const SNAPSHOT_DPI_RANGE = { min: 36, max: 600 } as const;
/** Largest PNG side (pixels). */
export const MAX_OUTPUT_SIDE = 20_000;

/** What to render. */
export interface RenderRequest {
  display: DisplaySpec;
  viewport: { target: readonly number[]; zoom: number };
  widthPx: number;
  heightPx: number;
  dpi: number;
  /** Draw the minimap (also needs the display's `show_minimap`, default true). */
  includeMinimap?: boolean;
  /** Faint world grid at the scale bar's spacing. @default false */
  grid?: boolean;
  /** A preview: any dpi from 1 (its size is bounded by the caller), not only the snapshot range. */
  preview?: boolean;
}

/** What was drawn (the sidecar's `render` block). */
export interface RenderStats {
  rasterized_points: boolean;
  image_element: string | null;
  cells_in_view: number;
  shapes_drawn: number;
  minimap: boolean;
}

/** The rendered document and its frame. */
export interface RenderedFigure {
  readonly svg: string;
  /** Page size in points (`px · 0.75`). */
  readonly widthPt: number;
  readonly heightPt: number;
  readonly frame: FigureFrame;
  readonly render: RenderStats;
  readonly legend: Legend | null;
}

function bad(field: string, why: string): never {
  throw new BadRequestError(`${field}: ${why}`);
}

/** Checks the framing and output settings; 400 naming the field. */
export function checkRenderRequest(r: RenderRequest): void {
  const vp = r.viewport;
  if (
    !vp ||
    !Array.isArray(vp.target) ||
    vp.target.length < 2 ||
    !vp.target.slice(0, 2).every(Number.isFinite)
  )
    bad("viewport.target", "must hold two finite numbers");
  if (!Number.isFinite(vp.zoom) || Math.abs(vp.zoom) > 40)
    bad("viewport.zoom", "must be a number in -40..40");
  for (const [k, v] of [
    ["width_px", r.widthPx],
    ["height_px", r.heightPx],
  ] as const) {
    if (!Number.isInteger(v) || v < CANVAS_PX_RANGE.min || v > CANVAS_PX_RANGE.max)
      bad(k, `must be an integer in ${CANVAS_PX_RANGE.min}..${CANVAS_PX_RANGE.max} (got ${v})`);
  }
  const minDpi = r.preview ? 1 : SNAPSHOT_DPI_RANGE.min;
  if (!Number.isFinite(r.dpi) || r.dpi < minDpi || r.dpi > SNAPSHOT_DPI_RANGE.max)
    bad("dpi", `must be in ${SNAPSHOT_DPI_RANGE.min}..${SNAPSHOT_DPI_RANGE.max} (got ${r.dpi})`);
  const side = (Math.max(r.widthPx, r.heightPx) * r.dpi) / 96;
  if (side > MAX_OUTPUT_SIDE)
    bad("dpi", `the PNG would be ${Math.round(side)} px on its longest side, more than ${MAX_OUTPUT_SIDE}`);
}

async function readField(source: RenderSource, path: string, what: string): Promise<FieldData> {
  try {
    return await source.field(path);
  } catch (err) {
    throw new BadRequestError(`${what}: cannot read "${path}": ${(err as Error).message}`);
  }
}

/** Renders one display. */
export async function renderDisplay(source: RenderSource, req: RenderRequest): Promise<RenderedFigure> {
  return onFigureThread("draw", await gatherDisplay(source, req), drawDisplay);
}

/**
 * What drawing `req` needs, read from `source` on this thread (fields, the image region's raw
 * planes, the boundary polygons in view), the cell arrays on shared memory: the input of `drawDisplay`.
 */
export async function gatherDisplay(source: RenderSource, req: RenderRequest): Promise<DrawInputs> {
  checkRenderRequest(req);
  const d = req.display;
  const spatial = d.type === "spatial_canvas";
  const se = spatial ? withSpatialDefaults(d.encoding) : null;
  const enc = se ?? withEmbeddingDefaults(d.encoding);
  const frame = figureFrame({
    target: req.viewport.target,
    zoom: req.viewport.zoom,
    widthPx: req.widthPx,
    heightPx: req.heightPx,
    dpi: req.dpi,
    kind: spatial ? "spatial" : "embedding",
    invertX: se ? se.invert_x : false,
    invertY: se ? se.invert_y : false,
  });

  // Positions: the spatial coordinates as they are, or two components of an embedding.
  let xs: Float32Array;
  let ys: Float32Array;
  if (spatial) {
    const coords = d.encoding.coords || "obsm:spatial";
    const f = await readField(source, coords, "encoding.coords");
    if (f.kind !== "components" || !f.components || f.components.length < 2)
      bad("encoding.coords", `"${coords}" is not a matrix of at least two columns`);
    xs = f.components[0]!;
    ys = f.components[1]!;
  } else {
    const e = withEmbeddingDefaults(d.encoding);
    const key = e.obsm_key.startsWith("obsm:") ? e.obsm_key : `obsm:${e.obsm_key}`;
    const f = await readField(source, key, "encoding.obsm_key");
    const comps = f.components ?? [];
    if (f.kind !== "components" || comps.length < 2)
      bad("encoding.obsm_key", `"${key}" has fewer than two components`);
    xs = comps[e.x_component] ?? comps[0]!;
    ys = comps[e.y_component] ?? comps[1]!;
  }

  const colorBy = enc.color_by ?? null;
  const colorField = colorBy ? await readField(source, colorBy, "encoding.color_by") : null;

  // Image: the region in view read raw here; composited and embedded as one PNG on the figure thread.
  let img: DrawInputs["image"] = null;
  if (se?.show_image && se.image_layer) {
    try {
      img = await imageRegion(source, se.image_layer, frame, d.id);
    } catch (err) {
      if (err instanceof BadRequestError) throw err;
      throw new BadRequestError(
        `encoding.image_layer: cannot draw "${se.image_layer}": ${(err as Error).message}`,
      );
    }
  }

  // Boundaries: the polygons whose box meets the window (the zoom gate is decided while drawing).
  let boundaries: DrawInputs["boundaries"] = null;
  if (se && se.render_mode !== "points" && source.shapes && source.shapesNames) {
    const name = se.shapes_layer ?? source.shapesNames()[0] ?? null;
    if (name) {
      let shapes: ReturnType<NonNullable<RenderSource["shapes"]>>;
      try {
        shapes = source.shapes(name);
      } catch (err) {
        throw new BadRequestError(`encoding.shapes_layer: ${(err as Error).message}`);
      }
      boundaries = { shapes: sharedGeometry(shapes), ids: queryShapes(shapes, frame.worldWindow) };
    }
  }

  return {
    request: req,
    xs: toShared(xs),
    ys: toShared(ys),
    colorField: colorField && sharedField(colorField),
    image: img,
    boundaries,
    unit: source.unit(),
  };
}

/** A field with its arrays on shared memory (copied once when a reader gave private ones). */
function sharedField(f: FieldData): FieldData {
  return {
    ...f,
    ...(f.values ? { values: toShared(f.values) } : {}),
    ...(f.codes ? { codes: toShared(f.codes) } : {}),
    ...(f.components ? { components: f.components.map((c) => toShared(c)) } : {}),
  };
}

/** Shapes geometry on shared memory, made once per shapes object (the index stays here). */
const sharedShapes = new WeakMap<object, ShapesGeometry>();

function sharedGeometry(s: ShapesGeometry & { index?: unknown }): ShapesGeometry {
  let g = sharedShapes.get(s);
  if (!g) {
    g = {
      type: s.type,
      count: s.count,
      coords: toShared(s.coords),
      geomOffsets: toShared(s.geomOffsets),
      polygonOffsets: s.polygonOffsets ? toShared(s.polygonOffsets) : null,
      ringOffsets: toShared(s.ringOffsets),
      cellIndex: toShared(s.cellIndex),
    };
    sharedShapes.set(s, g);
  }
  return g;
}

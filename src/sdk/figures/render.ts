/**
 * The render core: a display (its persisted encoding) + a viewport + a canvas size + a dpi → one SVG
 * document, drawn from the same encoding defaults (`withSpatialDefaults`), colour rules
 * (`cellColors`), boundary zoom gate and view transform as the web canvases. Layers bottom-up:
 * background, image (raster, `image-layer.ts`), cells (vector markers up to `POINT_VECTOR_CAP` in
 * view, else one raster at the output resolution) or boundaries (vector polygons past the zoom
 * gate), grid, scale bar (spatial), legend, minimap.
 *
 * Exports: `renderDisplay(source, request)` → `{ svg, widthPt, heightPt, frame, render, legend }`;
 * `frame` carries the pixel ↔ world affines (for MCP `view_display`).
 */

import { queryShapes } from "../data/shape-index.js";
import { type CellColors, cellColors, type Legend } from "../display/cell-colors.js";
import {
  BOUNDARY_POLYGON_CAP,
  boundaryZoomGate,
  CANVAS_BACKGROUND,
  colormapLut,
  withEmbeddingDefaults,
  withSpatialDefaults,
} from "../display/encoding.js";
import type { FieldData } from "../display/field-data.js";
import { BadRequestError } from "../errors.js";
import type { DisplaySpec } from "../io/checkpoint/app-state.js";
import { apply, type FigureFrame, figureFrame } from "./frame.js";
import { imageLayer } from "./image-layer.js";
import { colorBar, niceScaleLength, scaleBar, swatches } from "./legend.js";
import { type Marker, markerGroup } from "./pdf-markers.js";
import { drawMarker, newRaster, POINT_VECTOR_CAP, rasterToPng } from "./raster-points.js";
import type { RenderSource } from "./render-source.js";
import { el, group, image, line, num, path, rect, svgDocument, text } from "./svg.js";

/** Canvas sizes accepted, in CSS px. */
export const CANVAS_PX_RANGE = { min: 16, max: 8192 } as const;
/** Dpi accepted for snapshots (client.md 14.1: 36–600). */
export const SNAPSHOT_DPI_RANGE = { min: 36, max: 600 } as const;
/** Largest PNG side (pixels). */
export const MAX_OUTPUT_SIDE = 20_000;
/** Cells drawn in the minimap at most (as the canvas's minimap). */
const MINIMAP_CELLS = 4000;
/** Minimap edge in CSS px. */
const MINIMAP_PX = 140;

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
  checkRenderRequest(req);
  const d = req.display;
  const spatial = d.type === "spatial_canvas";
  const enc = spatial ? withSpatialDefaults(d.encoding) : withEmbeddingDefaults(d.encoding);
  const frame = figureFrame({
    target: req.viewport.target,
    zoom: req.viewport.zoom,
    widthPx: req.widthPx,
    heightPx: req.heightPx,
    dpi: req.dpi,
    kind: spatial ? "spatial" : "embedding",
    invertX: spatial ? withSpatialDefaults(d.encoding).invert_x : false,
    invertY: spatial ? withSpatialDefaults(d.encoding).invert_y : false,
  });
  const W = req.widthPx;
  const H = req.heightPx;
  const bg = CANVAS_BACKGROUND[enc.background];
  const fg = enc.background === "light" ? "#1a1a1a" : "#e8e8e8";
  const layers: string[] = [];
  const stats: RenderStats = {
    rasterized_points: false,
    image_element: null,
    cells_in_view: 0,
    shapes_drawn: 0,
    minimap: false,
  };

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
  const n = xs.length;

  // Colours: exactly the canvas's.
  let colors: CellColors;
  const colorBy = enc.color_by ?? null;
  {
    const field = colorBy ? await readField(source, colorBy, "encoding.color_by") : null;
    colors = cellColors(n, field, {
      title: enc.legend_title ?? null,
      colormap: enc.colormap,
      overrides: colorBy ? (enc.category_colors?.[colorBy] ?? null) : null,
      isolated: enc.isolated_category ?? null,
    });
  }

  // Image.
  if (spatial) {
    const se = withSpatialDefaults(d.encoding);
    if (se.show_image && se.image_layer) {
      let layer: Awaited<ReturnType<typeof imageLayer>>;
      try {
        layer = await imageLayer(source, se.image_layer, frame, d.id);
      } catch (err) {
        if (err instanceof BadRequestError) throw err;
        throw new BadRequestError(
          `encoding.image_layer: cannot draw "${se.image_layer}": ${(err as Error).message}`,
        );
      }
      if (layer) {
        layers.push(layer.svg);
        stats.image_element = se.image_layer;
      }
    }
  }

  // Cells in view (with a margin of one marker).
  const m = frame.worldToPx;
  const radiusPx = spatial
    ? Math.max((enc.point_size / 2) * frame.scale, 0.5)
    : Math.max(enc.point_size / 2, 0.5);
  const inView: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    const px = m[0] * x + m[2];
    const py = m[4] * y + m[5];
    if (px >= -radiusPx && px <= W + radiusPx && py >= -radiusPx && py <= H + radiusPx) inView.push(i);
  }
  stats.cells_in_view = inView.length;

  // Boundaries: past the canvas's zoom gate (or a small element), polygons replace the markers.
  let drewPolygons = false;
  if (spatial) {
    const se = withSpatialDefaults(d.encoding);
    if (se.render_mode !== "points" && source.shapes && source.shapesNames) {
      const name = se.shapes_layer ?? source.shapesNames()[0] ?? null;
      if (name) {
        const poly = boundaryLayer(source, name, xs, ys, frame, colors, se);
        if (poly) {
          layers.push(poly.svg);
          stats.shapes_drawn = poly.count;
          drewPolygons = true;
        }
      }
    }
  }

  const showPoints = spatial ? withSpatialDefaults(d.encoding).show_points : true;
  const mode = spatial ? withSpatialDefaults(d.encoding).render_mode : "points";
  if (showPoints && !drewPolygons && mode !== "shapes" && inView.length) {
    const square = spatial && withSpatialDefaults(d.encoding).point_marker === "square";
    const rgba = colors.rgba;
    if (inView.length > POINT_VECTOR_CAP) {
      stats.rasterized_points = true;
      const k = frame.dpi / 96;
      const img = newRaster(frame.pngWidth, frame.pngHeight);
      const rr = radiusPx * k;
      for (const i of inView) {
        const o = i * 4;
        drawMarker(
          img,
          (m[0] * xs[i]! + m[2]) * k,
          (m[4] * ys[i]! + m[5]) * k,
          rr,
          rgba[o]!,
          rgba[o + 1]!,
          rgba[o + 2]!,
          Math.round(rgba[o + 3]! * enc.opacity),
          square,
        );
      }
      layers.push(image(0, 0, W, H, await rasterToPng(img), { class: "cells-raster" }));
    } else {
      const marks: Marker[] = [];
      for (const i of inView) {
        const o = i * 4;
        marks.push({
          shape: square ? "square" : "circle",
          x: m[0] * xs[i]! + m[2],
          y: m[4] * ys[i]! + m[5],
          r: radiusPx,
          rgb: [rgba[o]!, rgba[o + 1]!, rgba[o + 2]!],
          opacity: (rgba[o + 3]! / 255) * enc.opacity,
        });
      }
      layers.push(markerGroup(marks, "cells"));
    }
  }

  // Guides.
  if (spatial) {
    const sb = scaleBar({
      xRight: W - 16,
      y: H - 14,
      unitsPerData: frame.scale,
      maxLength: Math.min(200, W * 0.25),
      unit: source.unit(),
      color: fg,
      fontSize: 11,
    });
    if (req.grid) layers.push(gridLayer(frame, sb.value, fg));
    layers.push(el("g", { class: "guides", "data-scale-length-px": num(sb.length) }, sb.svg));
  } else if (req.grid) {
    const span = frame.worldWindow[2] - frame.worldWindow[0];
    layers.push(gridLayer(frame, niceScaleLength(span / 5), fg));
  }

  const legend = enc.legend_visible ? colors.legend : null;
  if (legend) layers.push(legendLayer(legend, W, H, enc.legend_scale, fg, enc.colormap, spatial));

  if (spatial && req.includeMinimap && withSpatialDefaults(d.encoding).show_minimap && n > 0) {
    layers.push(minimapLayer(xs, ys, colors, frame, fg));
    stats.minimap = true;
  }

  const svg = svgDocument({
    width: W * 0.75,
    height: H * 0.75,
    viewBox: [W, H],
    background: bg,
    title: `${spatial ? "spatial" : "embedding"} display ${d.id}`,
    children: layers,
  });
  return { svg, widthPt: W * 0.75, heightPt: H * 0.75, frame, render: stats, legend };
}

/** Boundary polygons in view, or null when the gate, the cap or the element says no. */
function boundaryLayer(
  source: RenderSource,
  name: string,
  xs: Float32Array,
  ys: Float32Array,
  frame: FigureFrame,
  colors: CellColors,
  e: ReturnType<typeof withSpatialDefaults>,
): { svg: string; count: number } | null {
  let shapes: ReturnType<NonNullable<RenderSource["shapes"]>>;
  try {
    shapes = source.shapes!(name);
  } catch (err) {
    throw new BadRequestError(`encoding.shapes_layer: ${(err as Error).message}`);
  }
  if (shapes.count > BOUNDARY_POLYGON_CAP) {
    let x0 = Number.POSITIVE_INFINITY;
    let y0 = Number.POSITIVE_INFINITY;
    let x1 = Number.NEGATIVE_INFINITY;
    let y1 = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i]!;
      const y = ys[i]!;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
    const spacing = Math.sqrt(Math.max((x1 - x0) * (y1 - y0), 1e-9) / Math.max(xs.length, 1));
    if (Math.log2(frame.scale) < boundaryZoomGate(spacing)) return null;
  }
  const ids = queryShapes(shapes, frame.worldWindow);
  if (ids.length === 0 || ids.length > POINT_VECTOR_CAP) return null;
  const m = frame.worldToPx;
  const rgba = colors.rgba;
  const out: string[] = [];
  const ringPath = (r: number) => {
    let dstr = "";
    for (let v = shapes.ringOffsets[r]!; v < shapes.ringOffsets[r + 1]!; v++) {
      const [px, py] = apply(m, shapes.coords[v * 2]!, shapes.coords[v * 2 + 1]!);
      dstr += `${v === shapes.ringOffsets[r] ? "M" : "L"}${num(px)} ${num(py)}`;
    }
    return `${dstr}Z`;
  };
  for (const f of ids) {
    let dstr = "";
    if (shapes.type === "polygon") {
      for (let r = shapes.geomOffsets[f]!; r < shapes.geomOffsets[f + 1]!; r++) dstr += ringPath(r);
    } else {
      for (let p = shapes.geomOffsets[f]!; p < shapes.geomOffsets[f + 1]!; p++)
        for (let r = shapes.polygonOffsets![p]!; r < shapes.polygonOffsets![p + 1]!; r++) dstr += ringPath(r);
    }
    const cell = shapes.cellIndex[f]!;
    const o = cell >= 0 && cell * 4 < rgba.length ? cell * 4 : -1;
    const c = o >= 0 ? `rgb(${rgba[o]},${rgba[o + 1]},${rgba[o + 2]})` : "rgb(150,150,150)";
    const a = ((o >= 0 ? rgba[o + 3]! : 255) / 255) * e.opacity;
    out.push(
      e.boundary_style === "outline"
        ? path(dstr, {
            fill: "none",
            stroke: c,
            "stroke-width": e.boundary_line_width,
            "stroke-opacity": num(a),
          })
        : path(dstr, { fill: c, "fill-opacity": num(a * 0.8), "fill-rule": "evenodd" }),
    );
  }
  return { svg: group(out, { class: "boundaries" }), count: ids.length };
}

/** Faint lines every `step` world units. */
function gridLayer(frame: FigureFrame, step: number, fg: string): string {
  const [x0, y0, x1, y1] = frame.worldWindow;
  const lines: string[] = [];
  const m = frame.worldToPx;
  for (let x = Math.ceil(x0 / step) * step; x <= x1 && lines.length < 400; x += step) {
    const [px] = apply(m, x, 0);
    lines.push(line(px, 0, px, frame.heightPx));
  }
  for (let y = Math.ceil(y0 / step) * step; y <= y1 && lines.length < 800; y += step) {
    const [, py] = apply(m, 0, y);
    lines.push(line(0, py, frame.widthPx, py));
  }
  return group(lines, { class: "grid", stroke: fg, "stroke-opacity": 0.15, "stroke-width": 0.5 });
}

/** The cell-colour legend, bottom-right on a translucent panel (as the canvas's). */
function legendLayer(
  lg: Legend,
  W: number,
  H: number,
  scale: number,
  fg: string,
  colormap: string,
  spatial: boolean,
): string {
  const s = Math.max(0.25, Math.min(4, scale || 1));
  const fs = 11 * s;
  const pad = 8 * s;
  const bottom = H - (spatial ? 40 : 12);
  const panelFill = fg === "#e8e8e8" ? "#181a1f" : "#ffffff";
  if (lg.kind === "numeric") {
    const bw = 140 * s;
    const bh = 10 * s;
    const pw = bw + 2 * pad;
    const ph = bh + fs * 2.8 + 2 * pad;
    const px = W - 12 - pw;
    const py = bottom - ph;
    return group(
      [
        rect(px, py, pw, ph, { fill: panelFill, "fill-opacity": 0.85, rx: 4 }),
        colorBar({
          x: px + pad,
          y: py + pad + fs * 1.3,
          width: bw,
          height: bh,
          lut: colormapLut(colormap),
          min: lg.min,
          max: lg.max,
          title: lg.title,
          color: fg,
          fontSize: fs,
        }),
      ],
      { class: "legend-panel" },
    );
  }
  if (lg.kind === "categorical") {
    const items = lg.items.map((it) => ({ label: it.value, color: it.color }));
    const probe = swatches({ x: 0, y: 0, items, title: lg.title, fontSize: fs, maxRows: 20 });
    const pw = probe.width + 2 * pad;
    const ph = probe.height + 2 * pad;
    const px = W - 12 - pw;
    const py = Math.max(4, bottom - ph);
    const sw = swatches({
      x: px + pad,
      y: py + pad,
      items,
      title: lg.title,
      color: fg,
      fontSize: fs,
      maxRows: 20,
    });
    return group([rect(px, py, pw, ph, { fill: panelFill, "fill-opacity": 0.85, rx: 4 }), sw.svg], {
      class: "legend-panel",
    });
  }
  if (!lg.title && !lg.note) return "";
  return group(text(W - 12, bottom, lg.note ?? lg.title, { size: fs, fill: fg, anchor: "end" }), {
    class: "legend-panel",
  });
}

/** All cells (a sample of at most `MINIMAP_CELLS`) and the view's rectangle, top-right. */
function minimapLayer(
  xs: Float32Array,
  ys: Float32Array,
  colors: CellColors,
  frame: FigureFrame,
  fg: string,
): string {
  const n = xs.length;
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    if (xs[i]! < x0) x0 = xs[i]!;
    if (xs[i]! > x1) x1 = xs[i]!;
    if (ys[i]! < y0) y0 = ys[i]!;
    if (ys[i]! > y1) y1 = ys[i]!;
  }
  const span = Math.max(x1 - x0, y1 - y0, 1e-9);
  const k = MINIMAP_PX / span;
  const ox = frame.widthPx - 12 - MINIMAP_PX;
  const oy = 12;
  const flipX = frame.worldToPx[0] < 0;
  const flipY = frame.worldToPx[4] < 0;
  const map = (x: number, y: number): [number, number] => [
    ox + (flipX ? x1 - x : x - x0) * k,
    oy + (flipY ? y1 - y : y - y0) * k,
  ];
  const step = Math.max(1, Math.ceil(n / MINIMAP_CELLS));
  const dots: string[] = [];
  for (let i = 0; i < n; i += step) {
    const [px, py] = map(xs[i]!, ys[i]!);
    const o = i * 4;
    dots.push(
      `<rect x="${num(px)}" y="${num(py)}" width="1" height="1" fill="rgb(${colors.rgba[o]},${colors.rgba[o + 1]},${colors.rgba[o + 2]})"/>`,
    );
  }
  // the view's rectangle, clipped to the panel (a view wider than the data would spill out of it)
  const [wx0, wy0, wx1, wy1] = frame.worldWindow;
  const clampX = (v: number) => Math.min(x1, Math.max(x0, v));
  const clampY = (v: number) => Math.min(y1, Math.max(y0, v));
  const a = map(clampX(wx0), clampY(wy0));
  const b = map(clampX(wx1), clampY(wy1));
  return group(
    [
      rect(ox - 4, oy - 4, (x1 - x0) * k + 8, (y1 - y0) * k + 8, {
        fill: fg === "#e8e8e8" ? "#181a1f" : "#ffffff",
        "fill-opacity": 0.8,
        rx: 3,
      }),
      ...dots,
      rect(Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.abs(b[0] - a[0]), Math.abs(b[1] - a[1]), {
        fill: "none",
        stroke: fg,
        "stroke-width": 1,
      }),
    ],
    { class: "minimap" },
  );
}

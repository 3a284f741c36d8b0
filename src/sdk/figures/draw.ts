/**
 * The drawing half of the render core: from the data a display shows (positions, the colour field,
 * the composited image, the boundary polygons in view) to the SVG document. Every per-cell pass is
 * here — colours, the in-view test, the point raster, boundary paths or their raster, the minimap —
 * and none of it awaits the session, so it runs on the figure thread (`figure-thread.ts`) over the
 * cell arrays on shared memory while the server's event loop stays free; on a thread that is not
 * the main one (a job worker drawing a plot) it runs where it is called.
 *
 * Layers bottom-up: background, image, cells (vector markers up to `POINT_VECTOR_CAP` in view, else
 * one raster at the output resolution) or boundaries (vector polygons up to the same cap, else one
 * raster of filled polygons), grid, scale bar (spatial), legend, minimap.
 */
import type { CanvasShapes } from "../data/shape-index.js";
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
import { apply, type FigureFrame, figureFrame } from "./frame.js";
import { type ImageRegion, imageLayerSvg } from "./image-layer.js";
import { colorBar, niceScaleLength, scaleBar, swatches } from "./legend.js";
import { type Marker, markerGroup } from "./pdf-markers.js";
import { drawMarker, newRaster, POINT_VECTOR_CAP, rasterToPng } from "./raster-points.js";
import { fillPolygon, strokePolygon } from "./raster-polygons.js";
import type { RenderedFigure, RenderRequest, RenderStats } from "./render.js";
import { el, group, image, line, num, path, rect, svgDocument, text } from "./svg.js";

/** Cells drawn in the minimap at most (as the canvas's minimap). */
const MINIMAP_CELLS = 4000;
/** Minimap edge in CSS px. */
const MINIMAP_PX = 140;

/** A shapes element's polygons without their spatial index (what crosses to the figure thread). */
export type ShapesGeometry = Omit<CanvasShapes, "index">;

/** Everything the drawing needs, gathered from the render source (all plain data, cloneable). */
export interface DrawInputs {
  readonly request: RenderRequest;
  /** Cell positions in canvas world space (spatial) or the two embedding components. */
  readonly xs: Float32Array;
  readonly ys: Float32Array;
  /** The `color_by` field, or null. */
  readonly colorField: FieldData | null;
  /** The raw pixels of the image region in view (composited while drawing), or null. */
  readonly image: ImageRegion | null;
  /** The boundary layer's polygons and the ids of those whose box meets the world window, or null. */
  readonly boundaries: { readonly shapes: ShapesGeometry; readonly ids: Int32Array } | null;
  /** Unit of the world axes, for the scale bar. */
  readonly unit: string;
}

/** Draws the figure (see the module comment). */
export async function drawDisplay(inp: DrawInputs): Promise<RenderedFigure> {
  const req = inp.request;
  const d = req.display;
  const spatial = d.type === "spatial_canvas";
  const enc = spatial ? withSpatialDefaults(d.encoding) : withEmbeddingDefaults(d.encoding);
  const se = spatial ? withSpatialDefaults(d.encoding) : null;
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
  const { xs, ys } = inp;
  const n = xs.length;

  // Colours: exactly the canvas's.
  const colorBy = enc.color_by ?? null;
  const colors = cellColors(n, inp.colorField, {
    title: enc.legend_title ?? null,
    colormap: enc.colormap,
    overrides: colorBy ? (enc.category_colors?.[colorBy] ?? null) : null,
    isolated: enc.isolated_category ?? null,
  });

  if (inp.image) {
    layers.push((await imageLayerSvg(inp.image, frame)).svg);
    stats.image_element = inp.image.element;
  }

  // Cells in view (with a margin of one marker).
  const m = frame.worldToPx;
  const radiusPx = spatial
    ? Math.max((enc.point_size / 2) * frame.scale, 0.5)
    : Math.max(enc.point_size / 2, 0.5);
  const inView = new Int32Array(n);
  let nIn = 0;
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    const px = m[0] * x + m[2];
    const py = m[4] * y + m[5];
    if (px >= -radiusPx && px <= W + radiusPx && py >= -radiusPx && py <= H + radiusPx) inView[nIn++] = i;
  }
  stats.cells_in_view = nIn;

  // Boundaries: past the canvas's zoom gate (or a small element), polygons replace the markers.
  let drewPolygons = false;
  if (se && inp.boundaries) {
    const poly = await boundaryLayer(inp.boundaries.shapes, inp.boundaries.ids, xs, ys, frame, colors, se);
    if (poly) {
      layers.push(poly.svg);
      stats.shapes_drawn = poly.count;
      drewPolygons = true;
    }
  }

  const showPoints = se ? se.show_points : true;
  const mode = se ? se.render_mode : "points";
  if (showPoints && !drewPolygons && mode !== "shapes" && nIn) {
    const marker = se?.point_marker ?? "circle";
    const rgba = colors.rgba;
    if (nIn > POINT_VECTOR_CAP) {
      stats.rasterized_points = true;
      const k = frame.dpi / 96;
      const img = newRaster(frame.pngWidth, frame.pngHeight);
      const rr = radiusPx * k;
      for (let j = 0; j < nIn; j++) {
        const i = inView[j]!;
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
          marker,
        );
      }
      layers.push(image(0, 0, W, H, await rasterToPng(img), { class: "cells-raster" }));
    } else {
      const marks: Marker[] = [];
      for (let j = 0; j < nIn; j++) {
        const i = inView[j]!;
        const o = i * 4;
        marks.push({
          shape: marker,
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
      unit: inp.unit,
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

  if (se && req.includeMinimap && se.show_minimap && n > 0) {
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

/**
 * Boundary polygons in view, or null when the zoom gate or the element says no. Up to
 * `POINT_VECTOR_CAP` polygons are vector paths; more are filled (or stroked) into one raster at the
 * output resolution, embedded as an image in the SVG (and so in the PDF), as the point layer is.
 */
async function boundaryLayer(
  shapes: ShapesGeometry,
  ids: Int32Array,
  xs: Float32Array,
  ys: Float32Array,
  frame: FigureFrame,
  colors: CellColors,
  e: ReturnType<typeof withSpatialDefaults>,
): Promise<{ svg: string; count: number } | null> {
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
  if (ids.length === 0) return null;
  if (ids.length > POINT_VECTOR_CAP) return boundaryRaster(shapes, ids, frame, colors, e);
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
    forEachRing(shapes, f, (r) => {
      dstr += ringPath(r);
    });
    const { c, a } = shapeColor(shapes, f, rgba, e.opacity);
    out.push(
      e.boundary_style === "outline"
        ? path(dstr, {
            fill: "none",
            stroke: `rgb(${c[0]},${c[1]},${c[2]})`,
            "stroke-width": e.boundary_line_width,
            "stroke-opacity": num(a),
          })
        : path(dstr, {
            fill: `rgb(${c[0]},${c[1]},${c[2]})`,
            "fill-opacity": num(a * 0.8),
            "fill-rule": "evenodd",
          }),
    );
  }
  return { svg: group(out, { class: "boundaries" }), count: ids.length };
}

/** Calls `fn` with every ring of feature `f` (a polygon's rings, or each part's of a multipolygon). */
function forEachRing(shapes: ShapesGeometry, f: number, fn: (ring: number) => void): void {
  if (shapes.type === "polygon") {
    for (let r = shapes.geomOffsets[f]!; r < shapes.geomOffsets[f + 1]!; r++) fn(r);
  } else {
    for (let p = shapes.geomOffsets[f]!; p < shapes.geomOffsets[f + 1]!; p++)
      for (let r = shapes.polygonOffsets![p]!; r < shapes.polygonOffsets![p + 1]!; r++) fn(r);
  }
}

/** The colour of feature `f`: its cell's, grey for a shape without a cell; alpha 0–1 with the opacity. */
function shapeColor(
  shapes: ShapesGeometry,
  f: number,
  rgba: Uint8Array,
  opacity: number,
): { c: [number, number, number]; a: number } {
  const cell = shapes.cellIndex[f]!;
  const o = cell >= 0 && cell * 4 < rgba.length ? cell * 4 : -1;
  if (o < 0) return { c: [150, 150, 150], a: opacity };
  return { c: [rgba[o]!, rgba[o + 1]!, rgba[o + 2]!], a: (rgba[o + 3]! / 255) * opacity };
}

/** More polygons than vector paths should carry: one raster of them at the output resolution. */
async function boundaryRaster(
  shapes: ShapesGeometry,
  ids: Int32Array,
  frame: FigureFrame,
  colors: CellColors,
  e: ReturnType<typeof withSpatialDefaults>,
): Promise<{ svg: string; count: number }> {
  const k = frame.dpi / 96;
  const m = frame.worldToPx;
  const img = newRaster(frame.pngWidth, frame.pngHeight);
  const outline = e.boundary_style === "outline";
  const width = Math.max(e.boundary_line_width * k, 1);
  // one feature's rings in raster pixels: [x0, y0, x1, y1, …] and where each ring starts
  let pts = new Float64Array(1024);
  const starts: number[] = [];
  for (const f of ids) {
    let nv = 0;
    starts.length = 0;
    forEachRing(shapes, f, (r) => {
      const a = shapes.ringOffsets[r]!;
      const b = shapes.ringOffsets[r + 1]!;
      if ((nv + b - a) * 2 > pts.length) {
        const grown = new Float64Array(Math.max(pts.length * 2, (nv + b - a) * 2));
        grown.set(pts);
        pts = grown;
      }
      starts.push(nv);
      for (let v = a; v < b; v++) {
        const x = shapes.coords[v * 2]!;
        const y = shapes.coords[v * 2 + 1]!;
        pts[nv * 2] = (m[0] * x + m[1] * y + m[2]) * k;
        pts[nv * 2 + 1] = (m[3] * x + m[4] * y + m[5]) * k;
        nv++;
      }
    });
    starts.push(nv);
    const { c, a } = shapeColor(shapes, f, colors.rgba, e.opacity);
    if (outline) strokePolygon(img, pts, starts, width, c[0], c[1], c[2], Math.round(a * 255));
    else fillPolygon(img, pts, starts, c[0], c[1], c[2], Math.round(a * 0.8 * 255));
  }
  const svg = image(0, 0, frame.widthPx, frame.heightPx, await rasterToPng(img), {
    class: "boundaries-raster",
  });
  return { svg, count: ids.length };
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

/**
 * Scatter panels of cells (scanpy's `embedding`/`umap`, squidpy's `spatial_scatter`, the
 * highly-variable-genes scatter): one panel per colour key, each with its legend (category swatches or a
 * colour bar), laid out `ncols` to a row. Up to `VECTOR_POINT_CAP` points are vector circles; more are
 * drawn into an embedded PNG (see `points-raster.ts`).
 */
import { parseHexColor, toHexColor } from "../../display/encoding.js";
import { circle, group, image, path, rect, svgDocument } from "../svg.js";
import { bottomAxis, frame, leftAxis, panelTitle } from "./axes.js";
import { colormapRgb, normalizer } from "./colormaps.js";
import { categoryLegend, colorbar, type Sized } from "./legend.js";
import { hexagonVertices, type MarkerShape, rasterPoints, VECTOR_POINT_CAP } from "./points-raster.js";
import { extent, linearScale, padded } from "./scale.js";

/** How a panel colours its points. */
export type PointColoring =
  | { kind: "constant"; color: string }
  | {
      kind: "categorical";
      /** Category code per point (−1 = missing, drawn in `naColor`). */
      codes: ArrayLike<number>;
      categories: readonly string[];
      colors: readonly string[];
      /** Codes drawn; others are greyed (scanpy's `groups`). */
      shown?: ReadonlySet<number>;
    }
  | {
      kind: "continuous";
      values: ArrayLike<number>;
      cmap: string;
      vmin?: number | null;
      vmax?: number | null;
      vcenter?: number | null;
    };

/** One panel. */
export interface ScatterPanel {
  title?: string;
  coloring: PointColoring;
}

/** The figure: shared coordinates, one panel per colouring. */
export interface ScatterChartSpec {
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  panels: readonly ScatterPanel[];
  /** Point radius in px (a marker's size on the page, whatever the zoom: scanpy's `s`). */
  radius: number;
  /**
   * Markers sized in data units instead (squidpy's `shape`: Visium spots drawn at their real size):
   * `radius` in coordinate units (half a square's side, a hexagon's circumradius); wins over `radius`.
   */
  marker?: { shape: MarkerShape; radius: number };
  /** Opacity 0–1. @default 1 */
  alpha?: number;
  /** Panels per row. @default 4 */
  ncols?: number;
  xLabel?: string;
  yLabel?: string;
  /** Draw numeric axes (ticks) rather than scanpy's bare frame. */
  axes?: boolean;
  /** One data unit is the same length on both axes (spatial coordinates). */
  equalAspect?: boolean;
  /** y grows downwards (image coordinates, as squidpy shows tissue). */
  invertY?: boolean;
  /** Colour of missing values. @default "#d3d3d3" (scanpy's lightgray) */
  naColor?: string;
  /** Panel plot area in px. @default 320 */
  size?: number;
  /**
   * An image under the points of every panel (squidpy's tissue image): called once with the axes'
   * data window and the pixel size wanted, it answers a PNG covering exactly that window, or null.
   */
  background?: (
    window: { x0: number; x1: number; y0: number; y1: number },
    widthPx: number,
    heightPx: number,
  ) => Promise<Uint8Array | null>;
  /** Opacity of the background image. @default 1 */
  backgroundAlpha?: number;
}

const GREY: readonly [number, number, number] = [211, 211, 211];

/** The scatter figure as an SVG document. */
export async function scatterChart(spec: ScatterChartSpec): Promise<string> {
  const n = spec.x.length;
  if (spec.y.length !== n) throw new Error(`scatter: ${n} x values but ${spec.y.length} y values`);
  const size = spec.size ?? 320;
  const ncols = Math.max(1, Math.min(spec.ncols ?? 4, spec.panels.length));
  const [x0, x1] = padded(extent(spec.x), 0.03);
  const [y0, y1] = padded(extent(spec.y), 0.03);
  let pw = size;
  let ph = size;
  if (spec.equalAspect) {
    const ratio = (y1 - y0) / Math.max(x1 - x0, 1e-12);
    if (ratio > 1) pw = size / ratio;
    else ph = size * ratio;
  }
  const na = parseHexColor(spec.naColor ?? "#d3d3d3") ?? GREY;
  const axisPad = spec.axes ? 56 : 24;
  const cellW = axisPad + pw + 190;
  const cellH = 28 + ph + (spec.axes ? 44 : 24);
  // y grows downwards in the window when invertY (image rows), as the panel draws it
  const bgPng = spec.background
    ? await spec.background({ x0, x1, y0, y1 }, Math.round(pw * 2), Math.round(ph * 2))
    : null;
  const out: string[] = [];
  for (let p = 0; p < spec.panels.length; p++) {
    const panel = spec.panels[p]!;
    const ox = (p % ncols) * cellW + axisPad;
    const oy = Math.floor(p / ncols) * cellH + 28;
    const sx = linearScale([x0, x1], [ox, ox + pw]);
    const sy = linearScale([y0, y1], spec.invertY ? [oy, oy + ph] : [oy + ph, oy]);
    const { rgb, order, legend } = colouring(panel.coloring, n, na, ox + pw + 14, oy);
    const shape = spec.marker?.shape ?? "circle";
    // a marker in data units covers this many px (equal aspect: the same along y)
    const radius = spec.marker ? spec.marker.radius * Math.abs(sx(x0 + 1) - sx(x0)) : spec.radius;
    const parts: string[] = [];
    if (panel.title) parts.push(panelTitle(panel.title, ox + pw / 2, oy - 10));
    if (bgPng) {
      // the image's rows run with y: flipped when the panel's y axis points up
      const flip = spec.invertY ? undefined : `translate(0 ${2 * oy + ph}) scale(1 -1)`;
      parts.push(
        image(ox, oy, pw, ph, bgPng, {
          class: "background-image",
          opacity:
            spec.backgroundAlpha !== undefined && spec.backgroundAlpha < 1 ? spec.backgroundAlpha : undefined,
          transform: flip,
        }),
      );
    }
    if (n > VECTOR_POINT_CAP) {
      const px = new Float32Array(n);
      const py = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        px[i] = sx(spec.x[i]!) - ox;
        py[i] = sy(spec.y[i]!) - oy;
      }
      const png = await rasterPoints({
        width: pw,
        height: ph,
        x: px,
        y: py,
        order,
        rgb,
        radius,
        shape,
        alpha: spec.alpha,
      });
      parts.push(image(ox, oy, pw, ph, png, { class: "points-raster" }));
    } else {
      const dots: string[] = [];
      const op = spec.alpha !== undefined && spec.alpha < 1 ? spec.alpha : undefined;
      for (let k = 0; k < order.length; k++) {
        const i = order[k]!;
        const cx = sx(spec.x[i]!);
        const cy = sy(spec.y[i]!);
        if (!Number.isFinite(cx) || !Number.isFinite(cy)) continue;
        const style = { class: "point", fill: toHexColor(rgb(i)), "fill-opacity": op };
        if (shape === "square") dots.push(rect(cx - radius, cy - radius, 2 * radius, 2 * radius, style));
        else if (shape === "hex") {
          const d = hexagonVertices(cx, cy, radius)
            .map(([x, y], v) => `${v === 0 ? "M" : "L"}${x.toFixed(2)} ${y.toFixed(2)}`)
            .join("");
          dots.push(path(`${d}Z`, style));
        } else dots.push(circle(cx, cy, radius, style));
      }
      parts.push(group(dots, { class: "points" }));
    }
    parts.push(frame(ox, oy, pw, ph));
    if (spec.axes) {
      parts.push(leftAxis(sy, ox, spec.yLabel));
      parts.push(bottomAxis(sx, oy + ph, spec.xLabel));
    } else {
      if (spec.xLabel) parts.push(bottomAxis(linearScale([0, 0], [ox, ox + pw]), oy + ph, spec.xLabel, []));
      if (spec.yLabel) parts.push(leftAxis(linearScale([0, 0], [oy + ph, oy]), ox + 8, spec.yLabel, []));
    }
    if (legend) parts.push(legend.svg);
    out.push(group(parts, { class: "panel" }));
  }
  const rows = Math.ceil(spec.panels.length / ncols);
  return svgDocument({
    width: ncols * cellW,
    height: rows * cellH + 8,
    children: out,
    background: "#ffffff",
  });
}

/** Colour per point, drawing order and legend of one panel. */
function colouring(
  c: PointColoring,
  n: number,
  na: readonly [number, number, number],
  lx: number,
  ly: number,
): { rgb: (i: number) => readonly [number, number, number]; order: Uint32Array; legend: Sized | null } {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (c.kind === "constant") {
    const rgb = parseHexColor(c.color) ?? [31, 119, 180];
    return { rgb: () => rgb, order, legend: null };
  }
  if (c.kind === "categorical") {
    const rgbs = c.colors.map((h) => parseHexColor(h) ?? GREY);
    const shown = c.shown;
    const rgb = (i: number) => {
      const k = c.codes[i]!;
      return k < 0 || (shown && !shown.has(k)) ? na : rgbs[k]!;
    };
    // Missing and hidden categories first (underneath), as scanpy draws them.
    const hidden = (i: number) => {
      const k = c.codes[i]!;
      return k < 0 || (shown !== undefined && !shown.has(k));
    };
    const sorted = Uint32Array.from([...order.filter(hidden), ...order.filter((i) => !hidden(i))]);
    const items = c.categories
      .map((label, k) => ({ label, color: c.colors[k]!, k }))
      .filter((it) => !shown || shown.has(it.k));
    return { rgb, order: sorted, legend: categoryLegend(lx, ly, items) };
  }
  const [lo, hi] = extent(c.values);
  const vmin = c.vmin ?? lo;
  const vmax = c.vmax ?? hi;
  const norm = normalizer(vmin, vmax, c.vcenter);
  const rgb = (i: number) => {
    const v = c.values[i]!;
    return Number.isFinite(v) ? colormapRgb(c.cmap, norm(v)) : na;
  };
  // scanpy's sort_order: higher values on top, missing values underneath.
  const key = (i: number) => (Number.isFinite(c.values[i]!) ? c.values[i]! : -Infinity);
  const sorted = order.sort((a, b) => key(a) - key(b));
  return {
    rgb,
    order: sorted,
    legend: colorbar(lx, ly, { cmap: c.cmap, vmin, vmax, center: c.vcenter, length: 140 }),
  };
}

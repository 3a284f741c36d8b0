/**
 * What an AI agent sees of a display (agent-mcp.md section 4, MCP `view_display`): the display drawn
 * by the snapshot core (`renderSnapshot`, so the agent sees what a human's snapshot would show) at one
 * PNG pixel per canvas pixel, with a world-labelled grid and cyan verification marks drawn over it,
 * and the metadata an agent needs to name what it sees in world coordinates: the pixel → world affine
 * (referenced to pixel centres, rows top-down), the four image corners, the world window, the grid.
 *
 * The overlay is added to the core's SVG rather than drawn by it: the grid of a human snapshot is a
 * faint unlabelled one at the scale bar's spacing, while an agent needs about six labelled lines per
 * axis it can read coordinates off.
 */
import { BadRequestError } from "../errors.js";
import type { DisplaySpec } from "../io/checkpoint/app-state.js";
import type { Session } from "../session/session.js";
import { svgToPng } from "./export.js";
import { type Affine6, apply, compose, invertAffine } from "./frame.js";
import { sessionRenderSource } from "./render-source.js";
import { renderSnapshot, snapshotDisplay } from "./snapshots.js";
import { group, line, num, path, text } from "./svg.js";

/** Longest side of a vision render, px (agent-mcp.md 4.1). */
export const VISION_MAX_PX = 1568;
/** One PNG pixel per canvas (CSS) pixel: the core's page is 1/96 in per canvas px. */
const VISION_DPI = 96;
/** Margin around the content of a `"fit"` viewport, per side, as a fraction of the content's size. */
export const FIT_MARGIN = 0.05;
/** Lines per axis the grid aims at. */
const GRID_LINES = 6;
/** Marks drawn at most (each kind). */
export const MAX_MARKS = 1000;
const MARK_COLOR = "#00ffff";
const HALO_COLOR = "#000000";

/** A viewport as a display saves it. */
export interface VisionViewport {
  target: [number, number];
  zoom: number;
}

/** What to render. */
export interface VisionRequest {
  /** The display (default: the first spatial display, else the first). */
  displayId?: string | undefined;
  /** A viewport, `"fit"` (the content with a 5% margin), or undefined for the display's saved one. */
  viewport?: VisionViewport | "fit" | undefined;
  widthPx: number;
  heightPx: number;
  /** Draw the world-labelled grid. */
  includeGrid: boolean;
  /** World points to mark (cyan, black halo). */
  markPoints?: readonly (readonly number[])[] | undefined;
  /** World polygons to mark (cyan outlines, black halo). */
  markPolygons?: readonly (readonly (readonly number[])[])[] | undefined;
}

/** The grid drawn: its step per axis and the world value of every line. */
export interface VisionGrid {
  step_x: number;
  step_y: number;
  x: number[];
  y: number[];
}

/** The metadata block of a vision render. */
export interface VisionMetadata {
  display_id: string;
  display_type: DisplaySpec["type"];
  image_px: { width: number; height: number };
  space: {
    kind: "spatial" | "embedding";
    description: string;
    unit: string;
    y_axis: "down" | "up";
  };
  viewport: VisionViewport;
  /** `[a, b, c, d, e, f]`: world x = a·px + b·py + c, world y = d·px + e·py + f (pixel centres). */
  pixel_to_world: Affine6;
  /** The inverse: pixel (centre-referenced) of a world point. */
  world_to_pixel: Affine6;
  formula: string;
  /** World coordinates of the image's outer corners (pixel edges, not centres). */
  corners: {
    top_left: [number, number];
    top_right: [number, number];
    bottom_left: [number, number];
    bottom_right: [number, number];
  };
  world_window: { x: [number, number]; y: [number, number] };
  grid: VisionGrid | null;
  render: Record<string, unknown>;
  marks: { points: number; polygons: number };
  /** The display's encoding keys that decide what is drawn. */
  encoding: Record<string, unknown>;
}

/** A finished vision render. */
export interface VisionRender {
  png: Uint8Array;
  metadata: VisionMetadata;
}

/** The nice step (1, 2, 2.5 or 5 × 10^k) closest to `span / lines`. */
export function gridStep(span: number, lines = GRID_LINES): number {
  const raw = span / lines;
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const k = 10 ** Math.floor(Math.log10(raw));
  let best = k;
  for (const m of [1, 2, 2.5, 5, 10]) {
    if (Math.abs(Math.log(m * k) - Math.log(raw)) < Math.abs(Math.log(best) - Math.log(raw))) best = m * k;
  }
  return best;
}

/** A grid value as a short label (as many decimals as the step needs). */
function label(v: number, step: number): string {
  const decimals = Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9) + (step % 1 ? 1 : 0)));
  const s = v.toFixed(decimals);
  return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s;
}

/** Lines at multiples of `step` inside `[lo, hi]`. */
function ticks(lo: number, hi: number, step: number): number[] {
  const out: number[] = [];
  for (let i = Math.ceil(lo / step); i * step <= hi && out.length < 200; i++) out.push(i * step);
  return out;
}

/** The positions (two components) a display draws its cells at. */
async function displayPositions(s: Session, d: DisplaySpec): Promise<{ xs: Float32Array; ys: Float32Array }> {
  const src = sessionRenderSource(s);
  if (d.type === "spatial_canvas") {
    const f = await src.field(d.encoding.coords || "obsm:spatial");
    if (!f.components || f.components.length < 2)
      throw new BadRequestError(`encoding.coords: "${d.encoding.coords}" has fewer than two columns`);
    return { xs: f.components[0]!, ys: f.components[1]! };
  }
  const key = d.encoding.obsm_key.startsWith("obsm:") ? d.encoding.obsm_key : `obsm:${d.encoding.obsm_key}`;
  const f = await src.field(key);
  const c = f.components ?? [];
  if (c.length < 2) throw new BadRequestError(`encoding.obsm_key: "${key}" has fewer than two components`);
  const xi = d.encoding.x_component ?? 0;
  const yi = d.encoding.y_component ?? 1;
  return { xs: c[xi] ?? c[0]!, ys: c[yi] ?? c[1]! };
}

/** The viewport that frames every cell of the display with a 5% margin on each side. */
export async function fitViewport(
  s: Session,
  d: DisplaySpec,
  widthPx: number,
  heightPx: number,
): Promise<VisionViewport> {
  const { xs, ys } = await displayPositions(s, d);
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  if (!(x1 >= x0)) return { target: [0, 0], zoom: 0 };
  const w = Math.max(x1 - x0, 1e-9) * (1 + 2 * FIT_MARGIN);
  const h = Math.max(y1 - y0, 1e-9) * (1 + 2 * FIT_MARGIN);
  const zoom = Math.log2(Math.min(widthPx / w, heightPx / h));
  return { target: [(x0 + x1) / 2, (y0 + y1) / 2], zoom: Math.max(-40, Math.min(40, zoom)) };
}

/** The grid overlay (lines, then labels along the bottom and left edges, haloed). */
function gridOverlay(
  worldToPx: Affine6,
  W: number,
  H: number,
  g: VisionGrid,
  fg: string,
  halo: string,
): string {
  const lines: string[] = [];
  const labels: string[] = [];
  const lab = (
    x: number,
    y: number,
    s: string,
    anchor: "start" | "middle" | "end",
    baseline: "middle" | "baseline",
  ) => {
    const style = { size: 11, anchor, baseline } as const;
    labels.push(
      text(x, y, s, style).replace(
        "<text ",
        `<text stroke="${halo}" stroke-width="3" stroke-linejoin="round" `,
      ),
      text(x, y, s, { ...style, fill: fg }),
    );
  };
  for (const x of g.x) {
    const [px] = apply(worldToPx, x, 0);
    lines.push(line(px, 0, px, H));
    lab(Math.min(Math.max(px, 14), W - 14), H - 4, label(x, g.step_x), "middle", "baseline");
  }
  for (const y of g.y) {
    const [, py] = apply(worldToPx, 0, y);
    lines.push(line(0, py, W, py));
    lab(4, Math.min(Math.max(py, 8), H - 18), label(y, g.step_y), "start", "middle");
  }
  return group(
    [
      group(lines, { stroke: fg, "stroke-opacity": 0.45, "stroke-width": 0.75, "stroke-dasharray": "4 3" }),
      group(labels),
    ],
    { class: "vision-grid" },
  );
}

/** The marks overlay: cyan over a black halo. */
function marksOverlay(
  worldToPx: Affine6,
  points: readonly (readonly number[])[],
  polygons: readonly (readonly (readonly number[])[])[],
): string {
  const out: string[] = [];
  for (const ring of polygons) {
    const d = `${ring
      .map(([x, y], i) => {
        const [px, py] = apply(worldToPx, x!, y!);
        return `${i ? "L" : "M"}${num(px)} ${num(py)}`;
      })
      .join("")}Z`;
    out.push(path(d, { fill: "none", stroke: HALO_COLOR, "stroke-width": 4, "stroke-linejoin": "round" }));
    out.push(path(d, { fill: "none", stroke: MARK_COLOR, "stroke-width": 2, "stroke-linejoin": "round" }));
  }
  for (const [x, y] of points) {
    const [px, py] = apply(worldToPx, x!, y!);
    if (!Number.isFinite(px) || !Number.isFinite(py) || Math.abs(px) > 1e6 || Math.abs(py) > 1e6) continue;
    out.push(
      path(`M${num(px - 6)} ${num(py)}H${num(px + 6)}M${num(px)} ${num(py - 6)}V${num(py + 6)}`, {
        stroke: HALO_COLOR,
        "stroke-width": 4,
      }),
      path(`M${num(px - 6)} ${num(py)}H${num(px + 6)}M${num(px)} ${num(py - 6)}V${num(py + 6)}`, {
        stroke: MARK_COLOR,
        "stroke-width": 2,
      }),
    );
  }
  return group(out, { class: "vision-marks" });
}

function checkMarks(
  points: readonly (readonly number[])[],
  polygons: readonly (readonly (readonly number[])[])[],
): void {
  if (points.length > MAX_MARKS) throw new BadRequestError(`mark_points: at most ${MAX_MARKS} points`);
  if (polygons.length > MAX_MARKS) throw new BadRequestError(`mark_polygons: at most ${MAX_MARKS} polygons`);
  points.forEach((p, i) => {
    if (p.length !== 2 || !p.every(Number.isFinite))
      throw new BadRequestError(`mark_points[${i}] must be [x, y] with two finite numbers`);
  });
  polygons.forEach((ring, i) => {
    if (ring.length < 2) throw new BadRequestError(`mark_polygons[${i}] needs at least 2 vertices`);
    ring.forEach((p, j) => {
      if (p.length !== 2 || !p.every(Number.isFinite))
        throw new BadRequestError(`mark_polygons[${i}][${j}] must be [x, y] with two finite numbers`);
    });
  });
}

/** The encoding keys that decide what a display draws. */
function drawnEncoding(d: DisplaySpec): Record<string, unknown> {
  const keys =
    d.type === "spatial_canvas"
      ? [
          "coords",
          "color_by",
          "image_layer",
          "show_image",
          "render_mode",
          "point_size",
          "invert_x",
          "invert_y",
          "isolated_category",
          "background",
        ]
      : [
          "obsm_key",
          "x_component",
          "y_component",
          "color_by",
          "point_size",
          "isolated_category",
          "background",
        ];
  const enc = d.encoding as unknown as Record<string, unknown>;
  return Object.fromEntries(keys.filter((k) => enc[k] !== undefined).map((k) => [k, enc[k]]));
}

/** Render a display for an agent: the PNG and its metadata block. 400 naming the field otherwise. */
export async function renderVision(s: Session, req: VisionRequest): Promise<VisionRender> {
  const display = snapshotDisplay(s, req.displayId);
  const points = req.markPoints ?? [];
  const polygons = req.markPolygons ?? [];
  checkMarks(points, polygons);
  // The size is capped by shrinking the canvas and the zoom together: the same world window, fewer pixels.
  let W = req.widthPx;
  let H = req.heightPx;
  const k = Math.min(1, VISION_MAX_PX / Math.max(W, H));
  W = Math.max(16, Math.round(W * k));
  H = Math.max(16, Math.round(H * k));
  let viewport: VisionViewport;
  if (req.viewport === "fit") viewport = await fitViewport(s, display, W, H);
  else {
    const v = req.viewport ?? display.viewport;
    viewport = {
      target: [Number(v.target?.[0] ?? 0), Number(v.target?.[1] ?? 0)],
      zoom: Number(v.zoom) + Math.log2(k),
    };
  }
  const { figure } = await renderSnapshot(s, {
    viewport: viewport,
    width_px: W,
    height_px: H,
    dpi: VISION_DPI,
    display_id: display.id,
  });
  const frame = figure.frame;
  const spatial = display.type === "spatial_canvas";
  const [wx0, wy0, wx1, wy1] = frame.worldWindow;
  const grid: VisionGrid | null = req.includeGrid
    ? (() => {
        const sx = gridStep(wx1 - wx0);
        const sy = gridStep(wy1 - wy0);
        return { step_x: sx, step_y: sy, x: ticks(wx0, wx1, sx), y: ticks(wy0, wy1, sy) };
      })()
    : null;
  const dark = (display.encoding.background ?? "dark") === "dark";
  const fg = dark ? "#f0f0f0" : "#111111";
  const halo = dark ? "#000000" : "#ffffff";
  const overlay =
    (grid ? gridOverlay(frame.worldToPx, W, H, grid, fg, halo) : "") +
    (points.length || polygons.length ? marksOverlay(frame.worldToPx, points, polygons) : "");
  const svg = overlay ? figure.svg.replace(/<\/svg>\s*$/, `${overlay}</svg>`) : figure.svg;
  const png = await svgToPng(svg, { dpi: VISION_DPI });

  // Pixel (i, j) covers [i, i+1) × [j, j+1) of the page: its centre is (i + ½, j + ½).
  const p2w = compose(frame.pngPixelToWorld, [1, 0, 0.5, 0, 1, 0.5]);
  const edge = (x: number, y: number) => apply(frame.pngPixelToWorld, x, y);
  const pw = frame.pngWidth;
  const ph = frame.pngHeight;
  const unit = spatial ? sessionRenderSource(s).unit() : "embedding units";
  const [a, b, c, d, e, f] = p2w.map((v) => Number(v.toPrecision(12))) as Affine6;
  return {
    png,
    metadata: {
      display_id: display.id,
      display_type: display.type,
      image_px: { width: pw, height: ph },
      space: spatial
        ? {
            kind: "spatial",
            description:
              "spatial world coordinates: the active table's obsm 'spatial' (canvas world); the space inspect_region, annotate_region and subset_to_region take",
            unit,
            y_axis: display.encoding.invert_y ? "up" : "down",
          }
        : {
            kind: "embedding",
            description: `embedding components ${display.encoding.x_component ?? 0} (x) and ${display.encoding.y_component ?? 1} (y) of obsm '${display.encoding.obsm_key}'; region tools take polygons here with space 'embedding' and this display_id`,
            unit,
            y_axis: "up",
          },
      viewport,
      pixel_to_world: [a, b, c, d, e, f],
      world_to_pixel: invertAffine(p2w).map((v) => Number(v.toPrecision(12))) as Affine6,
      formula: `x_world = ${a}·px + ${b}·py + ${c}; y_world = ${d}·px + ${e}·py + ${f} (px, py: pixel column and row from the top-left pixel's centre = 0, 0)`,
      corners: {
        top_left: edge(0, 0),
        top_right: edge(pw, 0),
        bottom_left: edge(0, ph),
        bottom_right: edge(pw, ph),
      },
      world_window: { x: [wx0, wx1], y: [wy0, wy1] },
      grid,
      render: { ...figure.render },
      marks: { points: points.length, polygons: polygons.length },
      encoding: drawnEncoding(display),
    },
  };
}

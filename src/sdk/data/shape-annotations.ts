/**
 * Shape annotations: arrows, lines, boxes, polygons, ellipses and text drawn on the spatial canvas,
 * stored as a real SpatialData shapes element named `annotations`, so they are saved in checkpoints,
 * read back, and open in Python (geopandas) like any other shapes.
 *
 * A shapes element holds one geometry type, so every annotation is stored as a Polygon (GeoParquet
 * WKB) that outlines it: a box its four corners, a polygon its ring, an ellipse a 64-vertex
 * approximation, a line or an arrow the path walked there and back (a zero-area ring), a text its
 * anchor (a degenerate ring). The exact parameters ride in attribute columns, and `points` (JSON of
 * the defining vertices) is the authority when reading back:
 *
 * | column | type | meaning |
 * |---|---|---|
 * | (index `id`) | string | the annotation's id (uuid) |
 * | kind | string | `arrow`, `line`, `box`, `polygon`, `ellipse`, `text` |
 * | points | string | JSON `[[x, y], …]`, canvas world coordinates |
 * | text | string or null | label (required for `text`) |
 * | color | string | stroke / text colour `#rrggbb` |
 * | fill | string or null | fill colour of box, polygon, ellipse (`#rrggbb`), null for none |
 * | stroke_width | float64 | line width in screen pixels |
 * | font_size | float64 | text size in world units (the app gives a new text 16 screen pixels at the zoom it is placed at) |
 * | rotation | float64 | degrees, counter-clockwise in world coordinates, of an ellipse (about its centre) or a text (about its anchor); 0 for other kinds |
 * | dash | string | stroke pattern: `solid`, `dashed`, `dotted` |
 * | arrow_start, arrow_end | bool | arrow heads at the first / last point of a line or arrow |
 * | arrow_size | float64 | length of an arrow head, screen pixels |
 * | stroke_z, fill_z | int32 | paint order of the stroke and of the fill; below 0: beneath the cells |
 * | fill_alpha | float64 | opacity of the fill, 0 to 1 |
 *
 * The style follows client.md 10.3 (stroke `{color, width, dash, arrowStart, arrowEnd, arrowSize, z}`,
 * fill `{enabled, color, alpha, z}`) spelled flat, one field per column: `color`, `stroke_width`,
 * `dash`, `arrow_start`, `arrow_end`, `arrow_size`, `stroke_z`; `fill` (null when disabled),
 * `fill_alpha`, `fill_z`. An element written before these columns existed reads with their defaults.
 *
 * Coordinates are canvas world coordinates (the active table's obsm `spatial` space); the element
 * carries the transformation of the table's region element, so it overlays the cells in every
 * coordinate system they map to.
 */

import { BadRequestError, NotFoundError } from "../errors.js";
import { MAX_POLYGON_VERTICES, MAX_TEXT_LENGTH } from "../input-limits.js";
import { type AffineMatrix, identityMatrix } from "./affine.js";
import { allocArray, type StringArray } from "./arrays.js";
import { columnValue, dataFrame, nRows } from "./dataframe.js";
import type { ShapesElement } from "./elements.js";
import { stringAt } from "./lazy-strings.js";
import { own } from "./own.js";
import { coordinateSystems, type SpatialData, transformTo } from "./spatialdata.js";
import { defaultAxes, type Transformation } from "./transforms.js";

/** Name of the shapes element that holds the annotations. */
export const ANNOTATIONS_ELEMENT = "annotations";

/** The kinds of shape annotation. */
export const SHAPE_KINDS = ["arrow", "line", "box", "polygon", "ellipse", "text"] as const;
/** One kind of shape annotation. */
export type ShapeKind = (typeof SHAPE_KINDS)[number];

/** A shape annotation as the API carries it. */
export interface ShapeAnnotation {
  /** uuid, minted by the server on create. */
  id: string;
  kind: ShapeKind;
  /**
   * Defining vertices in canvas world coordinates: arrow and line 2 or more (an arrow's head is at the
   * last), box and ellipse 2 (opposite corners of the box / of the ellipse's bounding box), polygon 3
   * or more (open or closed), text 1 (the anchor, top-left of the text).
   */
  points: [number, number][];
  /** Label shown with the shape; the text itself for `text`. */
  text: string | null;
  /** Stroke and text colour, `#rrggbb`. */
  color: string;
  /** Fill of box, polygon and ellipse, `#rrggbb`, or null for none. */
  fill: string | null;
  /** Line width in screen pixels. */
  stroke_width: number;
  /** Text size in world units (client.md 10.2), so a label scales with the tissue. */
  font_size: number;
  /**
   * Rotation in degrees, counter-clockwise in world coordinates, of an ellipse about its centre (its
   * two points then span the unrotated ellipse's box) or of a text about its anchor. Absent means 0;
   * other kinds have none.
   */
  rotation?: number;
  /** Stroke pattern. */
  dash: ShapeDash;
  /** Arrow head at the first point (line and arrow only). */
  arrow_start: boolean;
  /** Arrow head at the last point (line and arrow only; an `arrow` has one unless told otherwise). */
  arrow_end: boolean;
  /** Length of an arrow head, screen pixels. */
  arrow_size: number;
  /** Paint order of the stroke among every shape's strokes and fills; below 0 it lies beneath the cells. */
  stroke_z: number;
  /** Opacity of the fill, 0 (clear) to 1 (opaque). */
  fill_alpha: number;
  /** Paint order of the fill (as `stroke_z`). */
  fill_z: number;
}

/** The stroke patterns. */
export const SHAPE_DASHES = ["solid", "dashed", "dotted"] as const;
/** One stroke pattern. */
export type ShapeDash = (typeof SHAPE_DASHES)[number];

/** Defaults of the optional fields. */
export const SHAPE_DEFAULTS = {
  text: null,
  color: "#3388ff",
  fill: null,
  stroke_width: 2,
  font_size: 16,
  dash: "solid",
  arrow_start: false,
  arrow_size: 12,
  stroke_z: 1,
  fill_alpha: 0.25,
  fill_z: 0,
} as const;

/** Whether a shape of `kind` has an arrow head at its end when the field is left out. */
export function defaultArrowEnd(kind: ShapeKind): boolean {
  return kind === "arrow";
}

/** The largest `font_size` accepted, in world units. */
export const MAX_FONT_SIZE = 1_000_000;

/** The bound of `stroke_z` and `fill_z`: integers in [-Z_MAX, Z_MAX]. */
export const Z_MAX = 1000;

const HEX = /^#[0-9a-fA-F]{6}$/;
const FIELDS = new Set([
  "id",
  "kind",
  "points",
  "text",
  "color",
  "fill",
  "stroke_width",
  "font_size",
  "rotation",
  "dash",
  "arrow_start",
  "arrow_end",
  "arrow_size",
  "stroke_z",
  "fill_alpha",
  "fill_z",
]);
/** The kinds that may carry arrow heads. */
const ARROWED: readonly ShapeKind[] = ["line", "arrow"];
/** The kinds a rotation applies to. */
const ROTATABLE: readonly ShapeKind[] = ["ellipse", "text"];
/** Vertex count bounds per kind: [min, max]. */
const VERTICES: Record<ShapeKind, [number, number]> = {
  arrow: [2, 10_000],
  line: [2, 10_000],
  box: [2, 2],
  polygon: [3, MAX_POLYGON_VERTICES],
  ellipse: [2, 2],
  text: [1, 1],
};

/**
 * Check a ShapeAnnotation from a request and fill its defaults. `id` is taken from `id` (the path's,
 * or a fresh one); a body id must agree with it. Every problem is a BadRequestError (400).
 */
export function parseShapeAnnotation(body: unknown, id: string): ShapeAnnotation {
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw new BadRequestError("a shape annotation must be a JSON object");
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!FIELDS.has(k)) throw new BadRequestError(`unknown field "${k}"`);
  if (b.id !== undefined && b.id !== id)
    throw new BadRequestError(`body id ${JSON.stringify(b.id)} does not match the shape id "${id}"`);
  const kind = b.kind as ShapeKind;
  if (!SHAPE_KINDS.includes(kind))
    throw new BadRequestError(`kind must be one of ${SHAPE_KINDS.join(", ")}, got ${JSON.stringify(b.kind)}`);
  const [lo, hi] = VERTICES[kind];
  const pts = b.points;
  if (!Array.isArray(pts) || pts.length < lo || pts.length > hi)
    throw new BadRequestError(
      `a ${kind} needs ${lo === hi ? lo : `${lo} to ${hi}`} point${hi > 1 ? "s" : ""} [x, y] in "points"`,
    );
  const points = pts.map((p, i) => {
    if (!Array.isArray(p) || p.length !== 2 || !p.every((v) => typeof v === "number" && Number.isFinite(v)))
      throw new BadRequestError(`points[${i}] must be [x, y] with two finite numbers`);
    return [p[0], p[1]] as [number, number];
  });
  const text = b.text === undefined ? SHAPE_DEFAULTS.text : b.text;
  if (text !== null && typeof text !== "string") throw new BadRequestError("text must be a string or null");
  if (typeof text === "string" && text.length > MAX_TEXT_LENGTH)
    throw new BadRequestError(`text has ${text.length} characters; at most ${MAX_TEXT_LENGTH} are accepted`);
  if (kind === "text" && !text?.trim()) throw new BadRequestError("a text annotation needs a non-empty text");
  const color = b.color === undefined ? SHAPE_DEFAULTS.color : b.color;
  if (typeof color !== "string" || !HEX.test(color)) throw new BadRequestError("color must be #rrggbb");
  const fill = b.fill === undefined ? SHAPE_DEFAULTS.fill : b.fill;
  if (fill !== null && (typeof fill !== "string" || !HEX.test(fill)))
    throw new BadRequestError("fill must be #rrggbb or null");
  const num = (k: "stroke_width" | "font_size", max: number) => {
    const v = b[k] === undefined ? SHAPE_DEFAULTS[k] : b[k];
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > max)
      throw new BadRequestError(`${k} must be a number in (0, ${max}]`);
    return v;
  };
  let rotation = 0;
  if (b.rotation !== undefined) {
    const r = b.rotation;
    if (typeof r !== "number" || !Number.isFinite(r) || Math.abs(r) > 360)
      throw new BadRequestError("rotation must be a number of degrees in [-360, 360]");
    if (r !== 0 && !ROTATABLE.includes(kind))
      throw new BadRequestError(`rotation applies to ${ROTATABLE.join(" and ")}, not to a ${kind}`);
    rotation = r;
  }
  const dash = b.dash === undefined ? SHAPE_DEFAULTS.dash : b.dash;
  if (!SHAPE_DASHES.includes(dash as ShapeDash))
    throw new BadRequestError(
      `dash must be one of ${SHAPE_DASHES.join(", ")}, got ${JSON.stringify(b.dash)}`,
    );
  const flag = (k: "arrow_start" | "arrow_end", dflt: boolean) => {
    const v = b[k] === undefined ? dflt : b[k];
    if (typeof v !== "boolean") throw new BadRequestError(`${k} must be true or false`);
    if (v && !ARROWED.includes(kind))
      throw new BadRequestError(`${k} applies to ${ARROWED.join(" and ")}, not to a ${kind}`);
    return v;
  };
  const arrowSize = b.arrow_size === undefined ? SHAPE_DEFAULTS.arrow_size : b.arrow_size;
  if (typeof arrowSize !== "number" || !Number.isFinite(arrowSize) || arrowSize <= 0 || arrowSize > 1000)
    throw new BadRequestError("arrow_size must be a number of pixels in (0, 1000]");
  const z = (k: "stroke_z" | "fill_z") => {
    const v = b[k] === undefined ? SHAPE_DEFAULTS[k] : b[k];
    if (typeof v !== "number" || !Number.isInteger(v) || Math.abs(v) > Z_MAX)
      throw new BadRequestError(`${k} must be an integer in [-${Z_MAX}, ${Z_MAX}]`);
    return v;
  };
  const alpha = b.fill_alpha === undefined ? SHAPE_DEFAULTS.fill_alpha : b.fill_alpha;
  if (typeof alpha !== "number" || !Number.isFinite(alpha) || alpha < 0 || alpha > 1)
    throw new BadRequestError("fill_alpha must be a number in [0, 1]");
  return {
    id,
    kind,
    points,
    text: text as string | null,
    color,
    fill: fill as string | null,
    stroke_width: num("stroke_width", 1000),
    // World units: bounded by a generous coordinate span rather than by screen sizes.
    font_size: num("font_size", MAX_FONT_SIZE),
    ...(rotation ? { rotation } : {}),
    dash: dash as ShapeDash,
    arrow_start: flag("arrow_start", SHAPE_DEFAULTS.arrow_start),
    arrow_end: flag("arrow_end", defaultArrowEnd(kind)),
    arrow_size: arrowSize,
    stroke_z: z("stroke_z"),
    fill_alpha: alpha,
    fill_z: z("fill_z"),
  };
}

// ------------------------------------------------------------------ element ⇄ list

function str(col: ReturnType<typeof columnOf>, i: number): string | null {
  if (!col) return null;
  const v = columnValue(col, i);
  return v === null ? null : String(v);
}

function columnOf(el: ShapesElement, name: string) {
  return el.frame.columns[name];
}

/** The outline ring of a feature's first polygon, as points (fallback for rows without `points`). */
function firstRing(el: ShapesElement, i: number): [number, number][] {
  const g = el.geometry;
  if (g.type === "point") return [[g.coords[2 * i]!, g.coords[2 * i + 1]!]];
  const geom = g.geomOffsets!;
  const ring = g.type === "multipolygon" ? g.polygonOffsets![geom[i]!]! : geom[i]!;
  const a = g.ringOffsets![ring]!;
  const b = g.ringOffsets![ring + 1]!;
  const out: [number, number][] = [];
  for (let v = a; v < b; v++) out.push([g.coords[2 * v]!, g.coords[2 * v + 1]!]);
  return out;
}

/** The annotations held by `sd` (none when it has no `annotations` element), in stored order. */
export function readShapeAnnotations(sd: SpatialData): ShapeAnnotation[] {
  const el = sd.shapes[ANNOTATIONS_ELEMENT];
  if (!el) return [];
  const n = nRows(el.frame);
  const out: ShapeAnnotation[] = [];
  const num = (name: string, i: number, dflt: number) => {
    const c = columnOf(el, name);
    const v = c ? columnValue(c, i) : null;
    return typeof v === "number" && Number.isFinite(v) ? v : dflt;
  };
  const bool = (name: string, i: number, dflt: boolean) => {
    const c = columnOf(el, name);
    const v = c ? columnValue(c, i) : null;
    return typeof v === "boolean" ? v : typeof v === "number" ? v !== 0 : dflt;
  };
  for (let i = 0; i < n; i++) {
    const kind = str(columnOf(el, "kind"), i) as ShapeKind | null;
    let points: [number, number][] | null = null;
    const json = str(columnOf(el, "points"), i);
    if (json) {
      try {
        points = JSON.parse(json) as [number, number][];
      } catch {
        points = null;
      }
    }
    const rotation = num("rotation", i, 0);
    const k: ShapeKind = kind && SHAPE_KINDS.includes(kind) ? kind : "polygon";
    const dash = str(columnOf(el, "dash"), i) as ShapeDash | null;
    // Columns written before the style fields existed (or by someone else) read as their defaults.
    const arrowed = ARROWED.includes(k);
    out.push({
      id: stringAt(el.frame.index, i) ?? String(i),
      kind: k,
      points: points ?? firstRing(el, i),
      text: str(columnOf(el, "text"), i),
      color: str(columnOf(el, "color"), i) ?? SHAPE_DEFAULTS.color,
      fill: str(columnOf(el, "fill"), i),
      stroke_width: num("stroke_width", i, SHAPE_DEFAULTS.stroke_width),
      font_size: num("font_size", i, SHAPE_DEFAULTS.font_size),
      ...(rotation ? { rotation } : {}),
      dash: dash && SHAPE_DASHES.includes(dash) ? dash : SHAPE_DEFAULTS.dash,
      arrow_start: arrowed && bool("arrow_start", i, SHAPE_DEFAULTS.arrow_start),
      arrow_end: arrowed && bool("arrow_end", i, defaultArrowEnd(k)),
      arrow_size: num("arrow_size", i, SHAPE_DEFAULTS.arrow_size),
      stroke_z: Math.round(num("stroke_z", i, SHAPE_DEFAULTS.stroke_z)),
      fill_alpha: Math.min(1, Math.max(0, num("fill_alpha", i, SHAPE_DEFAULTS.fill_alpha))),
      fill_z: Math.round(num("fill_z", i, SHAPE_DEFAULTS.fill_z)),
    });
  }
  return out;
}

/** The closed outline ring stored as a shape's geometry (see the module comment). */
export function outlineRing(s: ShapeAnnotation): [number, number][] {
  const p = s.points;
  switch (s.kind) {
    case "box": {
      const [[x0, y0], [x1, y1]] = p as [[number, number], [number, number]];
      return [
        [x0, y0],
        [x1, y0],
        [x1, y1],
        [x0, y1],
        [x0, y0],
      ];
    }
    case "ellipse": {
      const [[x0, y0], [x1, y1]] = p as [[number, number], [number, number]];
      const cx = (x0 + x1) / 2;
      const cy = (y0 + y1) / 2;
      const rx = Math.abs(x1 - x0) / 2;
      const ry = Math.abs(y1 - y0) / 2;
      const t = ((s.rotation ?? 0) * Math.PI) / 180;
      const [cos, sin] = [Math.cos(t), Math.sin(t)];
      const ring: [number, number][] = [];
      for (let k = 0; k < 64; k++) {
        const a = (2 * Math.PI * k) / 64;
        const [ex, ey] = [rx * Math.cos(a), ry * Math.sin(a)];
        ring.push([cx + ex * cos - ey * sin, cy + ex * sin + ey * cos]);
      }
      ring.push(ring[0]!);
      return ring;
    }
    case "polygon": {
      const first = p[0]!;
      const last = p[p.length - 1]!;
      return first[0] === last[0] && first[1] === last[1] ? [...p] : [...p, first];
    }
    case "text":
      return [p[0]!, p[0]!, p[0]!, p[0]!];
    default:
      // A path there and back: a closed ring of zero area that GEOS still parses (4+ vertices).
      return [...p, ...p.slice(0, -1).reverse()].concat(p.length === 2 ? [p[0]!] : []);
  }
}

/** The 2-d transformations the annotations element carries: the table region element's placement. */
function annotationTransformations(sd: SpatialData, table: string | null): Record<string, Transformation> {
  const t = table ? own(sd.tables, table) : undefined;
  const regions = t?.annotation ? [t.annotation.region].flat() : [];
  const region = regions
    .map((r) => own(sd.shapes, r) ?? own(sd.labels, r) ?? own(sd.points, r) ?? own(sd.images, r))
    .find((e) => e !== undefined);
  const systems = region ? Object.keys(region.transformations) : [];
  const all = coordinateSystems(sd);
  const targets = systems.length ? systems : [all.includes("global") ? "global" : (all[0] ?? "global")];
  const axes = defaultAxes(["x", "y"]);
  const input = { name: ANNOTATIONS_ELEMENT, axes };
  const out: Record<string, Transformation> = {};
  for (const cs of targets) {
    let m: AffineMatrix = identityMatrix(2);
    if (region) {
      try {
        m = transformTo(sd, region, cs, ["x", "y"]);
      } catch {
        continue;
      }
    }
    const output = { name: cs, axes };
    const isIdentity = m.every((row, i) => row.every((v, j) => v === (i === j ? 1 : 0)));
    out[cs] = isIdentity
      ? { type: "identity", input, output }
      : { type: "affine", affine: m.map((r) => [...r]), input, output };
  }
  return out;
}

/**
 * The `annotations` shapes element holding `shapes` (null when the list is empty: the element is then
 * removed). Placed like the active table's region element, as it is placed now.
 */
export function shapeAnnotationsElement(
  sd: SpatialData,
  table: string | null,
  shapes: readonly ShapeAnnotation[],
): ShapesElement | null {
  if (!shapes.length) return null;
  const rings = shapes.map(outlineRing);
  let nv = 0;
  for (const r of rings) nv += r.length;
  const coords = allocArray("float64", 2 * nv) as Float64Array;
  const ringOffsets = allocArray("int32", rings.length + 1) as Int32Array;
  const geomOffsets = allocArray("int32", rings.length + 1) as Int32Array;
  let v = 0;
  rings.forEach((r, i) => {
    for (const [x, y] of r) {
      coords[2 * v] = x;
      coords[2 * v + 1] = y;
      v++;
    }
    ringOffsets[i + 1] = v;
    geomOffsets[i + 1] = i + 1;
  });
  const strs = (f: (s: ShapeAnnotation) => string | null): StringArray => ({
    kind: "string",
    shape: [shapes.length],
    values: shapes.map(f),
  });
  const f64 = (f: (s: ShapeAnnotation) => number) => ({
    kind: "dense" as const,
    dtype: "float64" as const,
    shape: [shapes.length],
    data: Float64Array.from(shapes, f),
  });
  const bools = (f: (s: ShapeAnnotation) => boolean) => ({
    kind: "dense" as const,
    dtype: "bool" as const,
    shape: [shapes.length],
    data: Uint8Array.from(shapes, (s) => (f(s) ? 1 : 0)),
  });
  const i32 = (f: (s: ShapeAnnotation) => number) => ({
    kind: "dense" as const,
    dtype: "int32" as const,
    shape: [shapes.length],
    data: Int32Array.from(shapes, f),
  });
  const frame = dataFrame(
    shapes.map((s) => s.id),
    {
      kind: strs((s) => s.kind),
      points: strs((s) => JSON.stringify(s.points)),
      text: strs((s) => s.text),
      color: strs((s) => s.color),
      fill: strs((s) => s.fill),
      stroke_width: f64((s) => s.stroke_width),
      font_size: f64((s) => s.font_size),
      rotation: f64((s) => s.rotation ?? 0),
      dash: strs((s) => s.dash),
      arrow_start: bools((s) => s.arrow_start),
      arrow_end: bools((s) => s.arrow_end),
      arrow_size: f64((s) => s.arrow_size),
      stroke_z: i32((s) => s.stroke_z),
      fill_alpha: f64((s) => s.fill_alpha),
      fill_z: i32((s) => s.fill_z),
    },
    "id",
  );
  return {
    kind: "shapes",
    name: ANNOTATIONS_ELEMENT,
    // Refreshed on every edit: the points are canvas coordinates, so the element follows the cells'
    // current placement (an edited points-to-global affine included).
    transformations: annotationTransformations(sd, table),
    geometry: { type: "polygon", coords, geomOffsets, ringOffsets },
    frame,
  };
}

/** The list after an edit: `add` appends, `put` replaces by id (404 when absent), `delete` removes (404). */
export function editShapeAnnotations(
  list: readonly ShapeAnnotation[],
  edit: { op: "add" | "put"; shape: ShapeAnnotation } | { op: "delete"; id: string },
): ShapeAnnotation[] {
  if (edit.op === "add") {
    if (list.some((s) => s.id === edit.shape.id))
      throw new BadRequestError(`shape annotation "${edit.shape.id}" exists already`);
    return [...list, edit.shape];
  }
  const id = edit.op === "delete" ? edit.id : edit.shape.id;
  if (!list.some((s) => s.id === id)) throw new NotFoundError(`no shape annotation "${id}"`);
  return edit.op === "put"
    ? list.map((s) => (s.id === id ? edit.shape : s))
    : list.filter((s) => s.id !== id);
}

/**
 * How a shape annotation's style (client.md 10.3) turns into drawing, in screen pixels: the dash
 * pattern, the arrow heads at either end of a line, and the order the strokes and fills of every shape
 * are painted in (their `z`; below 0 beneath the cells). Pure functions shared by the SVG drawn over
 * the cells and the deck layers drawn beneath them, in the live app and the serverless viewer alike.
 */
import { SHAPE_DEFAULTS, type ShapeDash } from "../../../sdk/data/shape-annotations.js";
import type { Pt, Shape } from "./shape-geometry.js";

/**
 * The dash pattern of a stroke `width` px wide, as alternating on/off lengths in px (null: solid).
 * Relative to the width so a thick dashed line still reads as dashed; dots are zero-length dashes
 * drawn with round caps (so each is a disc as wide as the line).
 */
export function dashPattern(dash: ShapeDash | undefined, width: number): number[] | null {
  const w = Math.max(1, width);
  if (dash === "dashed") return [4 * w, 3 * w];
  if (dash === "dotted") return [0, 2.5 * w];
  return null;
}

/** Half the base of an arrow head, as a share of its length. */
const HEAD_HALF_WIDTH = 0.45;

/**
 * The triangle of an arrow head whose tip is at `tip`, pointing away from `from` (screen px), `size`
 * px long. Empty when the two points coincide (no direction).
 */
export function arrowHead(tip: Pt, from: Pt, size: number): Pt[] {
  const dx = tip[0] - from[0];
  const dy = tip[1] - from[1];
  const len = Math.hypot(dx, dy);
  if (len < 1e-9) return [];
  const [ux, uy] = [dx / len, dy / len];
  const bx = tip[0] - ux * size;
  const by = tip[1] - uy * size;
  const h = size * HEAD_HALF_WIDTH;
  return [tip, [bx - uy * h, by + ux * h], [bx + uy * h, by - ux * h]];
}

/** The first point at least `eps` px from `pts[i]`, walking by `step` (so a repeated vertex has a direction). */
function neighbour(pts: readonly Pt[], i: number, step: 1 | -1): Pt {
  for (let j = i + step; j >= 0 && j < pts.length; j += step) {
    const q = pts[j]!;
    if (Math.hypot(q[0] - pts[i]![0], q[1] - pts[i]![1]) > 1e-6) return q;
  }
  return pts[i]!;
}

/**
 * A line's screen path and its arrow heads: the path is shortened under each head (by most of the
 * head's length, never more than the end segment) so a wide line does not poke through the tip.
 */
export function arrowedPath(
  screen: readonly Pt[],
  s: Pick<Shape, "arrow_start" | "arrow_end" | "arrow_size">,
): { path: Pt[]; heads: Pt[][] } {
  const path = screen.map((p) => [p[0], p[1]] as Pt);
  const heads: Pt[][] = [];
  if (path.length < 2) return { path, heads };
  const size = s.arrow_size ?? SHAPE_DEFAULTS.arrow_size;
  const pull = (i: number, toward: Pt) => {
    const p = path[i]!;
    const d = Math.hypot(toward[0] - p[0], toward[1] - p[1]);
    const k = d > 0 ? Math.min(size * 0.8, d) / d : 0;
    path[i] = [p[0] + (toward[0] - p[0]) * k, p[1] + (toward[1] - p[1]) * k];
  };
  if (s.arrow_end) {
    const i = path.length - 1;
    const from = neighbour(screen as Pt[], i, -1);
    const head = arrowHead(screen[i]!, from, size);
    if (head.length) {
      heads.push(head);
      pull(i, from);
    }
  }
  if (s.arrow_start) {
    const from = neighbour(screen as Pt[], 0, 1);
    const head = arrowHead(screen[0]!, from, size);
    if (head.length) {
      heads.push(head);
      pull(0, from);
    }
  }
  return { path, heads };
}

/** One painted part of a shape: its fill or its stroke (a text's glyphs are its stroke). */
export interface ShapePart {
  shape: Shape;
  part: "fill" | "stroke";
  z: number;
}

/** Whether a shape has a fill to paint: a closed kind with a fill colour. */
export function hasFill(s: Shape): boolean {
  return (s.kind === "box" || s.kind === "ellipse" || s.kind === "polygon") && Boolean(s.fill);
}

/**
 * The parts of every shape in paint order: by `z` (fills default to 0, strokes to 1), ties in list
 * order with a shape's fill under its own stroke; `below` holds those with z < 0 (beneath the
 * cells), `above` the rest. A text is always drawn over the cells (its z orders it among the others).
 */
export function paintOrder(shapes: readonly Shape[]): { below: ShapePart[]; above: ShapePart[] } {
  const parts: (ShapePart & { order: number })[] = [];
  shapes.forEach((s, i) => {
    if (hasFill(s)) parts.push({ shape: s, part: "fill", z: s.fill_z ?? 0, order: 2 * i });
    parts.push({ shape: s, part: "stroke", z: s.stroke_z ?? 1, order: 2 * i + 1 });
  });
  parts.sort((a, b) => a.z - b.z || a.order - b.order);
  const strip = ({ shape, part, z }: ShapePart) => ({ shape, part, z });
  return {
    below: parts.filter((p) => p.z < 0 && p.shape.kind !== "text").map(strip),
    above: parts.filter((p) => p.z >= 0 || p.shape.kind === "text").map(strip),
  };
}

/**
 * A screen path cut into the visible pieces of a dash pattern (for drawers without native dashes):
 * each piece a short path; dots are pieces of length ~0 (drawn with round caps).
 */
export function dashPieces(path: readonly Pt[], pattern: readonly number[] | null): Pt[][] {
  if (!pattern || path.length < 2) return [path.map((p) => [p[0], p[1]] as Pt)];
  const out: Pt[][] = [];
  let k = 0;
  let left = pattern[0]!;
  let on = true;
  let cur: Pt[] = [[path[0]![0], path[0]![1]]];
  for (let i = 1; i < path.length; i++) {
    let [x0, y0] = path[i - 1]!;
    const [x1, y1] = path[i]!;
    let seg = Math.hypot(x1 - x0, y1 - y0);
    while (seg > 0) {
      const take = Math.min(left, seg);
      const t = seg > 0 ? take / seg : 0;
      const x = x0 + (x1 - x0) * t;
      const y = y0 + (y1 - y0) * t;
      if (on) cur.push([x, y]);
      seg -= take;
      left -= take;
      [x0, y0] = [x, y];
      if (left <= 1e-9) {
        if (on) out.push(cur.length > 1 ? cur : [cur[0]!, [x + 0.01, y]]);
        on = !on;
        k = (k + 1) % pattern.length;
        left = pattern[k]!;
        cur = [[x, y]];
        if (on && left <= 1e-9) {
          // A dot: a zero-length dash.
          out.push([
            [x, y],
            [x + 0.01, y],
          ]);
          on = false;
          k = (k + 1) % pattern.length;
          left = pattern[k]!;
        }
      }
    }
  }
  if (on && cur.length > 1) out.push(cur);
  return out;
}

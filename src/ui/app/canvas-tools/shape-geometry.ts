/**
 * Geometry of the canvas tools, in canvas coordinates (spatial: world; embedding: the chosen
 * components): the outline a shape annotation is drawn with, moving a shape, the polygon centroid and
 * span a region's label is placed by, and which cells a screen-space ring holds (3D embedding).
 * Pure functions, no DOM.
 */
import type { ShapeAnnotation, ShapeKind } from "../../../sdk/data/shape-annotations.js";

/** A point `[x, y]`. */
export type Pt = [number, number];

/** A shape annotation as the API carries it (`GET …/shape-annotations`). */
export type Shape = ShapeAnnotation;
/** The kinds the API accepts. */
export type { ShapeKind };

/** Vertices of an ellipse outline drawn from two opposite corners of its bounding box. */
export const ELLIPSE_SEGMENTS = 64;

/** The four corners of the box spanned by two opposite corners. */
export function boxCorners(a: Pt, b: Pt): Pt[] {
  return [
    [a[0], a[1]],
    [b[0], a[1]],
    [b[0], b[1]],
    [a[0], b[1]],
  ];
}

/** `p` turned by `deg` degrees (counter-clockwise in world coordinates) about `c`. */
export function rotateAbout(p: readonly number[], c: readonly number[], deg: number): Pt {
  const t = (deg * Math.PI) / 180;
  const [dx, dy] = [p[0]! - c[0]!, p[1]! - c[1]!];
  return [c[0]! + dx * Math.cos(t) - dy * Math.sin(t), c[1]! + dx * Math.sin(t) + dy * Math.cos(t)];
}

/** Midpoint of two points (an ellipse's centre from its box corners). */
export function mid(a: readonly number[], b: readonly number[]): Pt {
  return [(a[0]! + b[0]!) / 2, (a[1]! + b[1]!) / 2];
}

/**
 * The ellipse inscribed in the box spanned by `a` and `b`, turned by `rotation` degrees about its
 * centre, as `ELLIPSE_SEGMENTS` vertices (the server stores the same outline).
 */
export function ellipseRing(a: Pt, b: Pt, rotation = 0): Pt[] {
  const c = mid(a, b);
  const rx = Math.abs(b[0] - a[0]) / 2;
  const ry = Math.abs(b[1] - a[1]) / 2;
  const out: Pt[] = [];
  for (let i = 0; i < ELLIPSE_SEGMENTS; i++) {
    const t = (2 * Math.PI * i) / ELLIPSE_SEGMENTS;
    out.push(rotateAbout([c[0] + rx * Math.cos(t), c[1] + ry * Math.sin(t)], c, rotation));
  }
  return out;
}

/**
 * The outline a shape is drawn with: `closed` rings for box, ellipse and polygon, an open path for
 * line and arrow, the anchor alone for text.
 */
export function shapeOutline(s: Pick<Shape, "kind" | "points" | "rotation">): {
  points: Pt[];
  closed: boolean;
} {
  const p = s.points as Pt[];
  switch (s.kind) {
    case "box":
      return { points: boxCorners(p[0]!, p[1]!), closed: true };
    case "ellipse":
      return { points: ellipseRing(p[0]!, p[1]!, s.rotation ?? 0), closed: true };
    case "polygon":
      return { points: p, closed: true };
    case "text":
      return { points: p.slice(0, 1), closed: false };
    default:
      return { points: p, closed: false };
  }
}

/** The shape's defining points moved by `(dx, dy)`. */
export function translated(points: readonly (readonly number[])[], dx: number, dy: number): Pt[] {
  return points.map((q) => [q[0]! + dx, q[1]! + dy]);
}

/** Area centroid of a ring (the vertex mean for a degenerate one). */
export function centroid(ring: readonly (readonly number[])[]): Pt {
  let a = 0;
  let cx = 0;
  let cy = 0;
  for (let i = 0; i < ring.length; i++) {
    const [x0, y0] = ring[i]!;
    const [x1, y1] = ring[(i + 1) % ring.length]!;
    const cross = x0! * y1! - x1! * y0!;
    a += cross;
    cx += (x0! + x1!) * cross;
    cy += (y0! + y1!) * cross;
  }
  if (Math.abs(a) < 1e-12) {
    const n = Math.max(1, ring.length);
    return [ring.reduce((s, q) => s + q[0]!, 0) / n, ring.reduce((s, q) => s + q[1]!, 0) / n];
  }
  return [cx / (3 * a), cy / (3 * a)];
}

/** The larger side of the bounding box of some rings. */
export function span(rings: readonly (readonly (readonly number[])[])[]): number {
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (const r of rings)
    for (const [x, y] of r) {
      x0 = Math.min(x0, x!);
      x1 = Math.max(x1, x!);
      y0 = Math.min(y0, y!);
      y1 = Math.max(y1, y!);
    }
  return Number.isFinite(x0) ? Math.max(x1 - x0, y1 - y0) : 0;
}

/** Even-odd test of one point against one ring. */
export function insideRing(x: number, y: number, ring: readonly (readonly number[])[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi! > y !== yj! > y && x < ((xj! - xi!) * (y - yi!)) / (yj! - yi!) + xi!) inside = !inside;
  }
  return inside;
}

/**
 * Rows whose projected point lies inside any screen-space ring (the 3D embedding selection: every
 * cell is projected through the live camera, client.md 6.2). `project` answers null for a point
 * behind the camera, which is never chosen.
 */
export function rowsInScreenRings(
  n: number,
  project: (i: number) => [number, number] | null,
  rings: readonly (readonly (readonly number[])[])[],
): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const p = project(i);
    if (p && rings.some((r) => insideRing(p[0], p[1], r))) out.push(i);
  }
  return out;
}

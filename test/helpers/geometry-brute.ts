/**
 * Brute-force geometry for tests: whether a cell outline meets a query polygon, tried every way with no
 * index (every vertex against the other ring, every edge pair), to check the SDK's indexed version.
 */
import type { ShapesElement } from "../../src/sdk/data/elements.js";

type Ring = readonly (readonly number[])[];

function inside(ring: Ring, x: number, y: number): boolean {
  let c = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i] as [number, number];
    const [xj, yj] = ring[j] as [number, number];
    if (yi > y !== yj > y && x < xi + ((y - yi) * (xj - xi)) / (yj - yi)) c = !c;
  }
  return c;
}

function cross(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): number {
  return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

function segmentsCross(p: number[], q: number[], r: number[], s: number[]): boolean {
  const d1 = cross(r[0]!, r[1]!, s[0]!, s[1]!, p[0]!, p[1]!);
  const d2 = cross(r[0]!, r[1]!, s[0]!, s[1]!, q[0]!, q[1]!);
  const d3 = cross(p[0]!, p[1]!, q[0]!, q[1]!, r[0]!, r[1]!);
  const d4 = cross(p[0]!, p[1]!, q[0]!, q[1]!, s[0]!, s[1]!);
  return d1 * d2 < 0 && d3 * d4 < 0;
}

/** Whether two simple rings share any point (vertex inside either, or crossing edges). */
export function ringsMeet(a: Ring, b: Ring): boolean {
  if (a.some(([x, y]) => inside(b, x!, y!))) return true;
  if (b.some(([x, y]) => inside(a, x!, y!))) return true;
  for (let i = 0; i < a.length; i++)
    for (let j = 0; j < b.length; j++)
      if (
        segmentsCross(
          a[i] as number[],
          a[(i + 1) % a.length] as number[],
          b[j] as number[],
          b[(j + 1) % b.length] as number[],
        )
      )
        return true;
  return false;
}

/** The outer ring of each polygon feature of a (single-ring polygon) shapes element, by feature id. */
export function outerRings(el: ShapesElement): Map<string, number[][]> {
  const g = el.geometry;
  const out = new Map<string, number[][]>();
  const ids = el.frame.index.values as readonly string[];
  for (let f = 0; f < ids.length; f++) {
    const r = g.geomOffsets![f]!;
    const v0 = g.ringOffsets![r]!;
    const v1 = g.ringOffsets![r + 1]!;
    const ring: number[][] = [];
    for (let v = v0; v < v1; v++) ring.push([g.coords[2 * v]!, g.coords[2 * v + 1]!]);
    out.set(String(ids[f]), ring);
  }
  return out;
}

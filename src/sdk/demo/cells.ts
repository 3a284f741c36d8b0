/**
 * Cell bodies and nuclei. Each cell is an irregular 10–16-gon around its seed, stretched along a
 * smooth fibre-orientation field for spindle-shaped types. Every vertex is pulled inside the
 * perpendicular bisector with each neighbour (less a small gap); since the polygon is the union of
 * triangles (seed, v_j, v_{j+1}) whose corners all lie in the seed's convex Voronoi cell, neighbouring
 * cells can never overlap. Each nucleus is an ellipse kept well inside its cell.
 */
import { allocArray } from "../data/arrays.js";
import type { Rng } from "../math/rng.js";
import type { SmoothField } from "./field.js";
import { CELL_TYPES } from "./genes.js";
import type { CellSeeds } from "./tissue.js";

/** Polygons (closed rings, counter-clockwise), centroids, areas and nuclei of all cells. */
export interface CellGeometry {
  /** Interleaved x,y of every ring; ring i spans vertices `ringOffsets[i] … ringOffsets[i+1]-1`, first = last. */
  readonly coords: Float64Array;
  readonly ringOffsets: Int32Array;
  readonly centroidX: Float64Array;
  readonly centroidY: Float64Array;
  readonly area: Float64Array;
  /** Nucleus ellipse: centre, semi-axes (a ≥ b) and the angle of a. */
  readonly nucleusX: Float64Array;
  readonly nucleusY: Float64Array;
  readonly nucleusA: Float64Array;
  readonly nucleusB: Float64Array;
  readonly nucleusAngle: Float64Array;
}

/** A uniform grid of seed indices, for neighbour lookups. */
class SeedGrid {
  private readonly cellStart: Int32Array;
  private readonly items: Int32Array;
  readonly nx: number;
  readonly ny: number;

  constructor(
    private readonly x: Float64Array,
    private readonly y: Float64Array,
    readonly size: number,
  ) {
    let minX = Number.POSITIVE_INFINITY;
    let minY = Number.POSITIVE_INFINITY;
    let maxX = Number.NEGATIVE_INFINITY;
    let maxY = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < x.length; i++) {
      minX = Math.min(minX, x[i]!);
      maxX = Math.max(maxX, x[i]!);
      minY = Math.min(minY, y[i]!);
      maxY = Math.max(maxY, y[i]!);
    }
    this.minX = minX;
    this.minY = minY;
    this.nx = Math.floor((maxX - minX) / size) + 1;
    this.ny = Math.floor((maxY - minY) / size) + 1;
    const counts = new Int32Array(this.nx * this.ny + 1);
    const bucket = new Int32Array(x.length);
    for (let i = 0; i < x.length; i++) {
      const b = this.bucketOf(x[i]!, y[i]!);
      bucket[i] = b;
      counts[b + 1]!++;
    }
    for (let b = 0; b < this.nx * this.ny; b++) counts[b + 1]! += counts[b];
    this.cellStart = counts.slice();
    this.items = new Int32Array(x.length);
    const fill = counts.slice();
    for (let i = 0; i < x.length; i++) this.items[fill[bucket[i]!]!++] = i;
  }

  private readonly minX: number;
  private readonly minY: number;

  private bucketOf(x: number, y: number): number {
    const bx = Math.min(this.nx - 1, Math.max(0, Math.floor((x - this.minX) / this.size)));
    const by = Math.min(this.ny - 1, Math.max(0, Math.floor((y - this.minY) / this.size)));
    return by * this.nx + bx;
  }

  /** Call `fn(j)` for every seed j ≠ i within `radius` of seed i. */
  forNeighbours(i: number, radius: number, fn: (j: number) => void): void {
    const xi = this.x[i]!;
    const yi = this.y[i]!;
    const reach = Math.ceil(radius / this.size);
    const bx = Math.floor((xi - this.minX) / this.size);
    const by = Math.floor((yi - this.minY) / this.size);
    const r2 = radius * radius;
    for (let gy = Math.max(0, by - reach); gy <= Math.min(this.ny - 1, by + reach); gy++) {
      for (let gx = Math.max(0, bx - reach); gx <= Math.min(this.nx - 1, bx + reach); gx++) {
        const b = gy * this.nx + gx;
        for (let k = this.cellStart[b]!; k < this.cellStart[b + 1]!; k++) {
          const j = this.items[k]!;
          if (j === i) continue;
          const ddx = this.x[j]! - xi;
          const ddy = this.y[j]! - yi;
          if (ddx * ddx + ddy * ddy <= r2) fn(j);
        }
      }
    }
  }
}

/** Distance from (px, py) to the segment (ax, ay)–(bx, by). */
function segmentDistance(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const vx = bx - ax;
  const vy = by - ay;
  const len2 = vx * vx + vy * vy;
  const t = len2 > 0 ? Math.min(1, Math.max(0, ((px - ax) * vx + (py - ay) * vy) / len2)) : 0;
  return Math.hypot(px - ax - t * vx, py - ay - t * vy);
}

/** Build every cell's polygon and nucleus. `orientation` (≈ [-2, 2]) steers the long axis of spindle cells. */
export function buildCells(
  rng: Rng,
  seeds: CellSeeds,
  types: Int32Array,
  orientation: SmoothField,
): CellGeometry {
  const n = seeds.x.length;
  const s = seeds.spacing;
  const gap = 0.04 * s;
  let maxReach = 0;
  for (const t of CELL_TYPES) maxReach = Math.max(maxReach, t.size * Math.sqrt(t.elongation));
  // Largest vertex radius before clamping: base 0.62·s·size·√e, times 1.08 jitter and 1.18 wobble.
  const rMax = 0.62 * s * maxReach * 1.08 * 1.18;
  const grid = new SeedGrid(seeds.x, seeds.y, s);

  const ringOffsets = new Int32Array(n + 1);
  const sides = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    sides[i] = 10 + rng.int(7);
    ringOffsets[i + 1] = ringOffsets[i]! + sides[i]! + 1;
  }
  const coords = allocArray("float64", 2 * ringOffsets[n]!) as Float64Array;
  const centroidX = new Float64Array(n);
  const centroidY = new Float64Array(n);
  const area = new Float64Array(n);
  const nucleusX = new Float64Array(n);
  const nucleusY = new Float64Array(n);
  const nucleusA = new Float64Array(n);
  const nucleusB = new Float64Array(n);
  const nucleusAngle = new Float64Array(n);

  const nbX: number[] = [];
  const nbY: number[] = [];
  const nbL: number[] = [];
  for (let i = 0; i < n; i++) {
    const spec = CELL_TYPES[types[i]!]!;
    const x0 = seeds.x[i]!;
    const y0 = seeds.y[i]!;
    const k = sides[i]!;
    const r = 0.62 * s * spec.size * (0.92 + 0.16 * rng.next());
    const e = spec.elongation;
    const a = r * Math.sqrt(e);
    const b = r / Math.sqrt(e);
    const theta0 = (Math.PI / 2) * orientation(x0, y0) + 0.3 * rng.normal();
    const start = rng.next() * 2 * Math.PI;
    const psi1 = rng.next() * 2 * Math.PI;
    const psi2 = rng.next() * 2 * Math.PI;

    // Neighbours that could reach this cell: unit direction and half-distance less the gap.
    nbX.length = 0;
    nbY.length = 0;
    nbL.length = 0;
    grid.forNeighbours(i, 2 * rMax, (j) => {
      const dx = seeds.x[j]! - x0;
      const dy = seeds.y[j]! - y0;
      const L = Math.hypot(dx, dy);
      nbX.push(dx / L);
      nbY.push(dy / L);
      nbL.push(L / 2 - gap / 2);
    });

    const off = ringOffsets[i]!;
    for (let j = 0; j < k; j++) {
      const th = start + ((j + 0.6 * (rng.next() - 0.5)) * 2 * Math.PI) / k;
      const ux = Math.cos(th);
      const uy = Math.sin(th);
      const phi = th - theta0;
      const cp = Math.cos(phi);
      const sp = Math.sin(phi);
      let rad = (a * b) / Math.sqrt(b * b * cp * cp + a * a * sp * sp);
      rad *= 1 + 0.08 * Math.sin(2 * th + psi1) + 0.06 * Math.sin(3 * th + psi2) + 0.08 * (rng.next() - 0.5);
      for (let m = 0; m < nbX.length; m++) {
        const dot = ux * nbX[m]! + uy * nbY[m]!;
        if (dot > 0) rad = Math.min(rad, nbL[m]! / dot);
      }
      coords[2 * (off + j)] = x0 + rad * ux;
      coords[2 * (off + j) + 1] = y0 + rad * uy;
    }
    coords[2 * (off + k)] = coords[2 * off]!;
    coords[2 * (off + k) + 1] = coords[2 * off + 1]!;

    // Shoelace area and centroid.
    let A = 0;
    let cx = 0;
    let cy = 0;
    for (let j = 0; j < k; j++) {
      const ax = coords[2 * (off + j)]!;
      const ay = coords[2 * (off + j) + 1]!;
      const bx = coords[2 * (off + j + 1)]!;
      const by = coords[2 * (off + j + 1) + 1]!;
      const c = ax * by - bx * ay;
      A += c;
      cx += (ax + bx) * c;
      cy += (ay + by) * c;
    }
    A /= 2;
    area[i] = A;
    centroidX[i] = cx / (6 * A);
    centroidY[i] = cy / (6 * A);

    // Nucleus: an ellipse near the centroid, shrunk to stay clear of every edge.
    const shift = 0.06 * r * rng.next();
    const shiftAngle = rng.next() * 2 * Math.PI;
    const nx = centroidX[i]! + shift * Math.cos(shiftAngle);
    const ny = centroidY[i]! + shift * Math.sin(shiftAngle);
    let dmin = Number.POSITIVE_INFINITY;
    for (let j = 0; j < k; j++) {
      dmin = Math.min(
        dmin,
        segmentDistance(
          nx,
          ny,
          coords[2 * (off + j)]!,
          coords[2 * (off + j) + 1]!,
          coords[2 * (off + j + 1)]!,
          coords[2 * (off + j + 1) + 1]!,
        ),
      );
    }
    let na = 0.45 * r * e ** 0.25 * (0.9 + 0.2 * rng.next());
    let nb = 0.45 * r * e ** -0.25 * (0.9 + 0.2 * rng.next());
    if (nb > na) [na, nb] = [nb, na];
    const f = Math.min(1, (0.8 * dmin) / na);
    nucleusX[i] = nx;
    nucleusY[i] = ny;
    nucleusA[i] = na * f;
    nucleusB[i] = nb * f;
    nucleusAngle[i] = theta0;
  }
  return {
    coords,
    ringOffsets,
    centroidX,
    centroidY,
    area,
    nucleusX,
    nucleusY,
    nucleusA,
    nucleusB,
    nucleusAngle,
  };
}

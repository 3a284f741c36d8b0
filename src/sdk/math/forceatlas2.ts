/**
 * ForceAtlas2 (Jacomy et al. 2014) as the `fa2-modified` package that scanpy's `tl.draw_graph`
 * calls runs it: linear repulsion k_r·m_i·m_j/d with node mass 1 + degree, Barnes-Hut regions split
 * at their centre of mass (θ = 1.2), linear gravity, linear attraction weighted by the edge weight,
 * and Gephi's adaptive speed with jitter tolerance. Scanpy's settings are the defaults here
 * (scalingRatio 2, gravity 1, no strong gravity, no LinLog, no hub dissuasion).
 *
 * Two quirks of the reference are kept on purpose, because layouts depend on them: a Barnes-Hut
 * region holding a single node applies the pair force to both nodes (so near pairs are pushed
 * twice), and regions split at their centre of mass, not their geometric centre.
 */

import type { SparseMatrix } from "../data/arrays.js";
import { grown, TreeCells } from "./tree-cells.js";

/** Options of `forceAtlas2`. */
export interface ForceAtlas2Options {
  /** Iterations; default 500 (scanpy's `maxiter`). */
  readonly iterations?: number;
  /** Repulsion coefficient; default 2. */
  readonly scalingRatio?: number;
  /** Gravity; default 1. */
  readonly gravity?: number;
  /** Use Barnes-Hut regions (else exact O(n²) repulsion); default true. */
  readonly barnesHut?: boolean;
  /** Barnes-Hut θ; default 1.2. */
  readonly theta?: number;
  /** Jitter tolerance; default 1. */
  readonly jitterTolerance?: number;
  /** Edge weight exponent (0: unweighted, 1: weighted); default 1. */
  readonly edgeWeightInfluence?: number;
  /** Checked between iterations. */
  readonly signal?: AbortSignal;
  /** Progress in [0, 1]. */
  readonly progress?: (fraction: number) => void;
}

/** Barnes-Hut regions over a permutation of the nodes, rebuilt every iteration. */
class Regions extends TreeCells {
  perm: Int32Array;
  mass = new Float64Array(0);
  cx = new Float64Array(0);
  cy = new Float64Array(0);
  extent = new Float64Array(0);
  private scratch: Int32Array;

  constructor(n: number) {
    super();
    this.perm = new Int32Array(n);
    this.scratch = new Int32Array(n);
  }

  protected growFields(cap: number): void {
    this.mass = grown(this.mass, cap);
    this.cx = grown(this.cx, cap);
    this.cy = grown(this.cy, cap);
    this.extent = grown(this.extent, cap);
  }

  private newRegion(a: number, b: number): number {
    return this.allocCell(a, b);
  }

  build(x: Float64Array, y: Float64Array, mass: Float64Array): void {
    const n = this.perm.length;
    for (let i = 0; i < n; i++) this.perm[i] = i;
    this.size = 0;
    const root = this.newRegion(0, n);
    const stack: number[] = [root];
    while (stack.length > 0) {
      const r = stack.pop()!;
      const a = this.start[r]!;
      const b = this.end[r]!;
      if (b - a < 2) continue;
      let m = 0;
      let sx = 0;
      let sy = 0;
      for (let t = a; t < b; t++) {
        const i = this.perm[t]!;
        m += mass[i]!;
        sx += x[i]! * mass[i]!;
        sy += y[i]! * mass[i]!;
      }
      const cx = sx / m;
      const cy = sy / m;
      let ext = 0;
      for (let t = a; t < b; t++) {
        const i = this.perm[t]!;
        const d = 2 * Math.sqrt((x[i]! - cx) ** 2 + (y[i]! - cy) ** 2);
        if (d > ext) ext = d;
      }
      this.mass[r] = m;
      this.cx[r] = cx;
      this.cy[r] = cy;
      this.extent[r] = ext;
      // Partition into the four quadrants around the centre of mass.
      const bounds = [a, a, a, a, a];
      let w = a;
      for (let q = 0; q < 4; q++) {
        bounds[q] = w;
        for (let t = a; t < b; t++) {
          const i = this.perm[t]!;
          const qi = (x[i]! < cx ? 0 : 1) + (y[i]! < cy ? 0 : 2);
          if (qi === q) this.scratch[w++] = i;
        }
      }
      bounds[4] = w;
      this.perm.set(this.scratch.subarray(a, b), a);
      const first = this.size;
      for (let q = 0; q < 4; q++) {
        const lo = bounds[q]!;
        const hi = bounds[q + 1]!;
        if (hi === lo) continue;
        if (hi - lo < b - a) this.newRegion(lo, hi);
        else for (let t = lo; t < hi; t++) this.newRegion(t, t + 1); // all nodes coincide
      }
      this.firstChild[r] = first;
      this.nChild[r] = this.size - first;
      for (let c = first; c < this.size; c++) if (this.end[c]! - this.start[c]! > 1) stack.push(c);
    }
  }
}

/**
 * Lay out the graph of a symmetric adjacency matrix (CSR or CSC; only its upper triangle's edges are
 * used, as in fa2) from initial positions `init` (n×2 row-major, copied). Returns n×2 positions.
 */
export function forceAtlas2(
  adjacency: SparseMatrix,
  init: Float64Array,
  opts: ForceAtlas2Options = {},
): Float64Array {
  const n = adjacency.shape[0];
  if (adjacency.shape[1] !== n) throw new Error("forceAtlas2: adjacency must be square");
  if (init.length !== 2 * n) throw new Error(`forceAtlas2: init must hold ${n}×2 positions`);
  const iterations = opts.iterations ?? 500;
  const scaling = opts.scalingRatio ?? 2;
  const gravity = opts.gravity ?? 1;
  const theta = opts.theta ?? 1.2;
  const jitterTolerance = opts.jitterTolerance ?? 1;
  const ewi = opts.edgeWeightInfluence ?? 1;
  const barnesHut = opts.barnesHut ?? true;
  // Mass = 1 + stored entries of the row; edges = upper triangle (j > i). For a symmetric matrix the
  // CSR row and the CSC column hold the same entries, so both layouts read the same way.
  const { indptr, indices, data } = adjacency;
  const mass = new Float64Array(n);
  let nEdges = 0;
  for (let i = 0; i < n; i++) {
    let deg = 0;
    for (let p = indptr[i]!; p < indptr[i + 1]!; p++) {
      if ((data[p] as number) === 0) continue;
      deg++;
      if (indices[p]! > i) nEdges++;
    }
    mass[i] = 1 + deg;
  }
  const e1 = new Int32Array(nEdges);
  const e2 = new Int32Array(nEdges);
  const ew = new Float64Array(nEdges);
  let e = 0;
  for (let i = 0; i < n; i++) {
    for (let p = indptr[i]!; p < indptr[i + 1]!; p++) {
      const j = indices[p]!;
      const w = data[p] as number;
      if (w === 0 || j <= i) continue;
      e1[e] = i;
      e2[e] = j;
      ew[e] = ewi === 0 ? 1 : ewi === 1 ? w : w ** ewi;
      e++;
    }
  }
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = init[2 * i]!;
    y[i] = init[2 * i + 1]!;
  }
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  const oldDx = new Float64Array(n);
  const oldDy = new Float64Array(n);
  const regions = new Regions(n);
  const stack = new Int32Array(Math.max(64, 4 * n + 4));
  let speed = 1;
  let speedEfficiency = 1;
  for (let it = 0; it < iterations; it++) {
    if ((it & 7) === 0) {
      opts.signal?.throwIfAborted();
      opts.progress?.(it / iterations);
    }
    oldDx.set(dx);
    oldDy.set(dy);
    dx.fill(0);
    dy.fill(0);
    // Repulsion.
    if (barnesHut) {
      regions.build(x, y, mass);
      const { start, end, firstChild, nChild, cx, cy, extent, perm } = regions;
      const rmass = regions.mass;
      for (let i = 0; i < n; i++) {
        const xi = x[i]!;
        const yi = y[i]!;
        const mi = mass[i]!;
        let top = 0;
        stack[top++] = 0;
        while (top > 0) {
          const r = stack[--top]!;
          const a = start[r]!;
          if (end[r]! - a < 2) {
            const j = perm[a]!;
            const xd = xi - x[j]!;
            const yd = yi - y[j]!;
            const d2 = xd * xd + yd * yd;
            if (d2 > 0) {
              const f = (scaling * mi * mass[j]!) / d2;
              dx[i] = dx[i]! + xd * f;
              dy[i] = dy[i]! + yd * f;
              dx[j] = dx[j]! - xd * f;
              dy[j] = dy[j]! - yd * f;
            }
            continue;
          }
          const xd = xi - cx[r]!;
          const yd = yi - cy[r]!;
          const d2 = xd * xd + yd * yd;
          if (Math.sqrt(d2) * theta > extent[r]!) {
            if (d2 > 0) {
              const f = (scaling * mi * rmass[r]!) / d2;
              dx[i] = dx[i]! + xd * f;
              dy[i] = dy[i]! + yd * f;
            }
            continue;
          }
          const fc = firstChild[r]!;
          const nc = nChild[r]!;
          for (let c = 0; c < nc; c++) stack[top++] = fc + c;
        }
      }
    } else {
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          const xd = x[i]! - x[j]!;
          const yd = y[i]! - y[j]!;
          const d2 = xd * xd + yd * yd;
          if (d2 > 0) {
            const f = (scaling * mass[i]! * mass[j]!) / d2;
            dx[i] = dx[i]! + xd * f;
            dy[i] = dy[i]! + yd * f;
            dx[j] = dx[j]! - xd * f;
            dy[j] = dy[j]! - yd * f;
          }
        }
      }
    }
    // Gravity.
    for (let i = 0; i < n; i++) {
      const d = Math.sqrt(x[i]! * x[i]! + y[i]! * y[i]!);
      if (d > 0) {
        const f = (mass[i]! * gravity) / d;
        dx[i] = dx[i]! - x[i]! * f;
        dy[i] = dy[i]! - y[i]! * f;
      }
    }
    // Attraction.
    for (let k = 0; k < nEdges; k++) {
      const i = e1[k]!;
      const j = e2[k]!;
      const xd = x[i]! - x[j]!;
      const yd = y[i]! - y[j]!;
      const f = -ew[k]!;
      dx[i] = dx[i]! + xd * f;
      dy[i] = dy[i]! + yd * f;
      dx[j] = dx[j]! - xd * f;
      dy[j] = dy[j]! - yd * f;
    }
    // Adaptive speed (Gephi's), then move.
    let totalSwinging = 0;
    let totalTraction = 0;
    for (let i = 0; i < n; i++) {
      const sw = Math.sqrt((oldDx[i]! - dx[i]!) ** 2 + (oldDy[i]! - dy[i]!) ** 2);
      totalSwinging += mass[i]! * sw;
      totalTraction += 0.5 * mass[i]! * Math.sqrt((oldDx[i]! + dx[i]!) ** 2 + (oldDy[i]! + dy[i]!) ** 2);
    }
    const estimatedJt = 0.05 * Math.sqrt(n);
    const minJt = Math.sqrt(estimatedJt);
    const maxJt = 10;
    let jt = jitterTolerance * Math.max(minJt, Math.min(maxJt, (estimatedJt * totalTraction) / (n * n)));
    const minSpeedEfficiency = 0.05;
    if (totalTraction !== 0 && totalSwinging / totalTraction > 2) {
      if (speedEfficiency > minSpeedEfficiency) speedEfficiency *= 0.5;
      jt = Math.max(jt, jitterTolerance);
    }
    const targetSpeed =
      totalSwinging === 0 ? Number.POSITIVE_INFINITY : (jt * speedEfficiency * totalTraction) / totalSwinging;
    if (totalSwinging > jt * totalTraction) {
      if (speedEfficiency > minSpeedEfficiency) speedEfficiency *= 0.7;
    } else if (speed < 1000) speedEfficiency *= 1.3;
    const maxRise = 0.5;
    speed = speed + Math.min(targetSpeed - speed, maxRise * speed);
    for (let i = 0; i < n; i++) {
      const sw = mass[i]! * Math.sqrt((oldDx[i]! - dx[i]!) ** 2 + (oldDy[i]! - dy[i]!) ** 2);
      const f = speed / (1 + Math.sqrt(speed * sw));
      x[i] = x[i]! + dx[i]! * f;
      y[i] = y[i]! + dy[i]! * f;
    }
  }
  opts.progress?.(1);
  const out = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    out[2 * i] = x[i]!;
    out[2 * i + 1] = y[i]!;
  }
  return out;
}

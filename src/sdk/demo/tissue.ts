/**
 * The demo's tissue: an irregular section outline, cell positions on a jittered hexagonal lattice
 * inside it, and cell types laid out in domains (tumour nests, normal epithelium, stroma, immune
 * infiltrate, with organically warped borders) plus niches (lymphoid follicles with a B-cell core and
 * a T-cell mantle; vessels with an endothelial lumen wrapped in smooth muscle).
 */
import type { Rng } from "../math/rng.js";
import { smoothField } from "./field.js";
import { CELL_TYPES } from "./genes.js";

/** The section's outline: a star-shaped blob `r(θ) = r0 · (1 + Σ a_k cos(kθ + φ_k))` around a centre. */
export interface TissueOutline {
  readonly cx: number;
  readonly cy: number;
  readonly r0: number;
  readonly amps: readonly number[];
  readonly phases: readonly number[];
  /** Area enclosed, in squared units. */
  readonly area: number;
}

/** Radius of the outline in direction `theta`. */
export function outlineRadius(o: TissueOutline, theta: number): number {
  let f = 1;
  for (let k = 0; k < o.amps.length; k++) f += o.amps[k]! * Math.cos((k + 2) * theta + o.phases[k]!);
  return o.r0 * f;
}

/** Whether a point lies inside the outline, at least `margin` from its edge (radially). */
export function insideOutline(o: TissueOutline, x: number, y: number, margin = 0): boolean {
  const dx = x - o.cx;
  const dy = y - o.cy;
  const r = Math.hypot(dx, dy);
  return r + margin <= outlineRadius(o, Math.atan2(dy, dx));
}

/** A random outline filling most of a `width × height` field, never closer than 3% to its border. */
export function makeOutline(rng: Rng, width: number, height: number): TissueOutline {
  const amps: number[] = [];
  const phases: number[] = [];
  let sum = 0;
  for (let k = 2; k <= 6; k++) {
    const a = (0.03 + 0.1 * rng.next()) / (k - 1);
    amps.push(a);
    phases.push(rng.next() * 2 * Math.PI);
    sum += a;
  }
  const half = Math.min(width, height) / 2;
  const cx = width / 2 + (rng.next() - 0.5) * 0.02 * width;
  const cy = height / 2 + (rng.next() - 0.5) * 0.02 * height;
  const room = Math.min(cx, width - cx, cy, height - cy) - 0.03 * half;
  const r0 = room / (1 + sum);
  const o = { cx, cy, r0, amps, phases, area: 0 };
  let area = 0;
  const steps = 1440;
  for (let i = 0; i < steps; i++) area += outlineRadius(o, (2 * Math.PI * i) / steps) ** 2;
  return { ...o, area: (area / 2) * ((2 * Math.PI) / steps) };
}

/** Cell seeds: positions and the lattice spacing they were laid on. */
export interface CellSeeds {
  readonly x: Float64Array;
  readonly y: Float64Array;
  readonly spacing: number;
}

/**
 * Exactly `n` cell seeds inside the outline: a hexagonal lattice jittered by up to 30% of its spacing,
 * with the spacing chosen so that slightly more than `n` sites fit; the surplus is dropped at random
 * (small gaps, as a real section has). Seeds come in row-major order, as segmentation labels do.
 */
export function placeCells(rng: Rng, outline: TissueOutline, n: number): CellSeeds {
  let spacing = Math.sqrt((2 * outline.area) / (Math.sqrt(3) * n * 1.04));
  for (let attempt = 0; attempt < 60; attempt++) {
    const r = rng.fork(attempt);
    const xs: number[] = [];
    const ys: number[] = [];
    const dy = (spacing * Math.sqrt(3)) / 2;
    const x0 = outline.cx - outline.r0 * 2;
    const y0 = outline.cy - outline.r0 * 2;
    const rows = Math.ceil((outline.r0 * 4) / dy);
    const cols = Math.ceil((outline.r0 * 4) / spacing);
    for (let j = 0; j <= rows; j++) {
      for (let i = 0; i <= cols; i++) {
        const x = x0 + i * spacing + (j % 2 ? spacing / 2 : 0) + (r.next() - 0.5) * 0.6 * spacing;
        const y = y0 + j * dy + (r.next() - 0.5) * 0.6 * spacing;
        if (insideOutline(outline, x, y, 0.6 * spacing)) {
          xs.push(x);
          ys.push(y);
        }
      }
    }
    if (xs.length >= n) {
      const keep = new Uint8Array(xs.length);
      const perm = r.permutation(xs.length);
      for (let k = 0; k < n; k++) keep[perm[k]!] = 1;
      const x = new Float64Array(n);
      const y = new Float64Array(n);
      let m = 0;
      for (let k = 0; k < xs.length; k++) {
        if (!keep[k]) continue;
        x[m] = xs[k]!;
        y[m] = ys[k]!;
        m++;
      }
      return { x, y, spacing };
    }
    spacing *= 0.98;
  }
  throw new Error(`demo: could not fit ${n} cells into the tissue`);
}

/** Probabilities over CELL_TYPES (Epithelial, Tumor, Fibroblast, Endothelial, T, B, Macrophage, Smooth muscle). */
type Composition = readonly [number, number, number, number, number, number, number, number];

/** The domain kinds, their cell compositions and how often each appears. */
const DOMAINS: readonly { name: string; weight: number; mix: Composition }[] = [
  { name: "tumor", weight: 0.25, mix: [0.02, 0.72, 0.08, 0.04, 0.06, 0.01, 0.07, 0.0] },
  { name: "epithelium", weight: 0.22, mix: [0.76, 0.02, 0.09, 0.03, 0.04, 0.01, 0.03, 0.02] },
  { name: "stroma", weight: 0.38, mix: [0.03, 0.02, 0.58, 0.09, 0.08, 0.02, 0.1, 0.08] },
  { name: "immune", weight: 0.15, mix: [0.01, 0.03, 0.1, 0.05, 0.42, 0.14, 0.24, 0.01] },
];
const FOLLICLE_CORE: Composition = [0, 0, 0.02, 0.02, 0.12, 0.8, 0.04, 0];
const FOLLICLE_MANTLE: Composition = [0, 0, 0.05, 0.03, 0.7, 0.12, 0.1, 0];
const VESSEL_LUMEN: Composition = [0, 0, 0.05, 0.9, 0.02, 0, 0.03, 0];
const VESSEL_WALL: Composition = [0, 0, 0.18, 0.1, 0.02, 0, 0.02, 0.68];

/** The spatial organisation of the cell types. */
export interface TypeLayout {
  /** Cell type code per cell (index into CELL_TYPES). */
  readonly types: Int32Array;
  /** Domain name per domain seed, for provenance. */
  readonly domains: readonly string[];
  readonly follicles: number;
  readonly vessels: number;
}

/**
 * Assign a type to every cell: by niche when the cell falls in one (follicles, then vessels), otherwise
 * by the domain whose seed is nearest after a smooth warp of the plane (so borders are organic, not
 * straight Voronoi edges).
 */
export function assignCellTypes(rng: Rng, outline: TissueOutline, seeds: CellSeeds): TypeLayout {
  const n = seeds.x.length;
  const s = seeds.spacing;
  const nDomains = Math.max(4, Math.round(Math.sqrt(n) / 5));
  const domainSize = Math.sqrt(outline.area / nDomains);
  const pick = (): [number, number] => {
    for (;;) {
      const a = rng.next() * 2 * Math.PI;
      const r = Math.sqrt(rng.next()) * outline.r0 * 1.1;
      const x = outline.cx + r * Math.cos(a);
      const y = outline.cy + r * Math.sin(a);
      if (insideOutline(outline, x, y, 0.5 * s)) return [x, y];
    }
  };

  // Domains: every kind at least once, the rest drawn by weight, in random order.
  const kinds: number[] = DOMAINS.map((_, i) => i);
  const weights = DOMAINS.map((d) => d.weight);
  while (kinds.length < nDomains) kinds.push(rng.choice([0, 1, 2, 3], weights));
  rng.shuffle(kinds);
  const dx = new Float64Array(nDomains);
  const dy = new Float64Array(nDomains);
  for (let d = 0; d < nDomains; d++) [dx[d], dy[d]] = pick();
  const warpX = smoothField(rng.fork("warp-x"), domainSize * 0.6, domainSize * 2.5);
  const warpY = smoothField(rng.fork("warp-y"), domainSize * 0.6, domainSize * 2.5);
  const warp = domainSize * 0.3;

  // Niches: follicles and vessels, sized in cell spacings so they always hold several cells.
  const nFollicles = Math.max(1, Math.round(n / 1200));
  const nVessels = Math.max(2, Math.round(n / 250));
  const niches: { x: number; y: number; r: number; inner: Composition; outer: Composition; split: number }[] =
    [];
  for (let i = 0; i < nFollicles; i++) {
    const [x, y] = pick();
    niches.push({
      x,
      y,
      r: s * (3.5 + 1.5 * rng.next()),
      inner: FOLLICLE_CORE,
      outer: FOLLICLE_MANTLE,
      split: 0.6,
    });
  }
  for (let i = 0; i < nVessels; i++) {
    const [x, y] = pick();
    niches.push({
      x,
      y,
      r: s * (1.3 + 0.8 * rng.next()),
      inner: VESSEL_LUMEN,
      outer: VESSEL_WALL,
      split: 0.55,
    });
  }

  const typeIndex = CELL_TYPES.map((_, i) => i);
  const types = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const x = seeds.x[i]!;
    const y = seeds.y[i]!;
    let mix: Composition | null = null;
    for (const nc of niches) {
      const d = Math.hypot(x - nc.x, y - nc.y);
      if (d < nc.r) {
        mix = d < nc.split * nc.r ? nc.inner : nc.outer;
        break;
      }
    }
    if (!mix) {
      const wx = x + warp * warpX(x, y);
      const wy = y + warp * warpY(x, y);
      let best = 0;
      let bestD = Number.POSITIVE_INFINITY;
      for (let d = 0; d < nDomains; d++) {
        const dd = (wx - dx[d]!) ** 2 + (wy - dy[d]!) ** 2;
        if (dd < bestD) {
          bestD = dd;
          best = d;
        }
      }
      mix = DOMAINS[kinds[best]!]!.mix;
    }
    types[i] = rng.choice(typeIndex, mix);
  }
  return { types, domains: kinds.map((k) => DOMAINS[k]!.name), follicles: nFollicles, vessels: nVessels };
}

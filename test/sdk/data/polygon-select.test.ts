import { describe, expect, it } from "vitest";
import { selectInPolygons, validatePolygons } from "../../../src/sdk/data/polygon-select.js";
import { Rng } from "../../../src/sdk/math/rng.js";

/** The textbook even-odd test (W. R. Franklin's pnpoly), written independently as the oracle. */
function pnpoly(ring: number[][], x: number, y: number): boolean {
  let c = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi! > y !== yj! > y && x < ((xj! - xi!) * (y - yi!)) / (yj! - yi!) + xi!) c = !c;
  }
  return c;
}

describe("selectInPolygons", () => {
  it("agrees with pnpoly on random points, a concave ring and a self-intersecting one", () => {
    const rng = new Rng(7);
    const n = 20_000;
    const coords = new Float64Array(2 * n);
    for (let i = 0; i < 2 * n; i++) coords[i] = rng.next() * 100;
    const concave = [
      [10, 10],
      [90, 10],
      [90, 90],
      [50, 40],
      [10, 90],
    ];
    const bowtie = [
      [20, 20],
      [80, 80],
      [80, 20],
      [20, 80],
    ];
    for (const polys of [[concave], [bowtie], [concave, bowtie]]) {
      const mask = selectInPolygons(coords, n, polys);
      let diff = 0;
      let inside = 0;
      for (let i = 0; i < n; i++) {
        const x = coords[2 * i]!;
        const y = coords[2 * i + 1]!;
        const want = polys.some((p) => pnpoly(p, x, y));
        if (want !== (mask[i] === 1)) diff++;
        if (want) inside++;
      }
      expect(diff).toBe(0);
      expect(inside).toBeGreaterThan(1000);
    }
  });

  it("treats closed and open rings alike, never selects NaN, honours stride and a vertex map", () => {
    const coords = new Float64Array([5, 5, 0, 0, 15, 5, Number.NaN, 5, 9.5, 9.5, 7]);
    const open = [
      [0.5, 0.5],
      [10, 0.5],
      [10, 10],
      [0.5, 10],
    ];
    const closed = [...open, [0.5, 0.5]];
    expect([...selectInPolygons(coords, 5, [open])]).toEqual([1, 0, 0, 0, 1]);
    expect([...selectInPolygons(coords, 5, [closed])]).toEqual([1, 0, 0, 0, 1]);
    // Three values per row: only the first two are x, y.
    const wide = new Float64Array([5, 5, 99, 50, 50, 99]);
    expect([...selectInPolygons(wide, 2, [open], { stride: 3 })]).toEqual([1, 0]);
    // The map moves the polygon by +45: now (50, 50) is inside and (5, 5) is not.
    const moved = selectInPolygons(wide, 2, [open], { stride: 3, map: (x, y) => [x + 45, y + 45] });
    expect([...moved]).toEqual([0, 1]);
  });

  it("selects among a million points (speed is for bench/, not a timed test)", () => {
    const rng = new Rng(1);
    const n = 1_000_000;
    const coords = new Float64Array(2 * n);
    for (let i = 0; i < 2 * n; i++) coords[i] = rng.next() * 1000;
    const ring = Array.from({ length: 200 }, (_, k) => {
      const a = (2 * Math.PI * k) / 200;
      return [500 + 300 * Math.cos(a), 500 + 300 * Math.sin(a)];
    });
    const mask = selectInPolygons(coords, n, [ring]);
    let c = 0;
    for (const b of mask) c += b;
    expect(c / n).toBeCloseTo((Math.PI * 0.09) / 1, 1);
    // Every 997th point against the circle the 200-gon approximates (exact away from its edge).
    for (let i = 0; i < n; i += 997) {
      const r = Math.hypot(coords[2 * i]! - 500, coords[2 * i + 1]! - 500);
      if (Math.abs(r - 300) > 0.1) expect(mask[i]).toBe(r < 300 ? 1 : 0);
    }
  });
});

describe("validatePolygons", () => {
  it("names the first malformed ring or vertex", () => {
    expect(() => validatePolygons([])).toThrow(/non-empty/);
    expect(() =>
      validatePolygons([
        [
          [0, 0],
          [1, 1],
        ],
      ]),
    ).toThrow(/polygons\[0\].*at least 3/);
    expect(() =>
      validatePolygons([
        [
          [0, 0],
          [1, 1],
          [1, "x"],
        ],
      ]),
    ).toThrow(/polygons\[0\]\[2\]/);
    expect(() =>
      validatePolygons([
        [
          [0, 0],
          [1, 1],
          [1, Number.POSITIVE_INFINITY],
        ],
      ]),
    ).toThrow(/finite/);
    expect(
      validatePolygons([
        [
          [0, 0],
          [1, 0],
          [0, 1],
        ],
      ]),
    ).toHaveLength(1);
  });
});
